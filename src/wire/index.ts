export { type CancelledErrorData, cancelledErrorData } from "./cancelled-error.js";
export { escapeControl } from "./escape-control.js";
export { ErrorCode, type ErrorCodeValue } from "./error-codes.js";
export * from "./jsonrpc.js";
export { type LineSink, LineSplitter } from "./line-splitter.js";
export {
  DEFAULT_MAX_LINE_BYTES,
  describeProblem,
  type FramingProblem,
  framingErrorResponse,
  jsonLineSplitter,
  type NdjsonReaderHandlers,
  type NdjsonReaderOptions,
  readNdjson,
} from "./ndjson-reader.js";
export { NdjsonWriter } from "./ndjson-writer.js";
export { parseJsonLine } from "./parse-json-line.js";
