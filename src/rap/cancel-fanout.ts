import { cancelUrl } from "./base-url.js";
import { postNotice } from "./notice-post.js";
import type { RequestSigner } from "./signer.js";

/** A tool server the runtime is configured to use, named by its base URL. */
export interface ToolServer {
  readonly baseUrl: string;
  /** For events and logs; the base URL when absent. */
  readonly name?: string;
}

/** How one cancel POST to one server ended. */
export type NoticeResult = "ok" | "http-error" | "timeout" | "network-error" | "signer-error";

/** One event per POST, for logs and metrics: the runtime itself never acts on it. */
export interface CancelNoticeOutcome {
  readonly type: "cancel-notice";
  readonly server: string;
  readonly threadId: string;
  readonly toolCallId: string;
  readonly result: NoticeResult;
  /** The HTTP status, when one came back. */
  readonly status?: number;
  /** Why it failed: an error code (ECONNREFUSED) or message. */
  readonly detail?: string;
  /** From the POST leaving the queue to its outcome. */
  readonly ms: number;
}

export interface CancelFanoutOptions {
  readonly servers: readonly (string | ToolServer)[];
  /** The same signer the runtime uses for invocations. */
  readonly signer?: RequestSigner;
  /** Per POST, from leaving the queue to the end of the response. Default {@link DEFAULT_NOTICE_TIMEOUT_MS}. */
  readonly timeoutMs?: number;
  /** POSTs in flight at once, across all servers and calls. Default {@link DEFAULT_NOTICE_CONCURRENCY}. */
  readonly concurrency?: number;
  /**
   * A fetch with a custom dispatcher (mTLS, a proxy). By default notices go out through
   * node's own HTTP client, which costs far less CPU per POST than the global fetch.
   */
  readonly fetch?: typeof fetch;
  readonly onOutcome?: (outcome: CancelNoticeOutcome) => void;
}

/** A healthy server answers a notice in milliseconds; 5 s bounds a hung one without cutting off a slow network. */
export const DEFAULT_NOTICE_TIMEOUT_MS = 5_000;
/** Large enough that 100 servers get one cancel in a single wave, small enough to bound sockets in a thread-wide cancel. */
export const DEFAULT_NOTICE_CONCURRENCY = 128;

interface Notice {
  readonly server: ResolvedServer;
  readonly body: string;
  readonly threadId: string;
  readonly toolCallId: string;
}

interface ResolvedServer {
  readonly name: string;
  readonly url: URL;
}

/**
 * Sends each cancel notice to every configured tool server, concurrently and at most once:
 * RAP forbids retries and a failing server must not hold up the others. `notify` only
 * queues, so the caller's cancellation never waits on the network.
 */
export class CancelFanout {
  private readonly servers: readonly ResolvedServer[];
  private readonly timeoutMs: number;
  private readonly concurrency: number;
  private readonly queue: Notice[] = [];
  private head = 0;
  private running = 0;
  private waiters: (() => void)[] = [];

  constructor(private readonly options: CancelFanoutOptions) {
    this.servers = options.servers.map((s) => {
      const server = typeof s === "string" ? { baseUrl: s } : s;
      return { name: server.name ?? server.baseUrl, url: cancelUrl(server.baseUrl) };
    });
    this.timeoutMs = positive("timeoutMs", options.timeoutMs ?? DEFAULT_NOTICE_TIMEOUT_MS);
    this.concurrency = positive("concurrency", options.concurrency ?? DEFAULT_NOTICE_CONCURRENCY);
  }

  /** POSTs still queued or in flight. */
  get pending(): number {
    return this.queue.length - this.head + this.running;
  }

  /** Queues one POST per server for this call and returns at once. */
  notify(threadId: string, toolCallId: string): void {
    const body = JSON.stringify({ thread_id: threadId, tool_call_id: toolCallId });
    for (const server of this.servers) this.queue.push({ server, body, threadId, toolCallId });
    this.pump();
  }

  /** Resolves once every queued POST has its outcome (for tests, benchmarks and shutdown). */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private pump(): void {
    while (this.running < this.concurrency && this.head < this.queue.length) {
      const notice = this.queue[this.head++] as Notice;
      this.running++;
      void this.send(notice).finally(() => {
        this.running--;
        this.pump();
      });
    }
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    }
    if (this.pending === 0 && this.waiters.length > 0) {
      const waiters = this.waiters;
      this.waiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  private async send(notice: Notice): Promise<void> {
    const started = performance.now();
    const report = (result: NoticeResult, extra: { status?: number; detail?: string } = {}) =>
      this.options.onOutcome?.({
        type: "cancel-notice",
        server: notice.server.name,
        threadId: notice.threadId,
        toolCallId: notice.toolCallId,
        result,
        ...extra,
        ms: performance.now() - started,
      });
    const headers = new Headers({ "content-type": "application/json" });
    try {
      await this.options.signer?.({ url: notice.server.url, method: "POST", headers, body: notice.body });
    } catch (error) {
      report("signer-error", { detail: describe(error) });
      return;
    }
    try {
      const signal = AbortSignal.timeout(this.timeoutMs);
      const custom = this.options.fetch;
      const status =
        custom === undefined
          ? await postNotice(notice.server.url, headers, notice.body, signal)
          : await postWithFetch(custom, notice.server.url, headers, notice.body, signal);
      if (status === 200) report("ok", { status: 200 });
      else report("http-error", { status });
    } catch (error) {
      if (error instanceof Error && error.name === "TimeoutError") report("timeout", { detail: `no answer within ${this.timeoutMs} ms` });
      else report("network-error", { detail: describe(error) });
    }
  }
}

async function postWithFetch(post: typeof fetch, url: URL, headers: Headers, body: string, signal: AbortSignal): Promise<number> {
  // A redirect could carry the credentials elsewhere; its status is the outcome.
  const response = await post(url, { method: "POST", headers, body, redirect: "manual", signal });
  // The body means nothing (RAP), but reading it lets the connection be reused.
  await response.arrayBuffer();
  return response.status;
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return value;
}

/** The most specific thing an error says: node's code (ECONNREFUSED), which undici hides in `cause`. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const own = (error as { code?: unknown }).code;
  if (typeof own === "string") return own;
  const cause: unknown = error.cause;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === "string" ? code : cause.message;
  }
  return error.message;
}
