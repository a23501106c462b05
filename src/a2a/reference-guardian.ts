import { timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { AosGuardParamsSchema } from "./aos.js";
import { type GuardianRules, parseGuardianRules, RuleBook } from "./guardian-rules.js";

/** One line of the guardian's decision log. */
export interface GuardianLogEntry {
  at: string;
  requestId: string | number;
  method: "tasks/cancel";
  taskId: string;
  from: string;
  to: string;
  reasoning?: string;
  decision: "allow" | "deny";
  /** Index of the deciding rule, -1 for the default. */
  rule: number;
  message: string;
}

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
  /** More requests than this within one second get HTTP 429 (default 1000). */
  maxRequestsPerSecond?: number;
}

export const GUARDIAN_VERSION = "0.1.0";

type JsonRpcId = string | number | null;

/**
 * A small AOS guardian over node:http for `tasks/cancel` and `ping`, deciding by declarative
 * rules (agent names, task id pattern, rate) and logging every decision.
 */
export class ReferenceGuardian {
  private readonly book: RuleBook;
  private readonly server: http.Server;
  private readonly maxBodyBytes: number;
  private readonly maxPerSecond: number;
  private windowStart = 0;
  private windowCount = 0;
  /** Decisions made so far. */
  decisions = 0;

  constructor(private readonly options: ReferenceGuardianOptions) {
    this.book = new RuleBook(parseGuardianRules(options.rules));
    this.maxBodyBytes = options.maxBodyBytes ?? 65_536;
    this.maxPerSecond = options.maxRequestsPerSecond ?? 1000;
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.server.keepAliveTimeout = 5000;
    // A client that trickles its request must not hold a connection for long.
    this.server.headersTimeout = 5000;
    this.server.requestTimeout = 10_000;
  }

  /** Starts listening; resolves to the guardian's URL. */
  listen(): Promise<string> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.options.port ?? 0, this.options.host ?? "127.0.0.1", () => {
        this.server.off("error", reject);
        resolve(this.url);
      });
    });
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

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const refuse = (status: number, message: string) => {
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "connection": "close" });
      res.end(`${message}\n`);
      req.resume();
    };
    if (!this.withinRate()) return refuse(429, "too many requests");
    if (req.method !== "POST") return refuse(405, "the guardian takes JSON-RPC 2.0 over POST");
    if ((req.url ?? "/").split("?")[0] !== "/") return refuse(404, "the guardian's endpoint is /");
    if (!this.authorized(req.headers.authorization)) return refuse(401, "missing or wrong bearer token");
    if (!/^application\/json\b/i.test(req.headers["content-type"] ?? "")) {
      return refuse(415, "the body must be application/json");
    }
    if (Number(req.headers["content-length"] ?? 0) > this.maxBodyBytes) {
      return refuse(413, `the body is longer than ${this.maxBodyBytes} bytes`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLong = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > this.maxBodyBytes) tooLong = true;
      else chunks.push(chunk);
    });
    req.on("end", () => {
      if (tooLong) return refuse(413, `the body is longer than ${this.maxBodyBytes} bytes`);
      const answer = this.answer(Buffer.concat(chunks).toString("utf8"));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(answer));
    });
  }

  private answer(text: string): object {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return rpcError(null, -32700, "Parse error: the body is not JSON");
    }
    this.options.onRequest?.(message);
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      return rpcError(null, -32600, "Invalid Request: one JSON-RPC request object expected (no batches)");
    }
    const { jsonrpc, id, method, params } = message as Record<string, unknown>;
    const validId = typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
    if (jsonrpc !== "2.0" || !validId || typeof method !== "string") {
      return rpcError(validId ? (id as JsonRpcId) : null, -32600, "Invalid Request: needs jsonrpc \"2.0\", an id and a method");
    }
    const rpcId = id as string | number;
    if (method === "ping") {
      return { jsonrpc: "2.0", id: rpcId, result: { status: "ok", version: GUARDIAN_VERSION, timestamp: new Date().toISOString() } };
    }
    if (method !== "tasks/cancel") return rpcError(rpcId, -32601, `Method not found: '${method.slice(0, 64)}'`);
    const parsed = AosGuardParamsSchema.safeParse(params);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return rpcError(rpcId, -32602, `Invalid params: ${issue?.path.join(".") || "params"}: ${issue?.message ?? "invalid"}`);
    }
    const { payload, context, reasoning } = parsed.data;
    const facts = { from: context.from.agent.name, to: context.to.agent.name, taskId: payload.params.id };
    const verdict = this.book.decide(facts);
    this.decisions++;
    this.options.log?.({
      at: new Date().toISOString(),
      requestId: rpcId,
      method: "tasks/cancel",
      ...facts,
      ...(reasoning !== undefined ? { reasoning } : {}),
      decision: verdict.decision,
      rule: verdict.rule,
      message: verdict.message,
    });
    return {
      jsonrpc: "2.0",
      id: rpcId,
      result: { decision: verdict.decision, message: verdict.message, reasonCode: verdict.reasonCode },
    };
  }

  private withinRate(): boolean {
    const now = Date.now();
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.windowCount = 0;
    }
    return ++this.windowCount <= this.maxPerSecond;
  }

  private authorized(header: string | undefined): boolean {
    const token = this.book.rules.token;
    if (token === undefined) return true;
    const given = Buffer.from(header ?? "");
    const wanted = Buffer.from(`Bearer ${token}`);
    return given.length === wanted.length && timingSafeEqual(given, wanted);
  }
}

function rpcError(id: JsonRpcId, code: number, message: string): object {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

/** Starts a reference guardian; resolves once it listens. */
export async function startGuardian(options: ReferenceGuardianOptions): Promise<ReferenceGuardian> {
  const guardian = new ReferenceGuardian(options);
  await guardian.listen();
  return guardian;
}
