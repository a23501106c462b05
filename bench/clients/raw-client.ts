import type { Child } from "../lib/child.js";
import { processCpuMicros } from "../lib/cpu.js";
import { type LoadSample, loadSample } from "../lib/load.js";

const RING = 4096;

export interface RawClient {
  /** A closed loop of raw ndjson requests: `concurrency` in flight for `durationMs`. */
  run(concurrency: number, durationMs: number): Promise<LoadSample>;
  /**
   * An open loop: a burst of `burst` requests every millisecond for `durationMs`. Returns the
   * CPU time the child process (the process in the middle, for a relayed route) spent per
   * answered request, in µs: a figure that does not depend on how the loop's batches travel,
   * and moves less than throughput when the machine is shared. NaN without /proc.
   */
  cpuPerRequest(burst: number, durationMs: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * A load generator with no SDK: writes request lines straight to the child's stdin and
 * reads answers straight from its stdout, one write per chunk of answers.
 */
export function rawClient(child: Child): RawClient {
  const sentAt = new Float64Array(RING);
  let nextId = 1;
  let pending = "";
  let onAnswer: ((id: number, now: number) => string) | undefined;
  let answered = 0;
  const line = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"bench/echo","params":{}}\n`;

  child.proc.stdout.on("data", (chunk: Buffer) => {
    const text = pending + chunk.toString("latin1");
    const now = performance.now();
    let out = "";
    let start = 0;
    for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
      const answer = JSON.parse(text.slice(start, newline)) as { id: number };
      start = newline + 1;
      answered++;
      if (onAnswer !== undefined) out += onAnswer(answer.id, now);
    }
    pending = text.slice(start);
    if (out.length > 0) child.proc.stdin.write(out);
  });

  return {
    run(concurrency, durationMs) {
      return new Promise((resolve) => {
        const latencies: number[] = [];
        const started = performance.now();
        const end = started + durationMs;
        let inFlight = 0;
        const send = (now: number) => {
          const id = nextId++;
          sentAt[id % RING] = now;
          inFlight++;
          return line(id);
        };
        onAnswer = (id, now) => {
          inFlight--;
          latencies.push(now - (sentAt[id % RING] as number));
          if (now < end) return send(now);
          if (inFlight === 0) {
            onAnswer = undefined;
            resolve(loadSample(latencies, now - started));
          }
          return "";
        };
        let burst = "";
        for (let i = 0; i < concurrency; i++) burst += send(started);
        child.proc.stdin.write(burst);
      });
    },
    async cpuPerRequest(burst, durationMs) {
      const pid = child.proc.pid;
      if (pid === undefined) return Number.NaN;
      const before = { cpu: processCpuMicros(pid), answered };
      let sent = 0;
      const end = performance.now() + durationMs;
      await new Promise<void>((resolve) => {
        const timer = setInterval(() => {
          if (performance.now() >= end) {
            clearInterval(timer);
            resolve();
            return;
          }
          let lines = "";
          for (let i = 0; i < burst; i++) lines += line(nextId++);
          sent += burst;
          child.proc.stdin.write(lines);
        }, 1);
      });
      // Every request answered before the CPU is read.
      for (let waited = 0; answered - before.answered < sent && waited < 5000; waited += 5) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return (processCpuMicros(pid) - before.cpu) / (answered - before.answered);
    },
    close: () => child.stop(),
  };
}
