/**
 * Rate counts shared by replicas of the AOS guardian (acp-cancel/a2a's `RateCounter`, structurally):
 * a sliding window per key as a Redis sorted set, hit atomically by one script on Redis's own clock.
 */
import { randomUUID } from "node:crypto";
import { BusUnavailableError } from "./cancel-bus.js";
import { redisClient } from "./redis-transport.js";
import { bounded, closeWithin, REPLICA_DEFAULTS } from "./transport.js";

const HIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
redis.call('ZADD', KEYS[1], now, ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return redis.call('ZCARD', KEYS[1])`;

export interface RedisRateCounterOptions {
  /** Prefix of every key (default "acp_cancel:rate"). */
  namespace?: string;
  /** Bound on each hit (default: `REPLICA_DEFAULTS`): past it the hit rejects (the guardian's fail policy decides). */
  operationMs?: number;
}

export interface RedisRateCounter {
  /** Records one event for `key` and answers how many it had within `windowMs` (Redis's clock; `now` is unused). */
  hit(key: string, windowMs: number, now?: number): Promise<number>;
  /** Closes the connection; within {@link CLOSE_MS}, then cut, even with Redis hung. */
  close(): Promise<void>;
}

/** A Redis that is down does not fail this: the client reconnects, and hits meanwhile reject with `BusUnavailableError`. */
export async function redisRateCounter(url: string, options: RedisRateCounterOptions = {}): Promise<RedisRateCounter> {
  const namespace = options.namespace ?? "acp_cancel:rate";
  const operationMs = options.operationMs ?? REPLICA_DEFAULTS.operationMs;
  const client = await redisClient(url, operationMs);
  await bounded(client.connect(), operationMs * 5, () => new BusUnavailableError("redis", "connect")).catch(() => undefined);
  const writer = randomUUID().slice(0, 8);
  let sequence = 0;
  return {
    async hit(key, windowMs) {
      const member = `${writer}:${++sequence}`;
      const count = await bounded(
        Promise.resolve().then(() => client.eval(HIT, { keys: [`${namespace}:${key}`], arguments: [String(windowMs), member] })),
        operationMs,
        () => new BusUnavailableError("redis", "rate hit"),
      ).catch((error: unknown) => {
        throw error instanceof BusUnavailableError ? error : new BusUnavailableError("redis", "rate hit", { cause: error });
      });
      return Number(count);
    },
    async close() {
      // Bounded: a hung Redis never answers QUIT, and the guardian's shutdown waits on this.
      if (!client.isOpen) return client.destroy();
      await closeWithin(client.close(), () => client.isOpen && client.destroy());
    },
  };
}
