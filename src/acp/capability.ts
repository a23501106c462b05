import { z } from "zod";

/** Our key under the capabilities' `_meta` (ACP forbids custom fields at the root of spec types). */
export const CAPABILITY_KEY = "acp-cancel/cancellation";

// A loose object: a newer peer may add fields. Its JSON Schema (and the -32800 `data` one): scripts/wire-schemas.ts.
export const CancellationCapabilitySchema = z
  .looseObject({
    version: z.literal(1).describe("Version of this capability object."),
    cancelRequest: z.boolean().describe("Every request named by `$/cancel_request` is answered promptly: -32800, or a (partial) result."),
    cascade: z.boolean().describe("Cancelling a request cancels the requests nested under it."),
    sessionCancel: z.boolean().describe("`session/cancel` ends the turn with stopReason `cancelled` and cancels its nested requests."),
  })
  .describe("acp-cancel cancellation capability, advertised under `_meta` in `initialize`.");

export type CancellationCapability = z.infer<typeof CancellationCapabilitySchema>;

/** What this library guarantees for the side it speaks for. */
export const OUR_CAPABILITY: CancellationCapability = Object.freeze({
  version: 1,
  cancelRequest: true,
  cascade: true,
  sessionCancel: true,
});

/** The `_meta` object (ACP's property bag) of params, a result or capabilities, if it has one. */
export function metaOf(holder: unknown): Record<string, unknown> | undefined {
  if (typeof holder !== "object" || holder === null) return undefined;
  const meta = (holder as { _meta?: unknown })._meta;
  return typeof meta === "object" && meta !== null && !Array.isArray(meta) ? (meta as Record<string, unknown>) : undefined;
}

/** Reads a peer's capability from a capabilities object; undefined when absent or malformed. */
export function readCapability(capabilities: unknown): CancellationCapability | undefined {
  const raw = metaOf(capabilities)?.[CAPABILITY_KEY];
  if (raw === undefined) return undefined;
  const parsed = CancellationCapabilitySchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

/** A copy of `holder` whose `field` capabilities (the version's) carry ours under `_meta`. */
export function withCapability<T>(holder: T, field: string): T {
  if (typeof holder !== "object" || holder === null) return holder;
  const capabilities = (holder as Record<string, unknown>)[field];
  const base = typeof capabilities === "object" && capabilities !== null ? capabilities : {};
  const meta = metaOf(base) ?? {};
  return { ...holder, [field]: { ...base, _meta: { ...meta, [CAPABILITY_KEY]: OUR_CAPABILITY } } };
}
