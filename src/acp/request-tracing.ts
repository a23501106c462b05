import { type JobFailure, jobObserver, traceCarrier } from "../core/index.js";
import type { JsonRpcRequest, JsonRpcResponse } from "../wire/index.js";
import { metaOf } from "./capability.js";
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

/** What the observer is told of an error answer, for the span status. */
export function failureOf(response: JsonRpcResponse): JobFailure | undefined {
  return "error" in response && response.error !== undefined
    ? { code: response.error.code, message: response.error.message }
    : undefined;
}
