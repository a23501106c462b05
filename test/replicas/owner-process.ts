/**
 * A replica process that claims one key and then waits to be killed (the dead-replica tests):
 * argv is backend, url, key, leaseMs, and optionally a record to keep with the claim (the sweep
 * tests) and the replica's name (default "doomed"). It prints "claimed" once another connection to
 * the backend sees its lease (the bus writes a claim's lease asynchronously).
 */
import { postgresCancelBus, redisCancelBus } from "../../src/replicas/index.js";
import { probeTransport } from "./backends.js";

const [backend, url, key, leaseMs, record, replica] = process.argv.slice(2);
const open = backend === "postgres" ? postgresCancelBus : redisCancelBus;
const name = replica ?? "doomed";
const bus = await open(url ?? "", { leaseMs: Number(leaseMs), replica: name });
bus.claim(key ?? "", () => new Promise(() => undefined), record !== undefined ? { record } : {});
const probe = await probeTransport(backend === "postgres" ? "postgres" : "redis", url ?? "");
while ((await probe.holder(key ?? "")).owner !== name) await new Promise((resolve) => setTimeout(resolve, 10));
await probe.close();
process.stdout.write("claimed\n");
setInterval(() => undefined, 1 << 30);
