export {
  type AcpMessageConnection,
  type AcpMessageConnectionOptions,
  createAcpMessageConnection,
  currentJob,
} from "./acp-message-connection.js";
export { ACP_CANCEL_METHOD, LSP_CANCEL_METHOD } from "./cancel-methods.js";
export { NdjsonMessageReader, type NdjsonMessageReaderOptions } from "./ndjson-message-reader.js";
export { NdjsonMessageWriter } from "./ndjson-message-writer.js";
