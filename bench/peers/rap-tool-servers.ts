/**
 * N tool servers for the RAP fan-out benchmark, in a process of their own: a real runtime's
 * tool servers are elsewhere, so their HTTP parsing must not share the sender's event loop.
 * Each answers a notice after `answerMs`. Prints the ports as one JSON line, then answers
 * each stdin line with the arrival times recorded since the last one (absolute ms:
 * `performance.timeOrigin + performance.now()`, comparable across processes on one machine).
 *
 *   node rap-tool-servers.js <n> <answerMs>
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";

const [count = "100", answerMs = "50"] = process.argv.slice(2);
const arrivals: number[] = [];
const servers: Server[] = [];
for (let i = 0; i < Number(count); i++) {
  const server = createServer((request, response) => {
    arrivals.push(performance.timeOrigin + performance.now());
    request.resume();
    setTimeout(() => response.end(), Number(answerMs));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
}
process.stdout.write(`${JSON.stringify(servers.map((s) => (s.address() as AddressInfo).port))}\n`);
const lines = createInterface({ input: process.stdin });
lines.on("line", () => {
  process.stdout.write(`${JSON.stringify(arrivals)}\n`);
  arrivals.length = 0;
});
lines.on("close", () => {
  for (const server of servers) server.closeAllConnections();
  process.exit(0);
});
