/**
 * acp-cancel/abp/app: the page side of ABP. Plain ESM with no dependencies, served as it is.
 *
 *   const app = new AbpApp({ app: {id, name, version}, capabilities: { render: async (params, {signal}) => … } });
 *   exposeAbp(app);                                        // window.abp, for Playwright / Puppeteer agents
 *   servePostMessage(app, { allowedOrigins: ["https://agent.example"] });
 *   await serveWebSocket(app, "ws://127.0.0.1:8080/abp");
 *
 * See docs/abp.md.
 */
import { AbpApp } from "./abp-app.js";
import type { CallResult, CancelResult } from "../schemas.js";
import { checkAgentMessage } from "./validate.js";

export {
  AbpApp,
  type AbpAppOptions,
  type AppStats,
  type CapabilityContext,
  type CapabilityHandler,
} from "./abp-app.js";
export { type PostMessageHostOptions, type Rejection, servePostMessage, type ServedApp } from "./envelope-host.js";
export { serveWebSocket, type WebSocketHostOptions } from "./envelope-host.js";
export { LIMITS } from "./protocol.js";

/** What `window.abp` offers: the spec's API, with `callId` in the call options. */
export type WindowAbp = Pick<AbpApp, "initialize" | "call" | "cancel" | "shutdown" | "stats">;

/** Installs `window.abp` (`globalThis.abp` in a worker); its arguments are checked as envelopes are (untrusted too). */
export function exposeAbp(app: AbpApp, target: object = globalThis): WindowAbp {
  const refusal = (type: string, payload: unknown) => {
    const checked = checkAgentMessage({ type, id: "evaluate", timestamp: 0, payload });
    return checked.ok ? undefined : { code: checked.code, message: checked.message };
  };
  const abp: WindowAbp = {
    initialize: (params) => {
      const refused = refusal("initialize", params);
      if (refused !== undefined) throw new TypeError(refused.message);
      return app.initialize(params);
    },
    call: (capability, params, options = {}) => {
      const { callId, ...rest } = options;
      const refused = refusal("capabilities/call", { capability, callId: callId ?? "local", params, options: rest });
      if (refused === undefined) return app.call(capability, params, options);
      return Promise.resolve<CallResult>({ success: false, error: { ...refused, retryable: false } });
    },
    cancel: (callId, reason) => {
      const refused = refusal("capabilities/cancel", reason === undefined ? { callId } : { callId, reason });
      if (refused === undefined) return app.cancel(callId, reason);
      return { callId: String(callId).slice(0, 200) || "(invalid)", cancelled: false, error: refused } satisfies CancelResult;
    },
    shutdown: (params) => app.shutdown(params),
    stats: () => app.stats(),
  };
  Object.defineProperty(target, "abp", { value: Object.freeze(abp), configurable: true });
  return abp;
}
