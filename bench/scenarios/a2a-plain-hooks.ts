/**
 * The A2A scenario's controls: hooks that make the same guardian round trip as acp-cancel's AOS
 * hooks and nothing else (no question built, no answer read, no task looked up). A guarded
 * cancel is compared with the cancel behind these, so what it is charged is acp-cancel's own
 * code, not what waiting on another process costs the rest of the cancel on this machine.
 */
import type { A2ARequestHandler } from "@a2a-js/sdk/server";
import type { CallInterceptor } from "@a2a-js/sdk/client";
import { overriding } from "../../src/a2a/overriding.js";

/** A bare guardian round trip, timed: `spent` gets its milliseconds. */
export type TimedCall = () => Promise<void>;

export function timedCall(call: () => Promise<void>, spent: (ms: number) => void): TimedCall {
  return async () => {
    const started = performance.now();
    await call();
    spent(performance.now() - started);
  };
}

/** The client-side control: before `cancelTask` leaves, one bare round trip. */
export function plainCancelInterceptor(call: TimedCall): CallInterceptor {
  return {
    async before(args) {
      if (args.input?.method === "cancelTask") await call();
    },
    async after() {},
  };
}

/** The server-side control: before the executor hears of a cancel, one bare round trip. */
export function plainCancelHandler(handler: A2ARequestHandler, call: TimedCall): A2ARequestHandler {
  const cancelTask: A2ARequestHandler["cancelTask"] = async (params, context) => {
    await call();
    return handler.cancelTask(params, context);
  };
  return overriding(handler, "cancelTask", cancelTask);
}
