// What is hidden, and why so: docs/decisions.md, "Bridge: trace files".

/** What a secret is replaced with in a trace. */
export const REDACTED = "[redacted]";

/** Whether a key, header, flag or query parameter name names a credential (`auth`/`key` only holding a string). */
function isSecretName(name: string, value: unknown): boolean {
  const plain = name.toLowerCase().replace(/[-_.]/g, "");
  if (plain.includes("token")) return !plain.endsWith("tokens");
  if (plain === "auth" || plain === "key") return typeof value === "string";
  return /secret|passw(or)?d|passphrase|apikey|accesskey|subscriptionkey|authorization|cookie|credential|privatekey/.test(plain);
}

/** `{name, value}` pairs (ACP's `env` and `headers` entries) with every value hidden. */
function hideValues(entries: unknown[], hide: (name: unknown) => boolean): unknown[] {
  return entries.map((entry) => {
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
