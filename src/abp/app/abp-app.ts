/** The app side of ABP over an app's capability handlers, per the spec's edge-case table. Runs in the page. */
import type { AbpError, CallResult, CancelResult, InitializeResult, ProgressPayload } from "../schemas.js";
import {
  CANCEL_REASONS_TEXT,
  type CallOptions,
  ERROR_CODES,
  type InitializeParams,
  PROTOCOL_VERSION,
  type ShutdownPayload,
  TRACE_KEYS,
} from "./protocol.js";

export interface CapabilityContext {
  /** Aborts when the call is cancelled, times out, or the session shuts down. */
  signal: AbortSignal;
  callId: string;
  /** Reports progress (sent only when the agent gave a progressToken). */
  progress(progress: number, total?: number, message?: string): void;
  /** The W3C trace context the agent sent with the call (empty if none): `propagation.extract(ROOT_CONTEXT, context.trace)`. */
  readonly trace: Readonly<Record<string, string>>;
}

export type CapabilityHandler = (params: Record<string, unknown>, context: CapabilityContext) => unknown;

export interface AbpAppOptions {
  app: { id: string; name: string; version: string };
  capabilities: Record<string, CapabilityHandler>;
  /** Calls running at once; the rest wait in order (a cancel while waiting skips them). Default: unlimited. */
  maxConcurrent?: number;
  /** How many finished or cancelled call ids to remember for later cancels. Default 1024. */
  rememberIds?: number;
  features?: Record<string, unknown>;
}

/** The call options `window.abp.call` accepts (an AbortSignal cannot cross into the page). */
type AppCallOptions = CallOptions & { callId?: string };

/** What the page holds right now: the leak counters. */
export interface AppStats {
  /** Calls with a record (waiting, running, or cancelled but whose handler has not returned). */
  records: number;
  queued: number;
  running: number;
  /** AbortControllers handed out and not yet released. */
  controllers: number;
  /** Timeout timers armed and not yet cleared. */
  timers: number;
  remembered: number;
  /** Handlers ever started, and calls skipped because they were cancelled before starting. */
  started: number;
  skipped: number;
}

interface CallRecord {
  callId: string;
  handler: CapabilityHandler;
  params: Record<string, unknown>;
  options: AppCallOptions;
  onProgress: ((payload: ProgressPayload) => void) | undefined;
  state: "queued" | "running" | "cancelled";
  answer: (result: CallResult) => void;
  controller: AbortController | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
}

const CANCELLED: CallResult = Object.freeze({ success: false, cancelled: true });

export class AbpApp {
  private sessionId: string | undefined = undefined;
  private readonly records = new Map<string, CallRecord>();
  private readonly queue: CallRecord[] = [];
  /** Finished and cancelled call ids, so a later cancel still gets its answer; past `rememberIds`, the oldest goes. */
  private readonly remembered = new Map<string, "completed" | "cancelled">();
  private running = 0;
  private controllers = 0;
  private timers = 0;
  private started = 0;
  private skipped = 0;
  private sessions = 0;
  private localIds = 0;
  private pumping = false;

  constructor(private readonly options: AbpAppOptions) {}

  initialize(params: InitializeParams): InitializeResult {
    this.sessionId ??= `${this.options.app.id}-session-${++this.sessions}`;
    const names = params.requestedCapabilities ?? Object.keys(this.options.capabilities);
    return {
      sessionId: this.sessionId,
      protocolVersion: PROTOCOL_VERSION,
      app: { ...this.options.app },
      capabilities: names.map((name) => ({ name, available: Object.hasOwn(this.options.capabilities, name) })),
      features: { cancellation: true, ...this.options.features },
    };
  }

  /** A call from the page itself or through `window.abp` (progress does not cross `page.evaluate`). */
  call(capability: string, params: Record<string, unknown> = {}, options: AppCallOptions = {}): Promise<CallResult> {
    return new Promise((answer) => this.dispatch(capability, params, options, undefined, answer));
  }

  /** The same call, answered once through `answer`: at once for a plain value (quick capabilities answer in the same task). */
  dispatch(
    capability: string,
    params: Record<string, unknown>,
    options: AppCallOptions,
    onProgress: ((payload: ProgressPayload) => void) | undefined,
    answer: (result: CallResult) => void,
  ): void {
    if (this.sessionId === undefined) return answer(failure(notInitialized()));
    const handler = Object.hasOwn(this.options.capabilities, capability) ? this.options.capabilities[capability] : undefined;
    if (handler === undefined) return answer(failure(refusal(ERROR_CODES.capabilityNotFound, `no capability named "${capability}"`)));
    const callId = options.callId ?? `local-${++this.localIds}`;
    if (this.records.has(callId) || this.remembered.has(callId)) {
      return answer(failure(refusal(ERROR_CODES.duplicateCallId, `callId "${callId}" was already used`)));
    }
    const record: CallRecord = {
      callId, handler, params, options, onProgress, state: "queued", answer, controller: undefined, timer: undefined,
    };
    this.records.set(callId, record);
    if (options.timeout !== undefined) {
      this.timers++;
      // A timeout ends the call exactly as a cancel does: the app cannot tell them apart (abort clears the timer).
      record.timer = setTimeout(() => this.abort(record, "timeout"), options.timeout);
    }
    if (this.running < (this.options.maxConcurrent ?? Number.POSITIVE_INFINITY)) this.start(record);
    else this.queue.push(record);
  }

  cancel(callId: string, reason?: string): CancelResult {
    if (this.sessionId === undefined) return { callId, cancelled: false, error: notInitialized() };
    const record = this.records.get(callId);
    if (record !== undefined) {
      this.abort(record, reason ?? "cancelled by the agent");
      return { callId, cancelled: true };
    }
    const ending = this.remembered.get(callId);
    if (ending === "cancelled") return { callId, cancelled: true };
    const { alreadyCompleted, notFound } = CANCEL_REASONS_TEXT;
    return { callId, cancelled: false, reason: ending === "completed" ? alreadyCompleted : notFound };
  }

  /** Ends the session: every call is cancelled (and answered so), and remembered ids are forgotten. */
  shutdown(_params: ShutdownPayload = {}): void {
    if (this.sessionId === undefined) return;
    for (const record of [...this.records.values()]) this.abort(record, "session shut down");
    this.sessionId = undefined;
    this.remembered.clear();
  }

  stats(): AppStats {
    return {
      records: this.records.size, queued: this.queue.length, running: this.running, controllers: this.controllers,
      timers: this.timers, remembered: this.remembered.size, started: this.started, skipped: this.skipped,
    };
  }

  private start(record: CallRecord): void {
    record.state = "running";
    this.running++;
    this.started++;
    const succeed = (data: unknown) => this.finish(record, data === undefined ? { success: true } : { success: true, data });
    const fail = (error: unknown) =>
      this.finish(record, failure(refusal(ERROR_CODES.handlerFailed, error instanceof Error ? error.message : String(error))));
    let outcome: unknown;
    try {
      outcome = record.handler(record.params, this.contextOf(record));
    } catch (error) {
      return fail(error);
    }
    // A plain value needs no turn of the event loop: answer now.
    if (isThenable(outcome)) Promise.resolve(outcome).then(succeed, fail);
    else succeed(outcome);
  }

  /** What a handler gets; its fields survive destructuring, and its signal is made only when asked for. */
  private contextOf(record: CallRecord): CapabilityContext {
    const signalOf = () => {
      if (record.controller === undefined) {
        record.controller = new AbortController();
        this.controllers++;
        if (record.state === "cancelled") record.controller.abort(new DOMException("cancelled", "AbortError"));
      }
      return record.controller.signal;
    };
    return {
      callId: record.callId,
      progress: (progress, total, message) => {
        const { progressToken } = record.options;
        if (progressToken === undefined || record.state !== "running") return;
        record.onProgress?.({
          progressToken,
          progress,
          ...(total === undefined ? {} : { total }),
          ...(message === undefined ? {} : { message }),
        });
      },
      get signal() {
        return signalOf();
      },
      get trace() {
        const meta: Record<string, unknown> = record.options._meta ?? {};
        const trace: Record<string, string> = {};
        for (const key of TRACE_KEYS) if (typeof meta[key] === "string") trace[key] = meta[key];
        return trace;
      },
    };
  }

  /** The handler has returned: answer (unless it was cancelled meanwhile) and free its record. */
  private finish(record: CallRecord, result: CallResult): void {
    this.running--;
    if (record.controller !== undefined) {
      record.controller = undefined;
      this.controllers--;
    }
    this.records.delete(record.callId);
    if (record.state === "running") {
      this.clearTimer(record);
      this.remember(record.callId, "completed");
      record.answer(result);
    }
    this.pump();
  }

  /** Cancel or timeout: a waiting call is skipped, a running one aborted; either answers cancelled at once. */
  private abort(record: CallRecord, reason: string): void {
    if (record.state === "cancelled") return;
    this.clearTimer(record);
    if (record.state === "queued") {
      this.queue.splice(this.queue.indexOf(record), 1);
      this.records.delete(record.callId);
      this.skipped++;
    }
    record.state = "cancelled";
    this.remember(record.callId, "cancelled");
    // Answered in a microtask, after what the caller answers now: a cancel's acknowledgement goes
    // out before the call's own answer, and a page going away says "closing" first.
    const { answer } = record;
    queueMicrotask(() => answer(CANCELLED));
    // No partial data: whatever the handler returns from now on is dropped in finish().
    record.controller?.abort(new DOMException(reason, "AbortError"));
  }

  private pump(): void {
    // A quick handler finishes inside start(), which pumps again: the outer loop carries on, so the stack stays flat.
    if (this.pumping) return;
    this.pumping = true;
    try {
      const limit = this.options.maxConcurrent ?? Number.POSITIVE_INFINITY;
      while (this.running < limit) {
        const next = this.queue.shift();
        if (next === undefined) return;
        this.start(next);
      }
    } finally {
      this.pumping = false;
    }
  }

  private remember(callId: string, ending: "completed" | "cancelled"): void {
    const capacity = this.options.rememberIds ?? 1024;
    if (capacity <= 0) return;
    this.remembered.delete(callId);
    this.remembered.set(callId, ending);
    if (this.remembered.size > capacity) this.remembered.delete(this.remembered.keys().next().value as string);
  }

  private clearTimer(record: CallRecord): void {
    if (record.timer === undefined) return;
    clearTimeout(record.timer);
    record.timer = undefined;
    this.timers--;
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { then?: unknown }).then === "function";
}

function failure(error: AbpError): CallResult {
  return { success: false, error };
}

function refusal(code: string, message: string): AbpError {
  return { code, message, retryable: false };
}

function notInitialized(): AbpError {
  return refusal(ERROR_CODES.notInitialized, "no active session: call initialize first");
}
