// What is hidden, and why so: docs/decisions.md, "Bridge: trace files".

/** What a secret is replaced with in a trace. */
export const REDACTED = "[redacted]";

/** A name's words, lower case: `X-Api-Key`, `x_api_key` and `xApiKey` are all `x api key`. */
function words(name: string): string[] {
  return name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase().split(/[^a-z0-9]+/).filter((word) => word !== "");
}

/** A word that names a credential wherever it stands (`token` but not `tokens`: counts are kept). */
const SECRET_WORD = /^(token|secret|passw(or)?d|pwd|passphrase|jwt|bearer|pat|cookie|credentials?|authentication|authorization)$/;
/** Run together, as such names are also written (`APIKEY`, `Pass_Word`). */
const SECRET_RUN =
  /token(?!s$)|secret|passw(or)?d|passphrase|apikey|accesskey|subscriptionkey|privatekey|authoriz|authentica|cookie|credential/;

/**
 * Whether a key, header, flag or query parameter name names a credential: the one rule (table-tested in
 * test/bridge/redact.test.ts). A name whose last word is `key` or `auth` counts only when it holds a string.
 */
function isSecretName(name: string, value: unknown): boolean {
  const parts = words(name);
  if (parts.some((word) => SECRET_WORD.test(word))) return true;
  if (SECRET_RUN.test(parts.join(""))) return true;
  const last = parts.at(-1);
  return (last === "key" || last === "auth") && typeof value === "string";
}

/** `{name, value}` entries (ACP's `env` and `headers`) and `[name, value]` pairs, with the values `hide` names hidden. */
function hideValues(entries: unknown[], hide: (name: unknown) => boolean): unknown[] {
  return entries.map((entry) => {
    if (Array.isArray(entry)) return entry.length === 2 && hide(entry[0]) ? [entry[0], REDACTED] : entry;
    if (typeof entry !== "object" || entry === null || !("value" in entry)) return entry;
    return hide((entry as { name?: unknown }).name) ? { ...entry, value: REDACTED } : entry;
  });
}

/** A query or fragment parameter's name as the server reads it (the raw text if it is malformed). */
function paramName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, " "));
  } catch {
    return raw;
  }
}

/** An http(s)/ws(s) URL with its userinfo secret and credential-named parameters hidden; else `text` as it was. */
function hideInUrl(text: string): string {
  if (!/^(https?|wss?):\/\//i.test(text) || !/[@?#]/.test(text) || !URL.canParse(text)) return text;
  const url = new URL(text);
  let changed = url.username !== "" || url.password !== "";
  const userinfo = url.password !== "" ? `${url.username}:${REDACTED}@` : changed ? `${REDACTED}@` : "";
  const hideParams = (part: string): string =>
    part.replace(/([?&#;])([^=?&#;]*)=([^&#;]*)/g, (whole, separator: string, name: string, value: string) => {
      if (!isSecretName(paramName(name), value)) return whole;
      changed = true;
      return `${separator}${name}=${REDACTED}`;
    });
  const rest = `${url.pathname}${hideParams(url.search)}${hideParams(url.hash)}`;
  return changed ? `${url.protocol}//${userinfo}${url.host}${rest}` : text;
}

/** Command-line arguments with credential-named flags' values, `Name: value` credential headers and URL secrets hidden. */
function hideArgs(args: unknown[]): unknown[] {
  let valueFollows = false;
  return args.map((arg) => {
    const isFlagValue = valueFollows;
    valueFollows = false;
    if (typeof arg !== "string") return arg;
    const flag = /^--?([a-z][\w.-]*)(=|$)/i.exec(arg);
    if (flag !== null && isSecretName(flag[1] ?? "", "")) {
      if (flag[2] === "=") return `${arg.slice(0, arg.indexOf("=") + 1)}${REDACTED}`;
      valueFollows = true;
      return arg;
    }
    if (isFlagValue && !arg.startsWith("--")) return REDACTED;
    const header = /^([a-z][\w-]*):\s*\S/i.exec(arg);
    if (header !== null && isSecretName(header[1] ?? "", "")) return `${header[1]}: ${REDACTED}`;
    return hideInUrl(arg);
  });
}

/** The trace's `JSON.stringify` replacer. Never throws: a value of an unexpected shape is left as it is. */
export function redactSecrets(key: string, value: unknown): unknown {
  if (key === "" || value === null || value === undefined) return value;
  if (isSecretName(key, value)) return REDACTED;
  if (key === "env") {
    if (Array.isArray(value)) return hideValues(value, () => true);
    if (typeof value === "object") return Object.fromEntries(Object.keys(value).map((name) => [name, REDACTED]));
  }
  if (key === "headers" && Array.isArray(value))
    return hideValues(value, (name) => typeof name === "string" && isSecretName(name, ""));
  if (key === "args" && Array.isArray(value)) return hideArgs(value);
  if (typeof value !== "string") return value;
  if (/^(bearer|basic)\s/i.test(value)) return REDACTED;
  return /ur[il]$/i.test(key) ? hideInUrl(value) : value;
}
