import type { Child } from "../lib/child.js";
import { type LoadResult, loadResult } from "../lib/load.js";

const RING = 4096;

export interface RawClient {
  /** A closed loop of raw ndjson requests: `concurrency` in flight for `durationMs`. */
  run(concurrency: number, durationMs: number): Promise<LoadResult>;
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
  const line = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"bench/echo","params":{}}\n`;

  child.proc.stdout.on("data", (chunk: Buffer) => {
    const text = pending + chunk.toString("latin1");
    const now = performance.now();
    let out = "";
    let start = 0;
    for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
      const answer = JSON.parse(text.slice(start, newline)) as { id: number };
      start = newline + 1;
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
            resolve(loadResult(latencies, now - started));
          }
          return "";
        };
        let burst = "";
        for (let i = 0; i < concurrency; i++) burst += send(started);
        child.proc.stdin.write(burst);
      });
    },
    close: () => child.stop(),
  };
}
