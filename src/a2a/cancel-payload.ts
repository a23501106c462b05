import type { AgentCard } from "@a2a-js/sdk";
import { type A2aCancelMessage, type AosAgent, isObject } from "./aos.js";

/** The A2A protocol version a connection speaks, as the `A2A-Version` header names it. */
export type A2aVersion = "0.3" | "1.0";

/** A cancel's fields that matter to a guard, whichever SDK type carried them. */
export interface CancelInput {
  id: string;
  metadata?: Record<string, unknown> | undefined;
  tenant?: string | undefined;
}

/** Reads the version from a header value; v0.3 is what an absent header means (A2A's rule). */
export function a2aVersion(header: string | undefined): A2aVersion {
  return header === undefined || header === "" || header.startsWith("0.") ? "0.3" : "1.0";
}

/** The cancel as a JSON-RPC message on the wire; hooks get the decoded input only, so `rpcId` is the caller's. */
export function cancelMessage(version: A2aVersion, input: CancelInput, rpcId: string | number): A2aCancelMessage {
  const params: A2aCancelMessage["params"] = { id: input.id, metadata: input.metadata ?? {} };
  if (version === "0.3") return { jsonrpc: "2.0", id: rpcId, method: "tasks/cancel", params };
  if (input.tenant !== undefined && input.tenant !== "") params.tenant = input.tenant;
  return { jsonrpc: "2.0", id: rpcId, method: "CancelTask", params };
}

/** Checks what a hook is about to guard; a message naming the first bad field, or undefined. */
export function cancelInputProblem(input: unknown): string | undefined {
  if (typeof input !== "object" || input === null) return "the cancel needs params, got none";
  const { id, metadata, tenant } = input as Record<string, unknown>;
  if (typeof id !== "string" || id.trim() === "") return "the cancel needs a task id (a non-empty string)";
  if (id.length > 1024) return "the task id is longer than 1024 characters";
  if (metadata !== undefined && !isObject(metadata)) return "the cancel's metadata must be an object";
  if (tenant !== undefined && typeof tenant !== "string") return "the cancel's tenant must be a string";
  return undefined;
}

/** An A2A card as AOS describes it: in full (the observed agent), or only what identifies it. */
export function aosAgent(card: AgentCard, full: boolean): AosAgent {
  // A v1.0 card keeps AOS's `url` in its first interface.
  const url = card.supportedInterfaces?.[0]?.url;
  const base: AosAgent = { name: card.name };
  if (url !== undefined) base.url = url;
  if (card.version) base.version = card.version;
  if (card.provider !== undefined) base.provider = { name: card.provider.organization, url: card.provider.url };
  if (!full) return base;
  // A plain JSON copy: the card object may carry prototype fields and numeric enums.
  return { ...(JSON.parse(JSON.stringify(card)) as Record<string, unknown>), ...base };
}

/** An agent given as an A2A card (described in full) or already as AOS describes it. */
export function toAosAgent(card: AosAgent | AgentCard): AosAgent {
  return Array.isArray((card as AgentCard).supportedInterfaces) ? aosAgent(card as AgentCard, true) : (card as AosAgent);
}
