/**
 * acp-cancel/abp: ABP (Agentic Browser Protocol) calls with cancellation, on the shared job tree.
 *
 *   const client = new AbpClient(webSocketTransport(socket));   // or postMessageTransport, playwrightTransport
 *   await client.initialize();
 *   const result = await client.call("render", { size: 4096 }, { signal, timeout: 30_000 });
 *   // result: {success: true, data} | {success: false, cancelled: true, cancelledBy: "abort" | "timeout" | …}
 *
 * Browser-safe: nothing here imports Node (the Playwright transport only imports its types).
 * The page side is `acp-cancel/abp/app`. See docs/abp.md.
 */
export type { CancelResult } from "./schemas.js";
export { type AbpCallOptions, type AbpCallResult, AbpClient, type AbpClientOptions, type CancelCause } from "./client.js";
export { AbpClosedError, AbpProtocolError, type AbpTransport } from "./envelope-channel.js";
export { postMessageTransport, type PostMessageTransportOptions, type WebSocketLike, webSocketTransport } from "./envelope-channel.js";
export { playwrightTransport, type PlaywrightTransportOptions } from "./playwright-transport.js";
