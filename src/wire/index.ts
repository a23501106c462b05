export { type CancelledErrorData, cancelledErrorData } from "./cancelled-error.js";
export { escapeControl } from "./escape-control.js";
export { ErrorCode } from "./error-codes.js";
export * from "./jsonrpc.js";
export {
  DEFAULT_MAX_LINE_BYTES,
  describeProblem,
  type FramingProblem,
  framingErrorResponse,
  jsonLineSplitter,
  readNdjson,
} from "./ndjson-reader.js";
export { NdjsonWriter } from "./ndjson-writer.js";
export { parseJsonLine } from "./parse-json-line.js";
