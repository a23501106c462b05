import { createHash, timingSafeEqual } from "node:crypto";
import type { ParsedRules } from "./guardian-rules.js";

/** Who a request to the reference guardian comes from, once its bearer token is checked. */
export interface GuardianCaller {
  /** Its rate key: `agent:<name>` for a token bound to an agent, else `address:<ip>` (a shared token proves no one). */
  readonly client: string;
  /** The agent its token is bound to, when it is. */
  readonly agent?: string;
}

/**
 * Identifies callers by the rules' bearer tokens, kept as SHA-256 digests and all compared in constant
 * time (no length or near match shows). Without tokens every request is let in, known by its address.
 */
export function guardianTokens(rules: Pick<ParsedRules, "token" | "tokens">) {
  const known: { readonly digest: Buffer; readonly agent?: string }[] = [
    ...(rules.token === undefined ? [] : [{ digest: digest(rules.token) }]),
    ...(rules.tokens ?? []).map(({ agent, token }) => ({ digest: digest(token), agent })),
  ];
  return (header: string | undefined, address: string | undefined): GuardianCaller | undefined => {
    const byAddress = { client: `address:${address ?? "unknown"}` };
    if (known.length === 0) return byAddress;
    // The auth scheme is case-insensitive (RFC 7235 2.1).
    const scheme = header === undefined ? null : BEARER.exec(header);
    if (header === undefined || scheme === null) return undefined;
    const given = digest(header.slice(scheme[0].length));
    let found: (typeof known)[number] | undefined;
    for (const token of known) if (timingSafeEqual(given, token.digest) && found === undefined) found = token;
    if (found === undefined) return undefined;
    return found.agent === undefined ? byAddress : { client: `agent:${found.agent}`, agent: found.agent };
  };
}

const BEARER = /^bearer +/i;

function digest(token: string): Buffer {
  return createHash("sha256").update(token).digest();
}
