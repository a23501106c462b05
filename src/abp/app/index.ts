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
  const check = (type: string, payload: unknown) => checkAgentMessage({ type, id: "evaluate", timestamp: 0, payload });
  const abp: WindowAbp = {
    initialize: (params) => {
      const checked = check("initialize", params);
      if (!checked.ok) throw new TypeError(checked.message);
      return app.initialize(params);
    },
    call: (capability, params, options = {}) => {
      const { callId, ...rest } = options;
      const checked = check("capabilities/call", { capability, callId: callId ?? "local", params, options: rest });
      if (!checked.ok) {
        const error = { code: checked.code, message: checked.message, retryable: false };
        return Promise.resolve<CallResult>({ success: false, error });
      }
      return app.call(capability, params, options);
    },
    cancel: (callId, reason) => {
      const checked = check("capabilities/cancel", reason === undefined ? { callId } : { callId, reason });
      if (!checked.ok) {
        const echoed = String(callId).slice(0, 200) || "(invalid)";
        const error = { code: checked.code, message: checked.message };
        return { callId: echoed, cancelled: false, error } satisfies CancelResult;
      }
      return app.cancel(callId, reason);
    },
    shutdown: (params) => app.shutdown(params),
    stats: () => app.stats(),
  };
  Object.defineProperty(target, "abp", { value: Object.freeze(abp), configurable: true });
  return abp;
}
