import assert from "node:assert/strict";
import { BusUnavailableError, redisRateCounter } from "../../src/replicas/index.js";
import type { RedisRateCounter } from "../../src/replicas/redis-rate-counter.js";
import { type RealServer, startRedis } from "./servers.js";
import { until } from "./until.js";

describe("the guardian's shared rate counter on Redis", function () {
  this.timeout(30_000);
  let redis: RealServer;
  const counters: RedisRateCounter[] = [];
  const open = async () => {
    const counter = await redisRateCounter(redis.url, { operationMs: 300 });
    counters.push(counter);
    return counter;
  };
  before(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    await Promise.allSettled(counters.splice(0).map((counter) => counter.close()));
  });
  after(async () => {
    await redis?.close();
  });

  it("two replicas count one window: 4 cancels split over two guardians count 1, 2, 3, 4", async () => {
    const [a, b] = [await open(), await open()];
    const counts = [];
    for (const counter of [a, b, a, b]) counts.push(await counter.hit("rule:0:agent-x", 60_000));
    assert.deepEqual(counts, [1, 2, 3, 4]);
    assert.equal(await a.hit("rule:0:agent-y", 60_000), 1, "another agent has its own count");
  });

  it("an event leaves the count once the window has passed", async () => {
    const a = await open();
    assert.equal(await a.hit("short", 200), 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(await a.hit("short", 200), 1);
  });

  it("Redis down: a hit rejects at once with a clear error (the guardian's fail policy decides); it counts again once Redis is back", async () => {
    const a = await open();
    await a.hit("fault", 60_000);
    await redis.stop();
    try {
      await assert.rejects(a.hit("fault", 60_000), (error: unknown) => {
        assert.ok(error instanceof BusUnavailableError);
        assert.match(error.message, /redis/);
        return true;
      });
    } finally {
      await redis.start();
    }
    // No persistence: the restarted Redis starts counting from zero.
    const count = await until(() => a.hit("fault", 60_000).catch(() => undefined), "Redis is back");
    assert.equal(count, 1);
  });
});
