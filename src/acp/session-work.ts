import type { AnyJob, Job } from "../core/index.js";
import type { JsonRpcId } from "../wire/index.js";

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
