import type { AnyJob, Job } from "../core/index.js";
import type { JsonRpcId, JsonRpcResponse } from "../wire/index.js";
import type { Side } from "./methods.js";

/** What the engine remembers about one request in flight. */
export interface RequestRecord {
  readonly id: JsonRpcId;
  readonly method: string;
  readonly sessionId: string | undefined;
  /** The side that issued the request and is owed exactly one answer. */
  readonly issuer: Side;
  /** The handler side has seen the request (false when cancelled at birth). */
  delivered: boolean;
  /** The handler side has answered; if we answered first, its reply is late. */
  handlerAnswered: boolean;
  /** A cancelled answer waiting for the job's children to settle first. */
  held: JsonRpcResponse | undefined;
  /** When a cancel reached the job (for latency figures); undefined while not cancelled. */
  cancelledAt: number | undefined;
}

export type RequestJob = Job<RequestRecord>;

/** True for the engine's own jobs; a subtree can also hold other bindings' jobs. */
export function isRequestJob(job: AnyJob | undefined): job is RequestJob {
  return job?.payload instanceof RecordOfRequest;
}

/** A class rather than a literal so that `isRequestJob` can tell the engine's jobs apart. */
export class RecordOfRequest implements RequestRecord {
  delivered = false;
  handlerAnswered = false;
  held: JsonRpcResponse | undefined = undefined;
  cancelledAt: number | undefined = undefined;
  constructor(
    readonly id: JsonRpcId,
    readonly method: string,
    readonly sessionId: string | undefined,
    readonly issuer: Side,
  ) {}
}
