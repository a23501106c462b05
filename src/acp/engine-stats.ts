/** Counters for summaries and benchmarks; plain integers, cheap to keep. */
export class EngineStats {
  requests = 0;
  cancels = 0;
  answeredForPeer = 0;
  cancelledAtBirth = 0;
  lateRepliesDropped = 0;
}

/** The counters of the turns followed past their answer (`turnEnd`), at zero; plain, so they compare equal to a literal. */
export function noTurnsFollowed() {
  return {
    /** Turns answered for the agent and then tracked to their real end. */
    turnsTracked: 0,
    lateUpdatesSuppressed: 0,
    lateRequestsRefused: 0,
    promptsHeld: 0,
    /** Times a window passed with the turn not ended. */
    stuckEscalations: 0,
  };
}

export type AftermathStats = ReturnType<typeof noTurnsFollowed>;

const LATENCY_MEMORY = 4096;

/** Milliseconds from a cancel reaching a job to its answer leaving: the last 4096. */
export class LatencyRing {
  readonly values: number[] = [];

  record(ms: number): void {
    this.values.push(ms);
    if (this.values.length > LATENCY_MEMORY) this.values.shift(); // the oldest goes
  }
}
