// Apart from the transports: the public types must not import `pg` or `redis` (optional peers).
import type { CancelBus, CancelBusOptions } from "./cancel-bus.js";
import { PostgresTransport } from "./postgres-transport.js";
import { RedisTransport } from "./redis-transport.js";
import { ReplicaBus } from "./replica-bus.js";

/**
 * A cancel bus on PostgreSQL (LISTEN/NOTIFY, plus unlogged tables `<namespace>_early` and
 * `<namespace>_owner` it creates if missing). A server that is down at start does not fail it.
 */
export function postgresCancelBus(url: string, options: CancelBusOptions = {}): Promise<CancelBus> {
  return ReplicaBus.start(new PostgresTransport(url, options), options);
}

/** A cancel bus on Redis (pub/sub, plus keys `<namespace>:early:*` and `<namespace>:owner:*` with a TTL). */
export function redisCancelBus(url: string, options: CancelBusOptions = {}): Promise<CancelBus> {
  return ReplicaBus.start(new RedisTransport(url, options), options);
}
