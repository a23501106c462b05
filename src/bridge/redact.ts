/** What a secret is replaced with in a trace. */
export const REDACTED = "[redacted]";

/** A key whose value is a credential (counts such as `inputTokens` are not). */
function isSecretKey(key: string): boolean {
  const name = key.toLowerCase().replace(/[-_]/g, "");
  if (name.includes("token")) return !name.endsWith("tokens");
  return /secret|passw(or)?d|passphrase|apikey|authorization|cookie|credential|privatekey/.test(name);
}

/** `{name, value}` pairs (ACP's `env` and `headers` entries) with every value hidden. */
function hideValues(entries: unknown[], hide: (name: unknown) => boolean): unknown[] {
  return entries.map((entry) => {
    if (typeof entry !== "object" || entry === null || !("value" in entry)) return entry;
    return hide((entry as { name?: unknown }).name) ? { ...entry, value: REDACTED } : entry;
  });
}

/** A `JSON.stringify` replacer that hides `env` values, credential headers and keys, `Bearer`/`Basic` values. */
export function redactSecrets(key: string, value: unknown): unknown {
  if (key === "") return value;
  if (isSecretKey(key) && value !== null && value !== undefined) return REDACTED;
  if (key === "env") {
    if (Array.isArray(value)) return hideValues(value, () => true);
    if (typeof value === "object" && value !== null)
      return Object.fromEntries(Object.keys(value).map((name) => [name, REDACTED]));
  }
  if (key === "headers" && Array.isArray(value))
    return hideValues(value, (name) => typeof name === "string" && isSecretKey(name));
  if (typeof value === "string" && /^(bearer|basic)\s/i.test(value)) return REDACTED;
  return value;
}
