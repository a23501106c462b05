export { type CancelledErrorData, cancelledErrorData } from "./acp-shapes.js";
export * from "./escape-control.js";
export * from "./first-issue.js";
export * from "./http-body.js";
export * from "./jsonrpc.js";
export * from "./ndjson-reader.js";
export * from "./ndjson-writer.js";
