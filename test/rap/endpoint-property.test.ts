import assert from "node:assert/strict";
import fc from "fast-check";
import { CallRegistry } from "../../src/rap/index.js";
import { MAX_ID_LENGTH } from "../../src/rap/messages.js";
import { CancelEndpointCore } from "../../src/rap/endpoint-core.js";

const headers = (h: Record<string, string>) => ({ get: (name: string) => h[name] ?? null });
const request = { method: "POST", url: "/cancel_tool_call", headers: headers({ "content-type": "application/json" }), remoteAddress: "127.0.0.1" };
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const validId = (id: unknown) => typeof id === "string" && id.length > 0 && id.length <= MAX_ID_LENGTH && !CONTROL.test(id);

/** The endpoint's checks, in process: whatever the body, one documented status, and state only on 200. */
describe("RAP endpoint checks (property: any body)", () => {
  const body = fc.oneof(
    fc.string({ unit: "binary" }),
    fc.json(),
    fc.record({ thread_id: fc.oneof(fc.string({ unit: "binary", maxLength: 300 }), fc.anything()), tool_call_id: fc.oneof(fc.string({ unit: "binary", maxLength: 300 }), fc.anything()) }).map((o) => JSON.stringify(o) ?? ""),
    fc.dictionary(fc.string(), fc.string()).map((o) => JSON.stringify(o)),
  );

  it("answers 200 exactly for a valid two-field notice, 400/422 otherwise, and touches the registry only on 200", async () => {
    await fc.assert(
      fc.asyncProperty(body, async (text) => {
        const registry = new CallRegistry();
        const core = new CancelEndpointCore({ registry, authenticate: () => true, rateLimit: false, bodyLimit: 1 << 20 });
        const answer = await core.complete(request, { ok: true, text });
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          assert.equal(answer.status, 400);
          assert.equal(registry.remembered, 0);
          return;
        }
        const valid =
          typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) &&
          Object.keys(parsed).length === 2 &&
          validId((parsed as Record<string, unknown>).thread_id) && validId((parsed as Record<string, unknown>).tool_call_id);
        assert.equal(answer.status, valid ? 200 : 422, text);
        assert.equal(registry.remembered, valid ? 1 : 0);
        if (!valid) assert.match(answer.message, /^(thread_id|tool_call_id): |^unknown field |^must be a JSON object/);
      }),
      { numRuns: 500 },
    );
  });
});
