/**
 * ABP through Playwright: each request is a `page.evaluate` into `window.abp` (a cancel one that runs
 * while the call's still waits). Progress does not cross `page.evaluate`: use postMessage or WebSocket.
 */
import type { Page } from "playwright-core";
import {
  type CallRequest,
  type CallResult,
  type CancelRequest,
  type CancelResult,
  type InitializeParams,
  type InitializeResult,
  LIMITS,
  messageSize,
  type RequestType,
  type ShutdownPayload,
} from "./app/protocol.js";
import { describeIssue, RESULT_SCHEMAS } from "./schemas.js";
import { AbpClosedError, AbpProtocolError, type AbpTransport, type TransportRequestOptions } from "./client.js";

export interface PlaywrightTransportOptions {
  maxMessageBytes?: number;
}

type AbpMethod = "initialize" | "call" | "cancel" | "shutdown";

/** What runs in the page: serialized by `page.evaluate`, so it must use nothing of this module. */
const invoke = ({ method, args }: { method: AbpMethod; args: unknown[] }): unknown => {
  const abp = (globalThis as { abp?: Record<AbpMethod, (...a: unknown[]) => unknown> }).abp;
  if (abp === undefined) throw new Error("window.abp is missing");
  return abp[method](...args);
};

export class PlaywrightTransport implements AbpTransport {
  readonly closed: Promise<AbpClosedError>;
  private readonly pending = new Set<(error: unknown) => void>();
  private closedWith: AbpClosedError | undefined = undefined;
  private markClosed!: (error: AbpClosedError) => void;
  private readonly onPageClose = () => this.fail("the page was closed");

  constructor(private readonly page: Page, private readonly options: PlaywrightTransportOptions = {}) {
    this.closed = new Promise((resolve) => {
      this.markClosed = resolve;
    });
    page.on("close", this.onPageClose);
  }

  async initialize(params: InitializeParams): Promise<InitializeResult> {
    const result = await this.evaluate("initialize", "initialize", [params]);
    return this.check("initialize", result) as InitializeResult;
  }

  async call(request: CallRequest, _onProgress?: unknown, options?: TransportRequestOptions): Promise<CallResult> {
    const { capability, params, callId } = request;
    const args = [capability, params ?? {}, { ...request.options, callId }];
    // The page would refuse it anyway; refusing here names the limit and sends nothing.
    const max = this.options.maxMessageBytes ?? LIMITS.maxMessageBytes;
    if (messageSize(args, max) > max) {
      throw new AbpProtocolError("MESSAGE_TOO_LARGE", `capabilities/call is over the size limit of ${max} bytes; nothing was sent`);
    }
    const result = await this.evaluate("capabilities/call", "call", args, options?.signal);
    return this.check("capabilities/call", result) as CallResult;
  }

  async cancel(request: CancelRequest, options?: TransportRequestOptions): Promise<CancelResult> {
    const args = request.reason === undefined ? [request.callId] : [request.callId, request.reason];
    const result = await this.evaluate("capabilities/cancel", "cancel", args, options?.signal);
    return this.check("capabilities/cancel", result) as CancelResult;
  }

  async shutdown(payload: ShutdownPayload): Promise<void> {
    await this.evaluate("shutdown", "shutdown", [payload]);
  }

  async close(): Promise<void> {
    this.fail("the agent closed the transport");
  }

  /** Runs `method` in the page; rejects at once if the page closes or navigates, or `signal` aborts (nothing stays here). */
  private evaluate(what: string, method: AbpMethod, args: unknown[], signal?: AbortSignal): Promise<unknown> {
    if (this.closedWith !== undefined) return Promise.reject(this.closedWith);
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const settle = (answer: () => void) => {
        if (!this.pending.delete(abandon)) return;
        signal?.removeEventListener("abort", forget);
        answer();
      };
      const abandon = (error: unknown) => settle(() => reject(error));
      const forget = () => abandon(signal?.reason);
      this.pending.add(abandon);
      signal?.addEventListener("abort", forget, { once: true });
      this.page.evaluate(invoke, { method, args }).then(
        (value) => settle(() => resolve(value)),
        (error: unknown) => abandon(this.explain(what, error)),
      );
    });
  }

  private check(what: RequestType, value: unknown): unknown {
    const max = this.options.maxMessageBytes ?? LIMITS.maxMessageBytes;
    if (messageSize(value, max) > max) {
      throw new AbpProtocolError("MESSAGE_TOO_LARGE", `${what} answer from the page is over the size limit of ${max} bytes`);
    }
    const parsed = RESULT_SCHEMAS[what].safeParse(value);
    if (!parsed.success) throw new AbpProtocolError("INVALID_MESSAGE", `invalid ${what} answer from the page: ${describeIssue(parsed.error)}`);
    return parsed.data;
  }

  private explain(what: string, error: unknown): Error {
    if (this.closedWith !== undefined) return this.closedWith;
    const message = error instanceof Error ? error.message : String(error);
    if (/window\.abp is missing/.test(message)) return new AbpProtocolError("NO_ABP", `${what}: the page has no window.abp`);
    if (/Execution context was destroyed|navigat/i.test(message)) {
      return new AbpClosedError(`the page navigated away (now at ${this.page.url()}) while ${what} was pending`);
    }
    if (/closed/i.test(message)) return new AbpClosedError(`the page was closed while ${what} was pending`);
    return new AbpProtocolError("EVALUATE_FAILED", `${what} failed in the page: ${message.split("\n")[0]}`);
  }

  private fail(reason: string): void {
    if (this.closedWith !== undefined) return;
    this.closedWith = new AbpClosedError(reason);
    this.page.off("close", this.onPageClose);
    for (const abandon of [...this.pending]) abandon(this.closedWith);
    this.pending.clear();
    this.markClosed(this.closedWith);
  }
}

export function playwrightTransport(page: Page, options: PlaywrightTransportOptions = {}): PlaywrightTransport {
  return new PlaywrightTransport(page, options);
}
