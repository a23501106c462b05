/** The cancel bus: how a cancel that reached one replica finds the replica doing the work. */

/** Runs on the replica that owns the work when a cancel for it arrives; resolves once the work stopped. */
export type CancelHandler = (request: CancelRequest) => Promise<unknown>;

export interface CancelRequest {
  key: string;
  /** The replica the cancel reached. */
  from: string;
  reason?: string;
}

/** The owner's hold on one key: `release()` once the work has ended (idempotent). */
export interface Claim {
  release(): void;
}

export interface CancelOptions {
  /** How long to wait for the owner to confirm (default: the bus's `confirmMs`). */
  waitMs?: number;
  reason?: string;
}

/** What a cancel achieved (docs/scale-out.md explains each verdict and its fields). */
export type CancelVerdict =
  | { kind: "confirmed"; replica: string; local: boolean; detail: unknown }
  | { kind: "unconfirmed"; owner: string }
  | { kind: "no-owner"; settled: boolean; abandonedBy?: string };

/** A claim whose owner's lease expired (the owner is gone) while its record stayed on the bus. */
export interface OrphanedClaim {
  key: string;
  /** The replica that claimed it and is gone. */
  replica: string;
  /** What the owner kept with the claim (`claim(key, onCancel, { record })`). */
  record: string;
}

export interface OrphanSweepOptions {
  /** Pause between the end of one sweep and the start of the next (ms; an integer from 10). */
  everyMs: number;
  /** Handles one orphan; once it resolves, its record is dropped. A rejection keeps it for the next sweep. */
  onOrphan(orphan: OrphanedClaim): Promise<void>;
  /** A sweep that could not run (backend down or too slow) or an `onOrphan` that rejected. */
  onError(error: Error, orphan?: OrphanedClaim): void;
}

export interface CancelBus {
  readonly replica: string;
  /** Whether the backend is reachable now (local claims and cancels work either way). */
  readonly connected: boolean;
  /**
   * This replica runs the work for `key`: cancels for it, from any replica, call `onCancel`. With
   * `record`, the claim stays on the bus until released, for another replica's `sweepOrphans`.
   */
  claim(key: string, onCancel: CancelHandler, options?: { record?: string }): Claim;
  /**
   * Cancels the work for `key` wherever it runs. Never hangs: resolves within about `waitMs`,
   * or rejects with `BusUnavailableError` when the key is not local and the backend is down.
   */
  cancel(key: string, options?: CancelOptions): Promise<CancelVerdict>;
  /**
   * Every `everyMs`, hands `onOrphan` each recorded claim under `prefix` whose owner's lease expired
   * (judged as a settled `no-owner` verdict is). Throws a RangeError for a bad `everyMs`.
   */
  sweepOrphans(prefix: string, options: OrphanSweepOptions): { stop(): void };
  /** Releases every claim's lease (claims kept with a record stay for a sweep), stops timers and sweeps, disconnects. */
  close(): Promise<void>;
}

/** The backend is down or did not answer in time: a cross-replica cancel cannot be delivered. */
export class BusUnavailableError extends Error {
  override readonly name = "BusUnavailableError";
  constructor(
    readonly backend: string,
    readonly operation: string,
    options?: { cause?: unknown },
  ) {
    super(`the ${backend} cancel bus is unavailable (${operation} failed); cross-replica cancels cannot be delivered`, options);
  }
}

export interface CancelBusOptions {
  /** This replica's id (default: hostname, pid and a random suffix). */
  replica?: string;
  /** Prefix of every key, channel and table name the bus uses (default "acp_cancel"). */
  namespace?: string;
  /** How long an owner has to confirm a cancel (default: `REPLICA_DEFAULTS`, transport.ts, as below). */
  confirmMs?: number;
  /** How long a cancel for work no replica has claimed yet is remembered. */
  rememberMs?: number;
  /** An owner's lease on its keys; renewed every third of it. */
  leaseMs?: number;
  /** Bound on each backend operation. */
  operationMs?: number;
}
