import type { AgentCard } from "@a2a-js/sdk";
import type { AosAgent } from "./aos.js";

/**
 * The AOS description of an A2A agent. `full` keeps every field of the card (the observed agent
 * describes itself in full); otherwise only what identifies it (name, url, version, provider).
 * AOS examples put the endpoint in `url`; a v1.0 card keeps it in its first interface.
 */
export function aosAgent(card: AgentCard, full: boolean): AosAgent {
  const url = card.supportedInterfaces?.[0]?.url;
  const base: AosAgent = { name: card.name };
  if (url !== undefined) base.url = url;
  if (card.version) base.version = card.version;
  if (card.provider !== undefined) base.provider = { name: card.provider.organization, url: card.provider.url };
  if (!full) return base;
  // A plain JSON copy: the card object may carry prototype fields and numeric enums.
  return { ...(JSON.parse(JSON.stringify(card)) as Record<string, unknown>), ...base };
}
