import type { AgentCard } from "@a2a-js/sdk";
import type { AosAgent } from "./aos.js";

/** An A2A card as AOS describes it: in full (the observed agent), or only what identifies it. */
export function aosAgent(card: AgentCard, full: boolean): AosAgent {
  // AOS puts the endpoint in `url`; a v1.0 card keeps it in its first interface.
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
