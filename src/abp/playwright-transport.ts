/**
 * ABP through Playwright: each request is a `page.evaluate` into `window.abp` (a cancel's runs while the call's
 * waits), whose answer the envelope channel measures and checks. Progress does not cross `page.evaluate`.
 */
import type { Page } from "playwright-core";
import type { CallRequest, CancelRequest, Envelope } from "./app/protocol.js";
import { errorMessage } from "../core/error-message.js";
import { AbpClosedError, AbpProtocolError, EnvelopeChannel, type EnvelopeChannelOptions } from "./envelope-channel.js";

export type PlaywrightTransportOptions = Pick<EnvelopeChannelOptions, "maxMessageBytes">;

type AbpMethod = "initialize" | "call" | "cancel" | "shutdown";

/** What runs in the page: serialized by `page.evaluate`, so it must use nothing of this module. */
const invoke = ({ method, args }: { method: AbpMethod; args: unknown[] }): unknown => {
  const abp = (globalThis as { abp?: Record<AbpMethod, (...a: unknown[]) => unknown> }).abp;
  if (abp === undefined) throw new Error("window.abp is missing");
  return abp[method](...args);
};

/** The `window.abp` call an envelope stands for. */
function evaluation({ type, payload }: Envelope): { method: AbpMethod; args: unknown[] } {
  if (type === "capabilities/call") {
    const { capability, callId, params, options } = payload as CallRequest;
    return { method: "call", args: [capability, params ?? {}, { ...options, callId }] };
  }
  if (type === "capabilities/cancel") {
    const { callId, reason } = payload as CancelRequest;
    return { method: "cancel", args: reason === undefined ? [callId] : [callId, reason] };
  }
  return { method: type as "initialize" | "shutdown", args: [payload] };
}

/**
 * A page closing rejects everything pending and closes the transport; navigating rejects only what is pending (a
 * later call is evaluated in the new document). A forgotten request's `evaluate` cannot be stopped, only not awaited.
 */
export function playwrightTransport(page: Page, options: PlaywrightTransportOptions = {}): EnvelopeChannel {
  const onPageClose = () => channel.fail("the page was closed");
  const explain = (what: string, error: unknown): Error => {
    const message = errorMessage(error);
    if (/window\.abp is missing/.test(message)) return new AbpProtocolError("NO_ABP", `${what}: the page has no window.abp`);
    if (/Execution context was destroyed|navigat/i.test(message)) {
      return new AbpClosedError(`the page navigated away (now at ${page.url()}) while ${what} was pending`);
    }
    if (/closed/i.test(message)) return new AbpClosedError(`the page was closed while ${what} was pending`);
    return new AbpProtocolError("EVALUATE_FAILED", `${what} failed in the page: ${message.split("\n")[0]}`);
  };
  const send = (envelope: Envelope): Promise<void> | undefined => {
    const evaluated = page.evaluate(invoke, evaluation(envelope));
    const { id, type } = envelope;
    // A one-way message (shutdown) is awaited by its sender; a request is answered through the channel.
    if (id === undefined) return evaluated.then(() => undefined, (error: unknown) => Promise.reject(explain(type, error)));
    evaluated.then((payload) => channel.answer(id, payload), (error: unknown) => channel.reject(id, explain(type, error)));
    return undefined;
  };
  const channel = new EnvelopeChannel(send, options, () => page.off("close", onPageClose), "the page");
  page.on("close", onPageClose);
  return channel;
}
