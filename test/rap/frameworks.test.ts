import assert from "node:assert/strict";
import { CallRegistry } from "../../src/rap/index.js";
import { MOUNTS } from "./mounts.js";

const GOOD = "Bearer good-token";

/** The mountings docs/rap.md shows, each driven over real HTTP. */
for (const [name, mount] of MOUNTS) {
  describe(`RAP cancel endpoint mounted in ${name}`, () => {
    it("cancels a tracked call with 200 and an empty body, and gives the documented statuses", async () => {
      const registry = new CallRegistry();
      const server = await mount({ registry, authenticate: (r) => r.headers.get("authorization") === GOOD });
      try {
        const call = registry.track("thread", "call");
        const post = async (body: string, headers: Record<string, string> = { "authorization": GOOD, "content-type": "application/json" }, method = "POST") => {
          const response = await fetch(`${server.url}/cancel_tool_call`, { method, headers, ...(method === "POST" ? { body } : {}) });
          return [response.status, await response.text()] as const;
        };
        const valid = JSON.stringify({ thread_id: "thread", tool_call_id: "call" });
        assert.deepEqual(await post(valid, { "content-type": "application/json" }), [401, "not authenticated\n"]);
        assert.deepEqual(await post("", { authorization: GOOD }, "GET"), [405, "method GET not allowed: use POST\n"]);
        assert.deepEqual((await post(valid, { "authorization": GOOD, "content-type": "text/plain" }))[0], 415);
        assert.deepEqual(await post(`{"pad":"${"x".repeat(10 * 1024 * 1024)}"}`), [413, "body over 4096 bytes\n"]);
        assert.deepEqual(await post("{not json"), [400, "body is not JSON\n"]);
        assert.deepEqual(await post(JSON.stringify({ thread_id: "thread" })), [422, "tool_call_id: is required\n"]);
        assert.equal(call.signal.aborted, false);
        assert.deepEqual(await post(valid), [200, ""]);
        assert.equal(call.signal.aborted, true);
        call.done();
        assert.equal(registry.size, 0);
      } finally {
        await server.close();
      }
    });
  });
}
