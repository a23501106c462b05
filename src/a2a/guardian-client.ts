import { randomUUID } from "node:crypto";
import http from "node:http";
import https from "node:https";
import { urlToHttpOptions } from "node:url";
import { guarded } from "../core/report-errors.js";
import { classify } from "../wire/index.js";
import {
  type A2aCancelMessage,
  type AosAgent,
  type AosGuardParams,
  type AosGuardRequest,
  aosResult,
  type AosResult,
  type PingResult,
  PingResultSchema,
} from "./aos.js";
import { cancelInputProblem } from "./cancel-payload.js";
import {
  type DecisionListener,
  type FailPolicy,
  type GuardDecision,
  type GuardFailure,
  type GuardHook,
  GuardInputError,
} from "./guard-decision.js";

export interface GuardianClientOptions {
  /** The guardian's JSON-RPC endpoint, http: or https:. */
  url: string | URL;
  /** How long to wait for the whole answer (default 2000 ms). */
  timeoutMs?: number;
  /** What to do without a usable answer: "deny" (fail-closed, the default) or "allow" (fail-open). */
  failPolicy?: FailPolicy;
  /** Extra HTTP headers, e.g. `authorization` for a guardian that wants a token. */
  headers?: Record<string, string>;
  /** A longer answer is an invalid answer (default 65536 bytes). */
  maxResponseBytes?: number;
  /** Called with every decision, for an audit log. */
  onDecision?: DecisionListener;
}

/** What a hook asks the guardian about one cancel. */
export interface GuardQuestion {
  hook: GuardHook;
  /** The A2A cancel message as its connection puts it on the wire. */
  payload: A2aCancelMessage;
  reasoning?: string | undefined;
  from: AosAgent;
  to: AosAgent;
}

/** A decision before its timing is known. */
type Verdict = Omit<GuardDecision, "durationMs" | "at">;

class GuardianFailure extends Error {
  constructor(readonly failure: GuardFailure, message: string) {
    super(message);
  }
}

const DEFAULT_TIMEOUT_MS = 2000;
const DEFAULT_MAX_RESPONSE_BYTES = 65_536;

/**
 * Asks an AOS guardian whether a cancel may go ahead. `check` never rejects because of the guardian (down,
 * slow or talking nonsense: the fail policy decides, and says so), only for a question that is not a valid cancel.
 */
export class GuardianClient {
  readonly url: URL;
  readonly timeoutMs: number;
  readonly failPolicy: FailPolicy;
  private readonly target: http.RequestOptions;
  private readonly maxResponseBytes: number;
  private readonly listeners = new Set<DecisionListener>();
  private readonly agent: http.Agent;

  constructor(options: GuardianClientOptions) {
    this.url = new URL(options.url);
    if (this.url.protocol !== "http:" && this.url.protocol !== "https:") {
      throw new GuardInputError(`the guardian URL must be http: or https:, got '${this.url.protocol}'`);
    }
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(this.timeoutMs > 0)) throw new GuardInputError(`timeoutMs must be positive, got ${this.timeoutMs}`);
    this.failPolicy = options.failPolicy ?? "deny";
    if (this.failPolicy !== "deny" && this.failPolicy !== "allow") {
      throw new GuardInputError(`failPolicy must be "deny" or "allow", got '${String(this.failPolicy)}'`);
    }
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    if (options.onDecision !== undefined) this.listeners.add(options.onDecision);
    // Keep-alive: a guard sits on the cancel's path, so no new connection per question.
    this.agent = new (this.url.protocol === "https:" ? https : http).Agent({ keepAlive: true });
    const headers = { ...options.headers, "content-type": "application/json" };
    this.target = { ...urlToHttpOptions(this.url), method: "POST", agent: this.agent, headers };
  }

  /** Subscribes to every decision; returns the unsubscribe function. */
  onDecision(listener: DecisionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Asks about one cancel. Resolves to the decision (also emitted to every listener). */
  async check(question: GuardQuestion): Promise<GuardDecision> {
    const problem = questionProblem(question);
    if (problem !== undefined) throw new GuardInputError(problem);
    const reasoning = question.reasoning === undefined ? {} : { reasoning: question.reasoning };
    const context = { from: { agent: question.from, role: "client" as const }, to: { agent: question.to, role: "server" as const } };
    const params: AosGuardParams = { payload: question.payload, ...reasoning, context };
    const request: AosGuardRequest = { jsonrpc: "2.0", id: randomUUID(), method: "tasks/cancel", params };
    const started = performance.now();
    const base = { hook: question.hook, taskId: question.payload.params.id, requestId: request.id };
    let verdict: Verdict;
    try {
      const result = aosResult(await this.call(request));
      if (result === undefined) throw new GuardianFailure("invalid-answer", "the result is not an AOS decision");
      verdict = this.fromResult(base, result);
    } catch (error) {
      const { failure, message } = error instanceof GuardianFailure ? error : new GuardianFailure("unreachable", String(error));
      verdict = {
        ...base, decision: this.failPolicy, source: "policy", failure,
        message: `guardian ${failure} (${message}); fail policy ${this.failPolicy}`, reasonCode: [`guardian-${failure}`],
      };
    }
    const decision: GuardDecision = { ...verdict, durationMs: performance.now() - started, at: new Date().toISOString() };
    // An audit listener that throws must not change the decision.
    for (const listener of this.listeners) guarded(() => listener(decision), []);
    return decision;
  }

  /** AOS `ping`: the guardian's status, version and time. Rejects when it cannot answer. */
  async ping(): Promise<PingResult> {
    const request = { jsonrpc: "2.0", id: randomUUID(), method: "ping" };
    const parsed = PingResultSchema.safeParse(await this.call(request));
    if (!parsed.success) throw new GuardianFailure("invalid-answer", "ping answer has no status/version/timestamp");
    return parsed.data;
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.agent.destroy();
  }

  /** The decision an answer gives, its fields in the audit event's order (a log's lines stay alike). */
  private fromResult(base: Pick<Verdict, "hook" | "taskId" | "requestId">, result: AosResult): Verdict {
    const reasonCode = (result.reasonCode ?? []).map(String);
    const reasoning = result.reasoning === undefined ? {} : { reasoning: result.reasoning };
    const verdict = result.decision;
    if (verdict === "allow" || verdict === "deny") {
      return { ...base, decision: verdict, source: "guardian", message: result.message ?? verdict, reasonCode, ...reasoning };
    }
    if (verdict === "modify") {
      // A cancel has nothing to modify: the guardian did not approve it as sent.
      const message = result.message ?? "the guardian asked to modify the cancel, which is not defined for tasks/cancel";
      return { ...base, decision: "deny", source: "guardian", guardianDecision: "modify", message, reasonCode, ...reasoning };
    }
    return {
      ...base, decision: this.failPolicy, source: "policy", failure: "invalid-answer", guardianDecision: verdict,
      message: `guardian answered unknown decision '${verdict.slice(0, 64)}'; fail policy ${this.failPolicy}`,
      reasonCode: ["guardian-invalid-answer"],
    };
  }

  /** One JSON-RPC round trip; rejects with a GuardianFailure naming what went wrong. */
  private call(request: { id: string }): Promise<unknown> {
    const body = JSON.stringify(request);
    const transport = this.url.protocol === "https:" ? https : http;
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (error: GuardianFailure | undefined, value?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error === undefined) return resolve(value);
        req.destroy();
        reject(error);
      };
      const invalid = (message: string) => finish(new GuardianFailure("invalid-answer", message));
      const unreachable = (error: Error) => finish(new GuardianFailure("unreachable", error.message));
      const timeout = () => finish(new GuardianFailure("timeout", `no answer within ${this.timeoutMs} ms`));
      const timer = setTimeout(timeout, this.timeoutMs);
      const req = transport.request({ ...this.target, headers: { ...this.target.headers, "content-length": Buffer.byteLength(body) } });
      req.on("error", unreachable);
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > this.maxResponseBytes) invalid(`answer longer than ${this.maxResponseBytes} bytes`);
          else chunks.push(chunk);
        });
        res.on("error", unreachable);
        res.on("end", () => {
          if ((res.statusCode ?? 0) >= 300 && size === 0) return invalid(`HTTP ${res.statusCode} with no JSON-RPC answer`);
          let json: unknown;
          try {
            json = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          } catch {
            return invalid(`HTTP ${res.statusCode}: not JSON`);
          }
          const answer = classify(json);
          if (answer.kind !== "response") invalid("not a JSON-RPC 2.0 answer with an AOS result");
          else if (answer.message.id !== request.id) invalid("the answer's id is not the request's");
          else if ("error" in answer.message) {
            const { code, message } = answer.message.error;
            finish(new GuardianFailure("rpc-error", `JSON-RPC error ${code}: ${message.slice(0, 200)}`));
          } else finish(undefined, answer.message.result);
        });
      });
      req.end(body);
    });
  }
}

function agentProblem(side: string, agent: unknown): string | undefined {
  if (typeof agent !== "object" || agent === null) return `${side} needs an agent card`;
  const { name } = agent as { name?: unknown };
  if (typeof name !== "string" || name.trim() === "") return `${side}'s agent card needs a name`;
  return undefined;
}

function questionProblem(question: GuardQuestion): string | undefined {
  if (typeof question !== "object" || question === null) return "no question to ask the guardian";
  if (question.hook !== "client" && question.hook !== "server") return `unknown hook '${String(question.hook)}'`;
  const payload = question.payload as Partial<A2aCancelMessage> | undefined;
  if (payload?.jsonrpc !== "2.0" || (payload.method !== "tasks/cancel" && payload.method !== "CancelTask")) {
    return "the payload must be an A2A tasks/cancel or CancelTask JSON-RPC message";
  }
  const inputProblem = cancelInputProblem(payload.params);
  if (inputProblem !== undefined) return inputProblem;
  if (question.reasoning !== undefined && typeof question.reasoning !== "string") return "reasoning must be a string";
  return agentProblem("from", question.from) ?? agentProblem("to", question.to);
}
