import { CancelEngine } from "../../src/index.js";
import { freshIds, request, result } from "../engine/messages.js";
import type { MemorySubject } from "./subject.js";
import { SESSION } from "./subject.js";

/** CancelEngine alone, fed request messages in process: no I/O, no-op deliver. */
export function engineSubject(): MemorySubject {
  const engine = new CancelEngine(() => {});
  let first = 0;
  let count = 0;
  return {
    async load(n) {
      first = freshIds(n);
      count = n;
      for (let i = 0; i < n; i++) engine.receive("client", request(first + i, "bench/echo", SESSION));
    },
    async drain() {
      for (let i = 0; i < count; i++) engine.receive("agent", result(first + i));
      if (engine.inFlight.client !== 0) throw new Error("engine not quiescent");
    },
  };
}
