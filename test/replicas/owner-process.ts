/**
 * A replica process that claims one key and then waits to be killed (the dead-replica tests):
 * argv is backend, url, key, leaseMs, and optionally a record to keep with the claim (the sweep
 * tests) and the replica's name (default "doomed"). It prints "claimed" once the lease is written.
 */
import { postgresCancelBus, redisCancelBus } from "../../src/replicas/index.js";

const [backend, url, key, leaseMs, record, replica] = process.argv.slice(2);
const open = backend === "postgres" ? postgresCancelBus : redisCancelBus;
const bus = await open(url ?? "", { leaseMs: Number(leaseMs), replica: replica ?? "doomed" });
bus.claim(key ?? "", () => new Promise(() => undefined), record !== undefined ? { record } : {});
// The claim leases asynchronously: one renewal period later it is certainly written.
setTimeout(() => process.stdout.write("claimed\n"), Number(leaseMs) / 2);
setInterval(() => undefined, 1 << 30);
