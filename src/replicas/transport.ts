/**
 * What a backend supplies to the bus: a broadcast channel, remembered (early) cancels with a
 * lifetime, and owner leases. Every operation may reject; the bus bounds and names failures.
 */

/** A message every replica of the namespace receives. */
export type BusMessage =
  | { t: "cancel"; id: string; key: string; from: string; reason?: string }
  | { t: "ack"; id: string; key: string; to: string; from: string; detail: unknown };

/** A cancel remembered for a key nobody had claimed when it arrived. */
export interface RememberedCancel {
  id: string;
  from: string;
  reason?: string;
}

/** A cancel on its way out: remembered under `key`, published as `message`. */
export interface OutgoingCancel {
  key: string;
  remembered: RememberedCancel;
  message: BusMessage;
}

export interface BusTransport {
  /** The backend's name in errors ("postgres", "redis"). */
  readonly backend: string;
  /** Connects both the command and the listening side; rejects when the backend is unreachable. */
  connect(onMessage: (message: BusMessage) => void, onConnectedChange: (connected: boolean) => void): Promise<void>;
  publish(message: BusMessage): Promise<void>;
  /** Remembers each cancel for `ms`, then publishes it, all in one round trip (early entries first). */
  rememberAndPublish(cancels: readonly OutgoingCancel[], ms: number): Promise<void>;
  /** The live remembered cancels among `keys`. */
  remembered(keys: readonly string[]): Promise<Map<string, RememberedCancel>>;
  /** Writes (or rewrites, after a backend restart lost them) this replica's leases on `keys`. */
  lease(keys: readonly string[], replica: string, ms: number): Promise<void>;
  /** Drops this replica's lease on `key` (only if it still holds it). */
  unlease(key: string, replica: string): Promise<void>;
  /** The replica holding a live lease on `key`, if any. */
  owner(key: string): Promise<string | undefined>;
  close(): Promise<void>;
}

/** Rejects with `error()` when `promise` has not settled within `ms`. */
export function bounded<T>(promise: Promise<T>, ms: number, error: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error()), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
