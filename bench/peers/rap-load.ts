/**
 * A closed-loop HTTP load for the RAP endpoint benchmark, in a process of its own so the
 * server under test has its event loop to itself. POSTs one cancel notice per request
 * over keep-alive connections and prints {completed, elapsedMs, rps, p50, p99, statuses}.
 *
 *   node rap-load.js <url> <concurrency> <durationMs>
 */
import { Agent, request } from "node:http";
import { closedLoop } from "../lib/load.js";

const [url = "", concurrency = "32", durationMs = "1000"] = process.argv.slice(2);
const target = new URL(url);
const agent = new Agent({ keepAlive: true, maxSockets: Number(concurrency) });
const statuses: Record<string, number> = {};
let n = 0;

function post(): Promise<void> {
  const body = JSON.stringify({ thread_id: "bench-thread", tool_call_id: `call-${n++}` });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: target.hostname,
        port: target.port,
        method: "POST",
        path: target.pathname,
        headers: { "authorization": "Bearer bench", "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
        res.resume();
        res.on("end", resolve);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

await closedLoop(post, Number(concurrency), 200); // warm-up: connections and JIT
for (const key of Object.keys(statuses)) delete statuses[key];
const { latencies: _latencies, ...result } = await closedLoop(post, Number(concurrency), Number(durationMs));
agent.destroy();
process.stdout.write(JSON.stringify({ ...result, statuses }));
