import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { wireSchemas } from "../../scripts/wire-schemas.js";
import { CancellationCapabilitySchema, OUR_CAPABILITY } from "../../src/acp/index.js";

const schemaDir = fileURLToPath(new URL("../../../schema/", import.meta.url));

describe("schema/", () => {
  for (const [name, schema] of Object.entries(wireSchemas())) {
    it(`${name} matches the zod schema in src (run 'npm run schema' if this fails)`, () => {
      const onDisk = JSON.parse(readFileSync(`${schemaDir}${name}`, "utf8"));
      assert.deepEqual(onDisk, JSON.parse(JSON.stringify(schema)));
    });
  }

  it("our advertised capability satisfies its own schema", () => {
    assert.deepEqual(CancellationCapabilitySchema.parse(OUR_CAPABILITY), OUR_CAPABILITY);
  });
});
