/** The JSON Schemas of what acp-cancel adds to the ACP wire, from the zod schemas (schema/*.json; npm run schema). */
import { z } from "zod";
import { CANCEL_REASONS } from "../src/core/index.js";
import { CancellationCapabilitySchema } from "../src/acp/index.js";

// A loose object: handlers may add their own `data`. Nothing reads it at run time: it documents the wire.
const CancellationDataSchema = z
  .looseObject({
    reason: z.enum(CANCEL_REASONS as [string, ...string[]]).describe("Why the request was cancelled."),
    detail: z.string().optional().describe("Human-readable detail, e.g. which deadline or which exit."),
    originalError: z
      .object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() })
      .optional()
      .describe("The handler's own error, when it answered a cancelled request with a different error."),
  })
  .describe("The `data` of a -32800 error produced by acp-cancel.");

/** Every JSON document this library adds to the ACP wire, by the file name of its JSON Schema. */
export function wireSchemas(): Record<string, unknown> {
  return {
    "cancellation-capability.schema.json": {
      $id: "urn:acp-cancel:schema:cancellation-capability",
      title: "acp-cancel cancellation capability (under _meta['acp-cancel/cancellation'] in initialize)",
      ...z.toJSONSchema(CancellationCapabilitySchema),
    },
    "cancellation-data.schema.json": {
      $id: "urn:acp-cancel:schema:cancellation-data",
      title: "data of a -32800 Request cancelled error produced by acp-cancel",
      ...z.toJSONSchema(CancellationDataSchema),
    },
  };
}
