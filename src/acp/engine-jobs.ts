import type { AnyJob, Job } from "../core/index.js";
import type { JsonRpcId } from "../wire/index.js";
import type { Side } from "./methods.js";

/** What the engine remembers about one request in flight (a class, so `isRequestJob` can tell the engine's jobs apart). */
export class RequestRecord {
  /** The handler side has seen the request (false when cancelled at birth). */
  delivered = false;
  /** The handler side has answered; if we answered first, its reply is late. */
  handlerAnswered = false;
  /** When a cancel reached the job (for latency figures); undefined while not cancelled. */
  cancelledAt: number | undefined = undefined;

  constructor(
    readonly id: JsonRpcId,
    readonly method: string,
    readonly sessionId: string | undefined,
    /** The side that issued the request and is owed exactly one answer. */
    readonly issuer: Side,
  ) {}
}

export type RequestJob = Job<RequestRecord>;

/** True for the engine's own jobs; a subtree can also hold other bindings' jobs. */
export function isRequestJob(job: AnyJob | undefined): job is RequestJob {
  return job?.payload instanceof RequestRecord;
}

/**
 * A session's foreground work (ACP v2): from the prompt or a running `state_update` to the idle
 * one, parent of the agent's requests meanwhile. Nobody is owed an answer for it.
 */
export class SessionWork {
  /** The latest running / requires_action `state_update` of this work (its `background` list is read from it). */
  snapshot: unknown = undefined;
  constructor(
    readonly sessionId: string,
    /** The prompt that opened the work; null when the agent started it. */
    readonly promptId: JsonRpcId,
    /** When it began (the engine's clock), for the turn's age. */
    readonly startedAt: number,
  ) {}
}

export type WorkJob = Job<SessionWork>;

/** A session's foreground work (v2), as opposed to a prompt turn (v1). */
export function isWorkJob(job: AnyJob | undefined): job is WorkJob {
  return job?.payload instanceof SessionWork;
}
