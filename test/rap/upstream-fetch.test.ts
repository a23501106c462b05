import assert from "node:assert/strict";
import { CallRegistry, fetchForCall } from "../../src/rap/index.js";
import { listen, until } from "./http-support.js";

describe("RAP tool server: an upstream fetch aborted by the call's cancel", () => {
  it("the upstream server sees its request closed, and the work's fetch rejects with the abort", async () => {
    let upstreamClosed = false;
    let arrived = false;
    const upstream = await listen((request, response) => {
      arrived = true;
      // Never answers: only the abort can end this request.
      response.on("close", () => (upstreamClosed = true));
    });
    try {
      const registry = new CallRegistry();
      const call = registry.track("t", "c");
      const work = fetchForCall(call.signal, `${upstream.url}/slow`, { signal: new AbortController().signal });
      await until(() => arrived, "the upstream request");
      assert.equal(registry.cancel("t", "c"), "cancelled");
      await assert.rejects(work, { name: "AbortError", message: "cancelled (external)" });
      await until(() => upstreamClosed, "the upstream request closed");
      call.done();
      assert.equal(registry.size, 0);
    } finally {
      await upstream.close();
    }
  });
});
