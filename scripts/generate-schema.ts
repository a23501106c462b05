/** Writes schema/*.json from the zod schemas (scripts/wire-schemas.ts; run: npm run schema). */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { wireSchemas } from "./wire-schemas.js";

const schemaDir = fileURLToPath(new URL("../../schema/", import.meta.url));
for (const [name, schema] of Object.entries(wireSchemas())) {
  writeFileSync(`${schemaDir}${name}`, `${JSON.stringify(schema, null, 2)}\n`);
  console.log(`wrote schema/${name}`);
}
