/** acp-cancel/jsonrpc: a vscode-jsonrpc `MessageConnection` that speaks ACP (docs/vscode-jsonrpc.md). */
export {
  type AcpMessageConnection,
  type AcpMessageConnectionOptions,
  createAcpMessageConnection,
  currentJob,
} from "./acp-message-connection.js";
// The framing alone, for vscode-jsonrpc's own createMessageConnection.
export { NdjsonMessageReader, NdjsonMessageWriter } from "./ndjson-messages.js";
