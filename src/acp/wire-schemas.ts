import { z } from "zod";
import { CancellationCapabilitySchema, CancellationDataSchema } from "./capability.js";

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
