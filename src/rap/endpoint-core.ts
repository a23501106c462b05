import type { CallRegistry, NoticeEffect } from "./call-registry.js";
import { cancelNoticeSchema, noticeProblem } from "./ids.js";
import { DEFAULT_RATE_LIMIT, type RateLimit, RateLimiter } from "./rate-limiter.js";

/** What the endpoint sees of a request before reading its body, whatever the server framework. */
export interface NoticeRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: { get(name: string): string | null };
  /** The peer's address, when the server knows it (the default rate-limit key). */
  readonly remoteAddress: string | undefined;
}

/** What the server's verify function gets: the request and its exact body (SigV4 signs its hash). */
export interface AuthRequest extends NoticeRequest {
  readonly body: string;
}

export interface CancelEndpointOptions {
  /** The server's own calls; a notice cancels through it. */
  readonly registry: CallRegistry;
  /**
   * The same check the server applies to invocations (RAP: "exactly like invocations").
   * False (or a rejected promise) answers 401 and changes nothing.
   */
  readonly authenticate: (request: AuthRequest) => boolean | Promise<boolean>;
  /** Largest body accepted, in bytes. Default {@link DEFAULT_BODY_LIMIT}. */
  readonly bodyLimit?: number;
  /** Time allowed to receive the whole body. Default {@link DEFAULT_BODY_TIMEOUT_MS}. */
  readonly bodyTimeoutMs?: number;
  /** Per-client token bucket, or false to leave rate limiting to a proxy in front. */
  readonly rateLimit?: RateLimit | false;
  /** The rate-limit key; the peer's address by default. */
  readonly clientKey?: (request: NoticeRequest) => string;
  /** One event per request, for logs and metrics (the response itself says nothing). */
  readonly onNotice?: (event: NoticeEvent) => void;
}

/** Two ids of at most 256 characters need about 600 bytes of JSON; 4 KiB leaves room for whitespace. */
export const DEFAULT_BODY_LIMIT = 4096;
/** A notice is one small packet; a body still incomplete after 5 s is a slow-body attack or a broken client. */
export const DEFAULT_BODY_TIMEOUT_MS = 5_000;

export type BodyRead =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly problem: "too-large" | "timeout" | "not-utf8" | "aborted" };

/** Reads the whole body as UTF-8 text, stopping at `limit` bytes or after `timeoutMs`. */
export type BodyReader = (limit: number, timeoutMs: number) => Promise<BodyRead>;

/** The answer, for an adapter to write. `close`: the connection must not be reused (unread body). */
export interface Answer {
  readonly status: number;
  readonly message: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly close: boolean;
}

export interface NoticeEvent {
  readonly status: number;
  readonly client: string;
  /** For a 200: what the notice did. */
  readonly effect?: NoticeEffect;
  readonly threadId?: string;
  readonly toolCallId?: string;
  /** For any other status: what was wrong. */
  readonly problem?: string;
}

const OK: Answer = { status: 200, message: "", headers: {}, close: false };

/**
 * The checks of `POST /cancel_tool_call`, in order, independent of the server framework.
 * The first check that fails decides the status; only a request that passes every one
 * reaches the registry. See docs/rap.md for the status table.
 */
export class CancelEndpointCore {
  private readonly limiter: RateLimiter | undefined;
  private readonly bodyLimit: number;
  private readonly bodyTimeoutMs: number;

  constructor(private readonly options: CancelEndpointOptions) {
    const rate = options.rateLimit ?? DEFAULT_RATE_LIMIT;
    this.limiter = rate === false ? undefined : new RateLimiter(rate);
    this.bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
    this.bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  }

  get bodyLimitBytes(): number {
    return this.bodyLimit;
  }

  get bodyTimeout(): number {
    return this.bodyTimeoutMs;
  }

  /** All the checks, for a server that hands over a body reader (the Web handler). */
  async answer(request: NoticeRequest, readBody: BodyReader): Promise<Answer> {
    return this.precheck(request) ?? this.complete(request, await readBody(this.bodyLimit, this.bodyTimeoutMs));
  }

  /** The checks that need no body: method, rate, content type, declared length. Undefined: read the body. */
  precheck(request: NoticeRequest): Answer | undefined {
    if (request.method !== "POST") return this.reject(request, 405, `method ${request.method} not allowed: use POST`, { allow: "POST" });
    if (this.limiter !== undefined) {
      const client = this.client(request);
      if (!this.limiter.take(client)) {
        return this.reject(request, 429, "too many cancel notices", { "retry-after": String(this.limiter.retryAfter(client)) });
      }
    }
    const type = request.headers.get("content-type");
    if (!isJson(type)) {
      return this.reject(request, 415, `content-type must be application/json, got ${type === null ? "none" : JSON.stringify(type.slice(0, 64))}`);
    }
    const declared = request.headers.get("content-length");
    if (declared !== null && Number(declared) > this.bodyLimit) return this.reject(request, 413, `body over ${this.bodyLimit} bytes`, {}, true);
    return undefined;
  }

  /**
   * The checks on the body, then the registry. Synchronous unless the verify function
   * returns a promise: the common case costs no promise at all.
   */
  complete(request: NoticeRequest, body: BodyRead): Answer | Promise<Answer> {
    if (!body.ok) {
      switch (body.problem) {
        case "too-large":
          return this.reject(request, 413, `body over ${this.bodyLimit} bytes`, {}, true);
        case "timeout":
          return this.reject(request, 408, `body not received within ${this.bodyTimeoutMs} ms`, {}, true);
        case "not-utf8":
          return this.reject(request, 400, "body is not UTF-8");
        case "aborted":
          return this.reject(request, 400, "body aborted", {}, true);
      }
    }
    let verdict: boolean | Promise<boolean>;
    try {
      const { method, url, headers, remoteAddress } = request;
      verdict = this.options.authenticate({ method, url, headers, remoteAddress, body: body.text });
    } catch {
      verdict = false;
    }
    if (typeof verdict === "boolean") return this.authenticated(request, verdict, body.text);
    return verdict.then(
      (ok) => this.authenticated(request, ok === true, body.text),
      () => this.authenticated(request, false, body.text),
    );
  }

  private authenticated(request: NoticeRequest, authentic: boolean, text: string): Answer {
    if (!authentic) return this.reject(request, 401, "not authenticated");
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return this.reject(request, 400, "body is not JSON");
    }
    const parsed = cancelNoticeSchema.safeParse(json);
    if (!parsed.success) return this.reject(request, 422, noticeProblem(json) ?? "invalid notice");
    const { thread_id: threadId, tool_call_id: toolCallId } = parsed.data;
    const effect = this.options.registry.cancel(threadId, toolCallId);
    this.options.onNotice?.({ status: 200, client: this.client(request), effect, threadId, toolCallId });
    return OK;
  }

  private client(request: NoticeRequest): string {
    return this.options.clientKey?.(request) ?? request.remoteAddress ?? "unknown";
  }

  private reject(
    request: NoticeRequest,
    status: number,
    problem: string,
    headers: Record<string, string> = {},
    close = false,
  ): Answer {
    this.options.onNotice?.({ status, client: this.client(request), problem });
    return { status, message: `${problem}\n`, headers, close };
  }
}

/** `application/json`, with any parameters, and no charset other than UTF-8 (RFC 8259). */
function isJson(value: string | null): boolean {
  if (value === null) return false;
  const [type, ...params] = value.split(";");
  if (type?.trim().toLowerCase() !== "application/json") return false;
  return params.every((p) => {
    const [name, v] = p.split("=");
    return name?.trim().toLowerCase() !== "charset" || v?.trim().replace(/"/g, "").toLowerCase() === "utf-8";
  });
}
