import type { OutgoingHttpHeaders } from "node:http";
import { GraceTimers } from "../core/grace-timers.js";
import { guarded, reportErrors } from "../core/report-errors.js";
import { type NoticeTarget, noticeTarget, postNotice, postWithFetch } from "./http-post.js";
import type { RequestSigner } from "./signer.js";

/** A tool server the runtime is configured to use, named by its base URL. */
export interface ToolServer {
  readonly baseUrl: string;
  /** For events and logs; the base URL when absent. */
  readonly name?: string;
}

type NoticeResult = "ok" | "http-error" | "timeout" | "network-error" | "signer-error";

/** One event per POST, for logs and metrics: the runtime itself never acts on it. */
export interface CancelNoticeOutcome {
  readonly type: "cancel-notice";
  readonly server: string;
  readonly threadId: string;
  readonly toolCallId: string;
  readonly result: NoticeResult;
  readonly status?: number;
  /** Why it failed: an error code (ECONNREFUSED) or message. */
  readonly detail?: string;
  /** From the POST leaving the queue to its outcome. */
  readonly ms: number;
}

export interface CancelFanoutOptions {
  readonly servers: readonly (string | ToolServer)[];
  readonly signer?: RequestSigner;
  /** Per POST, from leaving the queue to the end of the response. Default {@link DEFAULT_NOTICE_TIMEOUT_MS}. */
  readonly timeoutMs?: number;
  /** POSTs in flight at once, across all servers and calls. Default {@link DEFAULT_NOTICE_CONCURRENCY}. */
  readonly concurrency?: number;
  /** A fetch with a custom dispatcher (mTLS, a proxy); by default node's own HTTP client, far cheaper per POST. */
  readonly fetch?: typeof fetch;
  readonly onOutcome?: (outcome: CancelNoticeOutcome) => void;
}

/** Why these: docs/decisions.md, "Why the RAP defaults are what they are". */
export const DEFAULT_NOTICE_TIMEOUT_MS = 5_000;
export const DEFAULT_NOTICE_CONCURRENCY = 128;

/** POSTs started per turn of the event loop: the first ones leave while the rest are built. */
const SEND_BATCH = 8;

interface ResolvedServer {
  readonly name: string;
  readonly target: NoticeTarget;
}

/** One POST of a notice to one server; `ended` once its outcome is reported (answer, error or deadline, the first). */
interface Delivery {
  readonly server: ResolvedServer;
  readonly body: string;
  /** Node's headers, shared by every POST of this notice, when neither a signer nor a fetch needs its own Headers. */
  readonly headers: OutgoingHttpHeaders | undefined;
  readonly trace: Readonly<Record<string, string>> | undefined;
  readonly threadId: string;
  readonly toolCallId: string;
  started: number;
  /** Ends the POST on its way with the deadline's error. */
  abort: ((reason: Error) => void) | undefined;
  ended: boolean;
}

/**
 * Sends each cancel notice to every tool server, concurrently and at most once (RAP forbids retries).
 * `notify` only queues, so a cancel never waits on the network; the POSTs start a few per turn.
 */
export class CancelFanout {
  private readonly servers: readonly ResolvedServer[];
  private readonly timeoutMs: number;
  private readonly concurrency: number;
  private readonly queue: (Delivery | undefined)[] = [];
  private head = 0;
  private running = 0;
  private scheduled = false;
  private readonly waiters: (() => void)[] = [];
  /** Every POST has the same time limit: one timer for all of them, not one per POST. */
  private readonly deadlines: GraceTimers<Delivery>;

  constructor(private readonly options: CancelFanoutOptions) {
    this.servers = options.servers.map((s) => {
      const server = typeof s === "string" ? { baseUrl: s } : s;
      return { name: server.name ?? server.baseUrl, target: noticeTarget(server.baseUrl) };
    });
    this.timeoutMs = positive("timeoutMs", options.timeoutMs ?? DEFAULT_NOTICE_TIMEOUT_MS);
    this.concurrency = positive("concurrency", options.concurrency ?? DEFAULT_NOTICE_CONCURRENCY);
    this.deadlines = new GraceTimers(this.timeoutMs, (delivery) => this.expire(delivery));
  }

  get pending(): number {
    return this.queue.length - this.head + this.running;
  }

  notify(threadId: string, toolCallId: string, trace?: Readonly<Record<string, string>>): void {
    const body = JSON.stringify({ thread_id: threadId, tool_call_id: toolCallId });
    const { signer, fetch: custom } = this.options;
    const headers =
      signer === undefined && custom === undefined
        ? { ...trace, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }
        : undefined;
    for (const server of this.servers) {
      this.queue.push({ server, body, headers, trace, threadId, toolCallId, started: 0, abort: undefined, ended: false });
    }
    this.schedule();
  }

  /** Resolves once every queued POST has its outcome (for tests, benchmarks and shutdown). */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.head === this.queue.length || this.running >= this.concurrency) return;
    this.scheduled = true;
    setImmediate(this.pumpNow);
  }

  private readonly pumpNow = (): void => {
    this.scheduled = false;
    for (let batch = 0; batch < SEND_BATCH && this.running < this.concurrency && this.head < this.queue.length; batch++) {
      const delivery = this.queue[this.head] as Delivery;
      this.queue[this.head++] = undefined;
      this.send(delivery);
    }
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    }
    this.schedule();
  };

  private wakeWaiters(): void {
    if (this.pending === 0) for (const resolve of this.waiters.splice(0)) resolve();
  }

  private send(delivery: Delivery): void {
    delivery.started = performance.now();
    this.running++;
    this.deadlines.start(delivery);
    if (delivery.headers !== undefined) return this.postNode(delivery, delivery.headers);
    const headers = new Headers({ ...delivery.trace, "content-type": "application/json" });
    const signer = this.options.signer;
    if (signer === undefined) return this.post(delivery, headers);
    // A signer that throws, as one that rejects, costs only this POST.
    new Promise<void>((resolve) => resolve(signer({ url: delivery.server.target.url, method: "POST", headers, body: delivery.body }))).then(
      () => this.post(delivery, headers),
      (error: unknown) => this.end(delivery, "signer-error", { detail: describe(error) }),
    );
  }

  /** A POST whose headers a signer may have set, through the configured fetch or node's client. */
  private post(delivery: Delivery, headers: Headers): void {
    if (delivery.ended) return; // its deadline passed while the signer ran
    const { body, server } = delivery;
    const custom = this.options.fetch;
    if (custom === undefined) return this.postNode(delivery, outgoingHeaders(headers, body));
    const controller = new AbortController();
    delivery.abort = (reason) => controller.abort(reason);
    postWithFetch(custom, server.target.url, { headers, body, signal: controller.signal }).then(
      (status) => this.answered(delivery, undefined, status),
      (error: unknown) => this.answered(delivery, error, 0),
    );
  }

  private postNode(delivery: Delivery, headers: OutgoingHttpHeaders): void {
    try {
      const { server, body } = delivery;
      const request = postNotice(server.target, headers, body, (error, status) => this.answered(delivery, error, status));
      delivery.abort = (reason) => request.destroy(reason);
    } catch (error) {
      // A header value node refuses (from a signer) throws before anything is sent.
      this.answered(delivery, error, 0);
    }
  }

  /** The POST's answer, or the error that ended it (an error after the deadline comes too late to count). */
  private answered(delivery: Delivery, error: unknown, status: number): void {
    if (error === undefined) this.end(delivery, status === 200 ? "ok" : "http-error", { status });
    else this.end(delivery, "network-error", { detail: describe(error) });
  }

  private expire(delivery: Delivery): void {
    if (delivery.ended) return;
    const reason = new DOMException(`no answer within ${this.timeoutMs} ms`, "TimeoutError");
    this.end(delivery, "timeout", { detail: reason.message });
    delivery.abort?.(reason);
  }

  /** Reports the POST's outcome, once: whatever comes after is ignored. */
  private end(delivery: Delivery, result: NoticeResult, extra: { status?: number; detail?: string }): void {
    if (delivery.ended) return;
    delivery.ended = true;
    this.deadlines.stop(delivery);
    this.running--;
    this.schedule();
    const { server, threadId, toolCallId, started } = delivery;
    const outcome: CancelNoticeOutcome = {
      type: "cancel-notice", server: server.name, threadId, toolCallId, result, ...extra, ms: performance.now() - started,
    };
    // The listener's bug, not a failed POST: it surfaces, and the fan-out's state stays whole.
    const errors: unknown[] = [];
    guarded(() => this.options.onOutcome?.(outcome), errors);
    reportErrors(errors, "in the cancel-notice listener");
    this.wakeWaiters();
  }
}

/** A signer's Headers as node's outgoing headers, with the body's length. */
function outgoingHeaders(headers: Headers, body: string): OutgoingHttpHeaders {
  const outgoing: OutgoingHttpHeaders = { "content-length": String(Buffer.byteLength(body)) };
  headers.forEach((value, name) => {
    outgoing[name] = value;
  });
  return outgoing;
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return value;
}

/** The most specific thing an error says: node's code (ECONNREFUSED), which undici hides in `cause`. */
function describe(error: unknown, inCause = false): string {
  if (!(error instanceof Error)) return String(error);
  const { code } = error as { code?: unknown };
  if (typeof code === "string") return code;
  return !inCause && error.cause instanceof Error ? describe(error.cause, true) : error.message;
}
