/**
 * A replica process that claims one key and then waits to be killed (the dead-replica tests):
 * argv is backend, url, key, leaseMs, and optionally a record to keep with the claim (the sweep
 * tests) and the replica's name (default "doomed"). It prints "claimed" once another connection to
 * the backend sees its lease (the bus writes a claim's lease asynchronously).
 */
import { postgresCancelBus, redisCancelBus } from "../../src/replicas/index.js";
import { PostgresTransport } from "../../src/replicas/postgres-transport.js";
import { RedisTransport } from "../../src/replicas/redis-transport.js";

const [backend, url, key, leaseMs, record, replica] = process.argv.slice(2);
const open = backend === "postgres" ? postgresCancelBus : redisCancelBus;
const name = replica ?? "doomed";
const bus = await open(url ?? "", { leaseMs: Number(leaseMs), replica: name });
bus.claim(key ?? "", () => new Promise(() => undefined), record !== undefined ? { record } : {});
// The bus's default namespace, as the tests' buses use.
const probe =
  backend === "postgres"
    ? new PostgresTransport({ url: url ?? "", namespace: "acp_cancel", operationMs: 1000 })
    : new RedisTransport({ url: url ?? "", namespace: "acp_cancel" });
await probe.connect(() => undefined, () => undefined);
while ((await probe.owner(key ?? "")) !== name) await new Promise((resolve) => setTimeout(resolve, 10));
await probe.close();
process.stdout.write("claimed\n");
setInterval(() => undefined, 1 << 30);
