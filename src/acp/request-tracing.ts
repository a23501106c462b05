import { type JobFailure, jobObserver, traceCarrier } from "../core/index.js";
import type { JsonRpcId, JsonRpcRequest, JsonRpcResponse } from "../wire/index.js";
import { metaOf } from "./capability.js";
import type { Side } from "./methods.js";
import type { RequestJob } from "./engine-jobs.js";

// What the engine tells the job observer that the job tree cannot; called only while one is installed.

/** Tells the observer about a request's job; `local` when its handler is in this process. */
export function traceStart(job: RequestJob, request: JsonRpcRequest, local: boolean): void {
  const { id, method, sessionId } = job.payload;
  jobObserver?.onStart(job, {
    protocol: "acp",
    method,
    id: typeof id === "string" || typeof id === "number" ? id : undefined,
    kind: local ? "server" : "client",
    carrier: metaOf(request.params),
    attributes: sessionId === undefined ? undefined : { "acp.session.id": sessionId },
  });
}

/** The request as it leaves, its job's W3C trace context in `params._meta` (ACP's property bag). */
export function withTraceContext(job: RequestJob, request: JsonRpcRequest): JsonRpcRequest {
  const { params } = request;
  if (typeof params !== "object" || params === null || Array.isArray(params)) return request;
  const trace = traceCarrier(job);
  return trace === undefined ? request : { ...request, params: { ...params, _meta: { ...metaOf(params), ...trace } } };
}

/** Tells the observer of a synthetic answer; returns the answer's failure, for the span status. */
export function traceAnswer(
  job: RequestJob,
  response: JsonRpcResponse,
  answeredForPeer: boolean,
  late: AnsweredForPeer,
): JobFailure | undefined {
  if (answeredForPeer && !job.isSettled) {
    jobObserver?.onEvent(job, "synthetic-answer");
    late.add(job);
  }
  return "error" in response && response.error !== undefined
    ? { code: response.error.code, message: response.error.message }
    : undefined;
}

/** Jobs answered for their peer (bounded), so a late reply can be told to the observer. */
export class AnsweredForPeer {
  private readonly jobs: Record<Side, Map<JsonRpcId, RequestJob>> = { client: new Map(), agent: new Map() };

  constructor(private readonly capacity: number) {}

  add(job: RequestJob): void {
    const jobs = this.jobs[job.payload.issuer];
    jobs.set(job.payload.id, job);
    if (jobs.size > this.capacity) jobs.delete(jobs.keys().next().value as JsonRpcId);
  }

  /** The late reply to `id` (issued by `issuer`) was dropped. */
  dropped(issuer: Side, id: JsonRpcId): void {
    const job = this.jobs[issuer].get(id);
    if (job === undefined) return;
    this.jobs[issuer].delete(id);
    jobObserver?.onEvent(job, "late-reply-dropped");
  }
}
