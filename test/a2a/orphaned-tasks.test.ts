import assert from "node:assert/strict";
import { sweepContext } from "../../src/a2a/orphaned-tasks.js";

/**
 * A claim's record comes from the shared bus, which anyone with access to it can write: the
 * sweep reads it as untrusted text. These are the records a Redis HSET or a PostgreSQL UPDATE could
 * leave there; each is refused with one error naming it (escaped), and the sweep goes on.
 */
describe("A2A orphan sweep: a claim record is untrusted input", () => {
  it("refuses a record that is not JSON, not an object, or has no tenant, naming it escaped and cut short", async () => {
    for (const record of ["not json \u001b[31m\u0007", "null", "[]", '{"user":{}}', "x".repeat(5000)]) {
      await assert.rejects(sweepContext(record), (error: unknown) => {
        assert.ok(error instanceof Error && error.constructor === Error, `${String(error)} for ${record.slice(0, 40)}`);
        assert.match(error.message, /^an unreadable claim record: /);
        // eslint-disable-next-line no-control-regex
        assert.equal(/[\u0000-\u001f]/.test(error.message), false, "no raw control character");
        assert.ok(error.message.length < 300, "cut short");
        return true;
      });
    }
  });

  it("reads a well-formed record's tenant and user; a user of the wrong shape is left out", async () => {
    const named = await sweepContext('{"tenant":"t1","user":{"userName":"ann","isAuthenticated":true}}');
    assert.equal(named.tenant, "t1");
    assert.equal(named.user?.userName, "ann");
    for (const user of ['"ann"', "null", "[]"]) {
      // A null user threw a TypeError ("Cannot read properties of null") that named no record.
      const odd = await sweepContext(`{"tenant":"t2","user":${user}}`);
      assert.equal(odd.tenant, "t2");
      assert.equal(odd.user?.userName ?? "", "");
    }
  });
});
