import { isThenable } from "../core/is-thenable.js";
import type { BodyRead } from "../wire/index.js";
import { ANONYMOUS, type CallRegistry, type NoticeEffect, type Principal } from "./call-registry.js";
import { cancelNoticeSchema, firstProblem } from "./messages.js";
import { DEFAULT_FLOOD_LIMIT, DEFAULT_RATE_LIMIT, type RateLimit, RateLimiter } from "./rate-limiter.js";

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

/** False refuses (401); a string names the notice's principal; true accepts it as {@link ANONYMOUS}. */
type AuthVerdict = boolean | Principal;

export interface CancelEndpointOptions {
  /** The server's own calls; a notice cancels through it. */
  readonly registry: CallRegistry;
  /**
   * The server's check for invocations (RAP: "exactly like invocations"). Anything but true or a string
   * (a throw too) answers 401. A principal's name makes notices cancel only its calls (`owner` in `track`).
   */
  readonly authenticate: (request: AuthRequest) => AuthVerdict | Promise<AuthVerdict>;
  /** Largest body accepted, in bytes (default 4096). */
  readonly bodyLimit?: number;
  /** Time allowed to receive the whole body (default 5000 ms). */
  readonly bodyTimeoutMs?: number;
  /** Token bucket per principal once authenticated (per address for the anonymous one); false: none (a proxy's). */
  readonly rateLimit?: RateLimit | false;
  /** Token bucket per client address before anything else, far above an authentic runtime's rate; false: none. */
  readonly floodLimit?: RateLimit | false;
  /** The client's key for the flood limit (and the anonymous principal's rate); the peer's address by default. */
  readonly clientKey?: (request: NoticeRequest) => string;
  /** One event per request, for logs and metrics (the response itself says nothing). */
  readonly onNotice?: (event: NoticeEvent) => void;
}

/** Why these: docs/decisions.md, "Why the RAP defaults are what they are". */
const DEFAULT_BODY_LIMIT = 4096;
const DEFAULT_BODY_TIMEOUT_MS = 5_000;

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
  /** Once authenticated. */
  readonly principal?: Principal;
  /** For a 200: what the notice did. */
  readonly effect?: NoticeEffect;
  readonly threadId?: string;
  readonly toolCallId?: string;
  /** For any other status: what was wrong. */
  readonly problem?: string;
  /**
   * For a notice a replicated registry forwarded to other replicas, the bus's verdict or `{ kind: "error", error }`;
   * the event then comes once that is known (docs/decisions.md, "Scale-out: what onNotice says of a forwarded notice").
   */
  readonly forwarded?: { readonly kind: string };
}

/** What acp-cancel/replicas' `replicateCalls` adds: the local effect, and the forwarding's outcome (never rejects). */
interface ForwardingRegistry {
  cancelAndForward(threadId: string, toolCallId: string, reason: "external", principal: Principal): {
    effect: NoticeEffect;
    forwarded?: Promise<{ readonly kind: string }>;
  };
}

const OK: Answer = { status: 200, message: "", headers: {}, close: false };

export function answerHeaders(answer: Answer): Record<string, string> {
  const headers: Record<string, string> = { "cache-control": "no-store", ...answer.headers };
  if (answer.status !== 200) headers["content-type"] = "text/plain; charset=utf-8";
  if (answer.close) headers.connection = "close";
  return headers;
}

/** The checks of `POST /cancel_tool_call` in order, for any server framework; the first to fail decides (docs/rap.md). */
export class CancelEndpointCore {
  private readonly limiter: RateLimiter | undefined;
  private readonly flood: RateLimiter | undefined;
  readonly bodyLimit: number;
  readonly bodyTimeoutMs: number;

  constructor(private readonly options: CancelEndpointOptions) {
    const rate = options.rateLimit ?? DEFAULT_RATE_LIMIT;
    this.limiter = rate === false ? undefined : new RateLimiter(rate);
    const flood = options.floodLimit ?? DEFAULT_FLOOD_LIMIT;
    this.flood = flood === false ? undefined : new RateLimiter(flood);
    this.bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
    this.bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  }

  /** The checks that need no body: method, rate, content type, declared length. Undefined: read the body. */
  precheck(request: NoticeRequest): Answer | undefined {
    if (request.method !== "POST") return this.reject(request, 405, `method ${request.method} not allowed: use POST`, { allow: "POST" });
    if (this.flood !== undefined) {
      const client = this.client(request);
      if (!this.flood.take(client)) return this.tooMany(request, this.flood, client);
    }
    const type = request.headers.get("content-type");
    if (!isJson(type)) {
      return this.reject(request, 415, `content-type must be application/json, got ${type === null ? "none" : JSON.stringify(type.slice(0, 64))}`);
    }
    const declared = request.headers.get("content-length");
    if (declared !== null && Number(declared) > this.bodyLimit) return this.reject(request, 413, `body over ${this.bodyLimit} bytes`, {}, true);
    return undefined;
  }

  /** The checks on the body, then the registry; synchronous unless the verify function returns a promise. */
  complete(request: NoticeRequest, body: BodyRead): Answer | Promise<Answer> {
    if (!body.ok) {
      const [status, problem, close] = ({
        "too-large": [413, `body over ${this.bodyLimit} bytes`, true],
        "timeout": [408, `body not received within ${this.bodyTimeoutMs} ms`, true],
        "not-utf8": [400, "body is not UTF-8", false],
        "aborted": [400, "body aborted", true],
      } as const)[body.problem];
      return this.reject(request, status, problem, {}, close);
    }
    let verdict: AuthVerdict | Promise<AuthVerdict>;
    try {
      verdict = this.options.authenticate({ ...request, body: body.text });
    } catch {
      verdict = false;
    }
    if (!isThenable(verdict)) return this.authenticated(request, principalOf(verdict), body.text);
    return Promise.resolve(verdict).then(
      (given) => this.authenticated(request, principalOf(given), body.text),
      () => this.authenticated(request, undefined, body.text),
    );
  }

  private authenticated(request: NoticeRequest, principal: Principal | undefined, text: string): Answer {
    if (principal === undefined) return this.reject(request, 401, "not authenticated");
    if (this.limiter !== undefined) {
      const key = principal === ANONYMOUS ? `address ${this.client(request)}` : `principal ${principal}`;
      if (!this.limiter.take(key)) return this.tooMany(request, this.limiter, key, principal);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return this.reject(request, 400, "body is not JSON");
    }
    const parsed = cancelNoticeSchema.safeParse(json);
    if (!parsed.success) return this.reject(request, 422, firstProblem(parsed.error));
    const { thread_id: threadId, tool_call_id: toolCallId } = parsed.data;
    const registry: CallRegistry & Partial<ForwardingRegistry> = this.options.registry;
    const { effect, forwarded } = registry.cancelAndForward?.(threadId, toolCallId, "external", principal) ??
      { effect: registry.cancel(threadId, toolCallId, "external", principal) };
    // The same 200 whatever the effect: another principal's call does not show it exists.
    const event = { status: 200, client: this.client(request), principal, effect, threadId, toolCallId };
    if (forwarded === undefined) this.options.onNotice?.(event);
    else void forwarded.then((outcome) => this.options.onNotice?.({ ...event, forwarded: outcome }));
    return OK;
  }

  private client(request: NoticeRequest): string {
    return this.options.clientKey?.(request) ?? request.remoteAddress ?? "unknown";
  }

  private tooMany(request: NoticeRequest, limiter: RateLimiter, key: string, principal?: Principal): Answer {
    return this.reject(request, 429, "too many cancel notices", { "retry-after": String(limiter.retryAfter(key)) }, false, principal);
  }

  private reject(
    request: NoticeRequest,
    status: number,
    problem: string,
    headers: Record<string, string> = {},
    close = false,
    principal?: Principal,
  ): Answer {
    const client = this.client(request);
    this.options.onNotice?.(principal === undefined ? { status, client, problem } : { status, client, principal, problem });
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

/** The principal a verdict names; undefined when it refuses (false, or anything else unexpected). */
function principalOf(verdict: unknown): Principal | undefined {
  if (verdict === true) return ANONYMOUS;
  return typeof verdict === "string" ? verdict : undefined;
}
