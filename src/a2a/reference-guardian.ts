import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { DRAIN_MS, drainThenCut, ErrorCode, errorResponse, firstIssue, readNodeBody, resultResponse, validIdOf } from "../wire/index.js";
import { AosGuardParamsSchema, isObject } from "./aos.js";
import { type GuardianCaller, guardianTokens } from "./guardian-auth.js";
import { MemoryRateCounter, type RateCounter } from "./guardian-counter.js";
import { type CancelFacts, type GuardianRules, parseGuardianRules, ruleBook, type RuleVerdict } from "./guardian-rules.js";

/** One line of the guardian's decision log: the question's facts, who sent it, and what the rules decided. */
export type GuardianLogEntry = Omit<CancelFacts, "agent">
  & Omit<RuleVerdict, "reasonCode"> & {
    at: string;
    requestId: string | number;
    method: "tasks/cancel";
    /** Who sent the question: `agent:<name>` for a token bound to an agent, else `address:<ip>`. */
    client: string;
    reasoning?: string;
  };

export interface ReferenceGuardianOptions {
  /** The rules, as an object or the text of a rules file. */
  rules: GuardianRules | string;
  /** Default 0 (any free port). */
  port?: number;
  /** Default 127.0.0.1: a guardian is not exposed beyond the machine unless asked. */
  host?: string;
  /** Called with every decision. */
  log?: (entry: GuardianLogEntry) => void;
  /** Called with every request body that parses as JSON, before it is checked (for audits and tests). */
  onRequest?: (message: unknown) => void;
  /** A longer request body gets HTTP 413 (default 65536). */
  maxBodyBytes?: number;
  /** More requests than this within a second from one client (its token's agent, else its address) get 429 (default 1000). */
  maxRequestsPerSecond?: number;
  /** Where the request limit and the rules' `rate` count (default: in memory; replicas share one). */
  counter?: RateCounter;
  /** Request headers not complete this long after the connection asks get HTTP 408 (default 5000). */
  headersTimeoutMs?: number;
  /** A body not complete this long after its headers gets HTTP 408 (default 5000). */
  bodyTimeoutMs?: number;
}

const GUARDIAN_VERSION = "0.1.0";
/** A guardian question is one small packet: headers or a body still incomplete after 5 s are a slow client. */
const DEFAULT_GUARDIAN_TIMEOUT_MS = 5_000;

/**
 * A small AOS guardian over node:http for `tasks/cancel` and `ping`, deciding by declarative rules
 * and logging every decision. Authenticated before counted: a flood without a token never uses up a client's allowance.
 */
export class ReferenceGuardian {
  private readonly decide: ReturnType<typeof ruleBook>;
  private readonly identify: ReturnType<typeof guardianTokens>;
  private readonly counter: RateCounter;
  private readonly server: http.Server;
  private readonly maxBodyBytes: number;
  private readonly maxPerSecond: number;
  private readonly headersTimeoutMs: number;
  private readonly bodyTimeoutMs: number;

  constructor(private readonly options: ReferenceGuardianOptions) {
    const rules = parseGuardianRules(options.rules);
    this.counter = options.counter ?? new MemoryRateCounter();
    this.decide = ruleBook(rules, this.counter);
    this.identify = guardianTokens(rules);
    this.maxBodyBytes = options.maxBodyBytes ?? 65_536;
    this.maxPerSecond = options.maxRequestsPerSecond ?? 1000;
    this.headersTimeoutMs = positive(options.headersTimeoutMs ?? DEFAULT_GUARDIAN_TIMEOUT_MS, "headersTimeoutMs");
    this.bodyTimeoutMs = positive(options.bodyTimeoutMs ?? DEFAULT_GUARDIAN_TIMEOUT_MS, "bodyTimeoutMs");
    this.server = http.createServer(
      {
        headersTimeout: this.headersTimeoutMs,
        // A backstop only: the body has its own, exact timer (readBody).
        requestTimeout: this.headersTimeoutMs + this.bodyTimeoutMs + DRAIN_MS,
        // Node checks both timeouts on this interval (30 s by default: slow clients held on for ~25 s).
        connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(this.headersTimeoutMs / 4))),
      },
      (req, res) => this.handle(req, res),
    );
    this.server.keepAliveTimeout = 5000;
    this.server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => this.clientError(error, socket));
  }

  /** Starts listening; resolves to the guardian's URL. */
  async listen(): Promise<string> {
    this.server.listen(this.options.port ?? 0, this.options.host ?? "127.0.0.1");
    await once(this.server, "listening");
    return this.url;
  }

  get url(): string {
    const address = this.server.address() as AddressInfo | null;
    if (address === null) throw new Error("the guardian is not listening");
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}/`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /** The checks in order: method, path, token, the client's rate, content type, size, then the body. */
  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const bodyDue = performance.now() + this.bodyTimeoutMs;
    if (req.method !== "POST") return refuse(req, res, 405, "the guardian takes JSON-RPC 2.0 over POST");
    if ((req.url ?? "/").split("?")[0] !== "/") return refuse(req, res, 404, "the guardian's endpoint is /");
    const caller = this.identify(req.headers.authorization, req.socket.remoteAddress);
    if (caller === undefined) return refuse(req, res, 401, "missing or wrong bearer token");
    const admit = (count: number) => {
      if (count > this.maxPerSecond) return refuse(req, res, 429, "too many requests from this client", { "retry-after": "1" });
      if (!/^application\/json\b/i.test(req.headers["content-type"] ?? "")) {
        return refuse(req, res, 415, "the body must be application/json");
      }
      if (Number(req.headers["content-length"] ?? 0) > this.maxBodyBytes) {
        return refuse(req, res, 413, `the body is longer than ${this.maxBodyBytes} bytes`);
      }
      this.readBody(req, res, caller, bodyDue);
    };
    const count = this.counter.hit(`requests:${caller.client}`, 1000, Date.now());
    if (typeof count === "number") admit(count);
    else count.then(admit, () => refuse(req, res, 503, "the rate counter is unavailable"));
  }

  private readBody(req: http.IncomingMessage, res: http.ServerResponse, caller: GuardianCaller, due: number): void {
    // A body its client aborted gets no answer: nobody would read it.
    readNodeBody(req, this.maxBodyBytes, Math.max(0, due - performance.now()), (read) => {
      if (read.ok) {
        this.answer(read.text, caller).then(
          (answer) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer)),
          () => refuse(req, res, 500, "internal error"),
        );
      } else if (read.problem === "too-large") refuse(req, res, 413, `the body is longer than ${this.maxBodyBytes} bytes`);
      else if (read.problem === "timeout") refuse(req, res, 408, `body not received within ${this.bodyTimeoutMs} ms`);
      else if (read.problem === "not-utf8") refuse(req, res, 400, "the body is not UTF-8");
    });
  }

  /** Headers too slow (Node's headersTimeout) get a 408 naming the limit; a malformed request a 400. */
  private clientError(error: NodeJS.ErrnoException, socket: Duplex): void {
    if (error.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    const timeout = error.code === "ERR_HTTP_REQUEST_TIMEOUT";
    const status = timeout ? "408 Request Timeout" : "400 Bad Request";
    const body = `${timeout ? `headers not received within ${this.headersTimeoutMs} ms` : "malformed HTTP request"}\n`;
    socket.end(
      `HTTP/1.1 ${status}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
    setTimeout(() => socket.destroy(), DRAIN_MS).unref();
  }

  private async answer(text: string, caller: GuardianCaller): Promise<object> {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return errorResponse(null, ErrorCode.ParseError, "Parse error: the body is not JSON");
    }
    this.options.onRequest?.(message);
    if (!isObject(message)) {
      return errorResponse(null, ErrorCode.InvalidRequest, "Invalid Request: one JSON-RPC request object expected (no batches)");
    }
    const { jsonrpc, method, params } = message;
    const rpcId = validIdOf(message);
    if (jsonrpc !== "2.0" || rpcId === null || typeof method !== "string") {
      return errorResponse(rpcId, ErrorCode.InvalidRequest, 'Invalid Request: needs jsonrpc "2.0", an id and a method');
    }
    if (method === "ping") {
      return resultResponse(rpcId, { status: "ok", version: GUARDIAN_VERSION, timestamp: new Date().toISOString() });
    }
    if (method !== "tasks/cancel") return errorResponse(rpcId, ErrorCode.MethodNotFound, `Method not found: '${method.slice(0, 64)}'`);
    const parsed = AosGuardParamsSchema.safeParse(params);
    if (!parsed.success) return errorResponse(rpcId, ErrorCode.InvalidParams, `Invalid params: ${firstIssue(parsed.error, "params")}`);
    const { payload, context, reasoning } = parsed.data;
    const facts = { from: context.from.agent.name, to: context.to.agent.name, taskId: payload.params.id };
    const asked = caller.agent === undefined ? facts : { ...facts, agent: caller.agent };
    const { decision, rule, message: said, reasonCode } = await this.decide(asked);
    this.options.log?.({
      at: new Date().toISOString(), requestId: rpcId, method: "tasks/cancel", ...facts, client: caller.client,
      ...(reasoning !== undefined ? { reasoning } : {}), decision, rule, message: said,
    });
    return resultResponse(rpcId, { decision, message: said, reasonCode });
  }
}

/** Answers a request that is refused before (or while) its body is read, and closes the connection. */
function refuse(req: http.IncomingMessage, res: http.ServerResponse, status: number, message: string, headers = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { ...headers, "content-type": "text/plain; charset=utf-8", "connection": "close" });
  res.end(`${message}\n`);
  drainThenCut(req);
}

function positive(value: number, name: string): number {
  if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`${name} must be a positive number of ms, got ${value}`);
  return value;
}

/** Starts a reference guardian; resolves once it listens. */
export async function startGuardian(options: ReferenceGuardianOptions): Promise<ReferenceGuardian> {
  const guardian = new ReferenceGuardian(options);
  await guardian.listen();
  return guardian;
}
