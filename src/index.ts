/**
 * acp-cancel: cancellation that actually stops work in the Agent Client Protocol.
 *
 * Most apps need one line: `withCancellation(acp.agent(...))` or `withCancellation(acp.client())`.
 */
export * from "./acp/index.js";
export * from "./core/index.js";
export * from "./wire/index.js";
