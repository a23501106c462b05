/**
 * The cancel bus: how a cancel that reached one replica finds the replica doing the work.
 * One small interface; the backends (PostgreSQL, Redis) differ only in their transport.
 */

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

/**
 * What a cancel achieved:
 * - `confirmed`: the owning replica (maybe this one) ran its handler; `detail` is what the handler resolved with.
 * - `unconfirmed`: a replica holds the work's lease but did not confirm within the bound.
 * - `no-owner`: no replica holds a lease on the key. `settled` says the bus has been connected for
 *   a whole lease period, so a live owner would have renewed its lease: the owner is gone (or never was).
 *   `abandonedBy` names the replica whose claim record outlived its lease (it died or closed its bus
 *   with the work running); without it, the work released its claim (it ended) or was never claimed
 *   with a record. The cancel is still remembered for `rememberMs`, so an owner that claims the key
 *   later stops at once.
 */
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
  /** This replica's id on the bus. */
  readonly replica: string;
  /** Whether the backend is reachable now (local claims and cancels work either way). */
  readonly connected: boolean;
  /**
   * This replica runs the work for `key`: cancels for it, from any replica, call `onCancel`.
   * With `record`, the claim is also kept on the bus until released: if this replica dies or
   * closes holding it, another replica's `sweepOrphans` finds it once the lease expired.
   */
  claim(key: string, onCancel: CancelHandler, options?: { record?: string }): Claim;
  /**
   * Cancels the work for `key` wherever it runs. Never hangs: resolves within about `waitMs`,
   * or rejects with `BusUnavailableError` when the key is not local and the backend is down.
   */
  cancel(key: string, options?: CancelOptions): Promise<CancelVerdict>;
  /**
   * Every `everyMs`, finds the claims under `prefix` kept with a record whose owner's lease has
   * expired, as a cancel's `no-owner` (settled) verdict would judge them, and hands each to
   * `onOrphan`. One sweep at a time; stopped by `stop()` or `close()`; its timer never keeps the
   * process alive. Throws a RangeError for a bad `everyMs`.
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
  /** How long an owner has to confirm a cancel (default: `REPLICA_DEFAULTS.confirmMs`, transport.ts). */
  confirmMs?: number;
  /** How long a cancel for work no replica has claimed yet is remembered (default: `REPLICA_DEFAULTS`, transport.ts). */
  rememberMs?: number;
  /** An owner's lease on its keys; renewed every third of it (default: `REPLICA_DEFAULTS.leaseMs`, transport.ts). */
  leaseMs?: number;
  /** Bound on each backend operation (default: `REPLICA_DEFAULTS.operationMs`, transport.ts). */
  operationMs?: number;
}
