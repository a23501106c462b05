import * as acp from "@agentclientprotocol/sdk";
import { withCancellation } from "../../src/index.js";
import { IdRange, type MemorySubject, SESSION, until } from "./subject.js";

/**
 * A bare SDK client (or the same wrapped with withCancellation) over an in-memory
 * TransformStream pair, to a peer that reads requests and never answers until drained.
 */
export function sdkSubject(wrapped: boolean): MemorySubject {
  const toAgent = new TransformStream<unknown, unknown>();
  const toClient = new TransformStream<unknown, unknown>();
  const base = acp.client({ name: "memory-client" });
  const app = wrapped ? withCancellation(base) : base;
  const connection = app.connect({ readable: toClient.readable, writable: toAgent.writable } as acp.Stream);
  const ids = new IdRange();
  const answers = toClient.writable.getWriter();
  void (async () => {
    const reader = toAgent.readable.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      const id = (value as { id?: unknown }).id;
      if (typeof id === "number") ids.add(id);
    }
  })();
  return {
    async load(n) {
      ids.reset();
      const target = ids.seen + n;
      for (let i = 0; i < n; i++) void connection.agent.request("bench/echo", SESSION);
      await until(() => ids.seen >= target, "the requests to leave");
    },
    async drain() {
      for (let id = ids.min; id <= ids.max; id++) {
        const written = answers.write({ jsonrpc: "2.0", id, result: {} });
        if ((id - ids.min) % 256 === 255) await written; // keeps the stream's queue short
      }
      // Answers are taken in order: once the marker's answer is in, so are all the others.
      const target = ids.seen + 1;
      const marker = connection.agent.request("bench/marker", {});
      await until(() => ids.seen >= target, "the marker to leave");
      void answers.write({ jsonrpc: "2.0", id: ids.max, result: {} });
      await marker;
    },
  };
}
