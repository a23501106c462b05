/**
 * A replica process that claims one key and then waits to be killed (the dead-replica test):
 * argv is backend, url, key, leaseMs. It prints "claimed" half a lease after its claim.
 */
import { postgresCancelBus, redisCancelBus } from "../../src/replicas/index.js";

const [backend, url, key, leaseMs] = process.argv.slice(2);
const open = backend === "postgres" ? postgresCancelBus : redisCancelBus;
const bus = await open(url ?? "", { leaseMs: Number(leaseMs), replica: "doomed" });
bus.claim(key ?? "", () => new Promise(() => undefined));
// The claim leases asynchronously: usually written half a lease later, but the test does not
// rely on it (it asks until the lease is seen).
setTimeout(() => process.stdout.write("claimed\n"), Number(leaseMs) / 2);
setInterval(() => undefined, 1 << 30);
