/**
 * The AOS `tasks/cancel` guard request, written from the examples of seed 004 (client and
 * server hook), independently of the library's own schemas: what every request a hook sends
 * to the guardian must look like.
 */
import { z } from "zod";

const Agent = z.looseObject({
  name: z.string().min(1),
  url: z.string().optional(),
  version: z.string().optional(),
});

const Metadata = z.record(z.string(), z.unknown()).optional();
const RpcId = z.union([z.string(), z.number()]);

/** The A2A message as it goes on the wire: v0.3 `tasks/cancel` or v1.0 `CancelTask`. */
export const A2aCancelShape = z.union([
  z.strictObject({
    jsonrpc: z.literal("2.0"),
    id: RpcId,
    method: z.literal("tasks/cancel"),
    params: z.strictObject({ id: z.string().min(1), metadata: Metadata }),
  }),
  z.strictObject({
    jsonrpc: z.literal("2.0"),
    id: RpcId,
    method: z.literal("CancelTask"),
    params: z.strictObject({ id: z.string().min(1), metadata: Metadata, tenant: z.string().optional() }),
  }),
]);

export const AosCancelRequestShape = z.strictObject({
  jsonrpc: z.literal("2.0"),
  id: z.uuid(),
  method: z.literal("tasks/cancel"),
  params: z.strictObject({
    payload: A2aCancelShape,
    reasoning: z.string().optional(),
    context: z.strictObject({
      from: z.strictObject({ agent: Agent, role: z.literal("client") }),
      to: z.strictObject({ agent: Agent, role: z.literal("server") }),
    }),
  }),
});
export type AosCancelRequest = z.infer<typeof AosCancelRequestShape>;

/** The seed's client-hook example, verbatim in content: the schema must accept it. */
export const SEED_CLIENT_EXAMPLE = {
  jsonrpc: "2.0",
  id: "2b10e2fd-f89c-4ff7-b972-5513cd2daeb4",
  method: "tasks/cancel",
  params: {
    payload: { jsonrpc: "2.0", id: 100, method: "tasks/cancel", params: { id: "2232321", metadata: {} } },
    reasoning: "This task is taking too long when it should not.",
    context: {
      from: {
        agent: {
          name: "Content generator",
          url: "https://cooking-assistant.openai.com/api/v1",
          instructions: "You are a helpful assistant that can answer questions and help with tasks.",
          version: "1.0.0",
          provider: { name: "OpenAI", url: "https://openai.com" },
        },
        role: "client",
      },
      to: { agent: { url: "https://api.story.com/v1", name: "Story teller", version: "1.0.0" }, role: "server" },
    },
  },
};

/** Parses one recorded guardian request, failing the test with the first problem. */
export function aosRequest(message: unknown): AosCancelRequest {
  const parsed = AosCancelRequestShape.safeParse(message);
  if (!parsed.success) {
    throw new Error(`not an AOS tasks/cancel request: ${JSON.stringify(parsed.error.issues[0])}\n${JSON.stringify(message)}`);
  }
  return parsed.data;
}
