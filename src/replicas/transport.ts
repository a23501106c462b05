/** What a backend supplies to the bus. Every operation may reject; the bus bounds and names failures. */
import type { OrphanedClaim } from "./cancel-bus.js";

/** A cancel as published; also what is remembered under its key when nobody had claimed it yet. */
export interface CancelMessage {
  t: "cancel";
  id: string;
  key: string;
  from: string;
  reason?: string;
}

export type BusMessage = CancelMessage | { t: "ack"; id: string; key: string; to: string; from: string; detail: unknown };

export interface KeyHolder {
  owner: string | undefined;
  recorded: string | undefined;
}

export interface LeasedKey {
  key: string;
  record: string | undefined;
}

/** Gets each message as the backend delivered it (parsed by {@link parseBusMessage}). */
export type RawListener = (raw: string | undefined) => void;

export interface BusTransport {
  readonly backend: string;
  /** Connects both the command and the listening side; rejects when the backend is unreachable. */
  connect(onMessage: RawListener, onConnectedChange: (connected: boolean) => void): Promise<void>;
  publish(message: BusMessage): Promise<void>;
  /** Remembers each cancel under its key for `ms`, then publishes it, all in one round trip (early entries first). */
  rememberAndPublish(cancels: readonly CancelMessage[], ms: number): Promise<void>;
  /** The live remembered cancels among `keys` (never empty). */
  remembered(keys: readonly string[]): Promise<Map<string, CancelMessage>>;
  /** Writes (or rewrites) this replica's leases on `keys`, and their claim records, in one round trip. */
  lease(keys: readonly LeasedKey[], replica: string, ms: number): Promise<void>;
  /** Drops this replica's lease on `key` if it still holds it; with `dropRecord` (the work ended), its record too. */
  unlease(key: string, replica: string, dropRecord: boolean): Promise<void>;
  /** Up to `limit` claim records of keys starting with `prefix` whose lease is gone (none, or expired). */
  orphans(prefix: string, limit: number): Promise<OrphanedClaim[]>;
  /** Drops `orphan`'s record if it still names the same replica and still has no live lease. */
  forget(orphan: OrphanedClaim): Promise<void>;
  /** The replica with a live lease on `key`, and the one its claim record names, in one round trip. */
  holder(key: string): Promise<KeyHolder>;
  close(): Promise<void>;
  /** Cuts every connection at once (a close that did not finish in time). */
  destroy(): void;
}

/** A message as the backend delivered it, or undefined when it is not one (another writer on the channel). */
export function parseBusMessage(raw: string | undefined): BusMessage | undefined {
  try {
    const message = JSON.parse(raw ?? "") as BusMessage;
    return typeof message === "object" && message !== null && typeof message.key === "string" ? message : undefined;
  } catch {
    return undefined;
  }
}

/** Rejects with `error()` when `promise` has not settled within `ms`. */
export function bounded<T>(promise: Promise<T>, ms: number, error: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error()), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** How long closing a bus or a rate counter may take before its connections are cut (a hung backend). */
export const CLOSE_MS = 2000;

/** The cancel bus's and the rate counter's defaults (times in ms). */
export const REPLICA_DEFAULTS = { namespace: "acp_cancel", confirmMs: 2000, rememberMs: 30_000, leaseMs: 3000, operationMs: 1000 } as const;

/** A lost backend is retried after 50 ms, doubling, at most 1 s apart. */
export const reconnectDelay = (retries: number) => Math.min(50 * 2 ** Math.min(retries, 5), 1000);

/** Waits for `closing` at most {@link CLOSE_MS}, then cuts the connections with `destroy`; never rejects. */
export async function closeWithin(closing: Promise<unknown>, destroy: () => void): Promise<void> {
  await bounded(closing, CLOSE_MS, () => new Error("close took too long")).catch(() => destroy());
}
