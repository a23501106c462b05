/**
 * acp-cancel/abp: ABP (Agentic Browser Protocol) calls with cancellation, on the shared job tree.
 *
 *   const client = new AbpClient(webSocketTransport(socket));   // or postMessageTransport, playwrightTransport
 *   await client.initialize();
 *   const result = await client.call("render", { size: 4096 }, { signal, timeout: 30_000 });
 *   // result: {success: true, data} | {success: false, cancelled: true, cancelledBy: "abort" | "timeout" | …}
 *
 * Browser-safe: nothing here imports Node (the Playwright transport only imports its types).
 * The page side is `acp-cancel/abp/app`.
 */
export * from "./app/protocol.js";
export {
  type AbpCall,
  type AbpCallOptions,
  type AbpCallResult,
  AbpClient,
  type AbpClientOptions,
  type CancelCause,
} from "./client.js";
export { EnvelopeChannel, type EnvelopeChannelOptions } from "./envelope-channel.js";
export { AbpClosedError, AbpProtocolError } from "./errors.js";
export { playwrightTransport, PlaywrightTransport, type PlaywrightTransportOptions } from "./playwright-transport.js";
export {
  postMessageTransport,
  type PostMessageTarget,
  type PostMessageTransportOptions,
  type WorkerTarget,
} from "./post-message-transport.js";
export * from "./schemas.js";
export type { AbpTransport } from "./transport.js";
export { type WebSocketLike, webSocketTransport } from "./websocket-transport.js";
