export { type CancelledErrorData, cancelledErrorData } from "./acp-shapes.js";
export { escapeControl } from "./escape-control.js";
export * from "./jsonrpc.js";
export {
  DEFAULT_MAX_LINE_BYTES,
  describeProblem,
  type FramingProblem,
  framingErrorResponse,
  jsonLineSplitter,
  parseJsonLine,
  readNdjson,
} from "./ndjson-reader.js";
export { NdjsonWriter } from "./ndjson-writer.js";
