/**
 * A result schema that accepts any answer, in the two forms the SDK lines take: `safeParse` (1.x, as a
 * zod 3 schema) and Standard Schema (2.x). The task calls check the answers themselves (task-shapes.ts).
 */
export const ANY_RESULT = {
  "safeParse": (data: unknown) => ({ success: true as const, data }),
  "~standard": { version: 1 as const, vendor: "acp-cancel", validate: (value: unknown) => ({ value }) },
};
