import type { CancelBus, CancelBusOptions } from "./cancel-bus.js";
import { PostgresTransport } from "./postgres-transport.js";
import { RedisTransport } from "./redis-transport.js";
import { ReplicaBus } from "./replica-bus.js";
import { REPLICA_DEFAULTS } from "./transport.js";

const DEFAULT_NAMESPACE = "acp_cancel";

/**
 * A cancel bus on PostgreSQL (LISTEN/NOTIFY, plus unlogged tables `<namespace>_early` and
 * `<namespace>_owner` it creates if missing). A server that is down at start does not fail it.
 */
export function postgresCancelBus(url: string, options: CancelBusOptions = {}): Promise<CancelBus> {
  const namespace = options.namespace ?? DEFAULT_NAMESPACE;
  const operationMs = options.operationMs ?? REPLICA_DEFAULTS.operationMs;
  return ReplicaBus.start(new PostgresTransport({ url, namespace, operationMs }), options);
}

/** A cancel bus on Redis (pub/sub, plus keys `<namespace>:early:*` and `<namespace>:owner:*` with a TTL). */
export function redisCancelBus(url: string, options: CancelBusOptions = {}): Promise<CancelBus> {
  return ReplicaBus.start(new RedisTransport({ url, namespace: options.namespace ?? DEFAULT_NAMESPACE }), options);
}
