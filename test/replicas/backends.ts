/** The backends every contract test runs against: a real server each, and a bus on it. */
import { type CancelBus, type CancelBusOptions, postgresCancelBus, redisCancelBus } from "../../src/replicas/index.js";
import { PostgresTransport } from "../../src/replicas/postgres-transport.js";
import { RedisTransport } from "../../src/replicas/redis-transport.js";
import type { BusTransport } from "../../src/replicas/transport.js";
import { type RealServer, startPostgres, startRedis } from "./servers.js";

export interface Backend {
  name: "postgres" | "redis";
  start(): Promise<RealServer>;
  bus(url: string, options?: CancelBusOptions): Promise<CancelBus>;
  /** A URL on which nothing listens (the backend down at start). */
  deadUrl(port: number): string;
}

export const BACKENDS: Backend[] = [
  {
    name: "postgres",
    start: startPostgres,
    bus: postgresCancelBus,
    deadUrl: (port) => `postgres://postgres@127.0.0.1:${port}/postgres`,
  },
  {
    name: "redis",
    start: startRedis,
    bus: redisCancelBus,
    deadUrl: (port) => `redis://127.0.0.1:${port}`,
  },
];

/** Buses opened by a test, all closed in its `afterEach` whatever happened. */
export class OpenBuses {
  private readonly buses: CancelBus[] = [];
  async open(backend: Backend, url: string, options?: CancelBusOptions): Promise<CancelBus> {
    const bus = await backend.bus(url, options);
    this.buses.push(bus);
    return bus;
  }
  async closeAll(): Promise<void> {
    await Promise.allSettled(this.buses.splice(0).map((bus) => bus.close()));
  }
}

/** A connection of its own to a bus's backend (default namespace), to see what the buses wrote. */
export async function probeTransport(backend: Backend["name"], url: string): Promise<BusTransport> {
  const probe = backend === "postgres"
    ? new PostgresTransport(url, { namespace: "acp_cancel", operationMs: 1000 })
    : new RedisTransport(url, { namespace: "acp_cancel" });
  await probe.connect(() => undefined, () => undefined);
  return probe;
}
