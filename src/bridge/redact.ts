/** What a secret is replaced with in a trace. */
export const REDACTED = "[redacted]";

/**
 * Whether a name (a key, header, flag or query parameter) names a credential. Counts such as
 * `inputTokens` are not; a bare `auth` or `key` is one only when it holds a string (ACP's `auth`
 * capability is an object).
 */
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

/**
 * An http(s)/ws(s) URL with its userinfo secret and the values of credential-named query (and
 * fragment) parameters hidden, the rest kept readable; anything else is returned as it was.
 * With a password, the user name stays; alone, the user name is the secret (`https://TOKEN@host`).
 */
function hideInUrl(text: string): string {
  if (!/^(https?|wss?):\/\//i.test(text) || !/[@?#]/.test(text)) return text;
  // Parse only what could hold a secret: userinfo, an encoded name, or a name `isSecretName` may match.
  if (!/[@%]|token|secret|pass|key|auth|cookie|credential/i.test(text.replace(/[-_.]/g, ""))) return text;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text;
  }
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

/**
 * Command-line arguments with every secret we can recognise hidden: the value of a credential-named
 * flag (`--api-key=…`, or `--token …` as two arguments, unless the next looks like a flag), a
 * credential header given as `Name: value`, and URLs as `hideInUrl` does.
 */
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

/**
 * A `JSON.stringify` replacer that hides `env` values, credential-named headers and keys, the
 * secrets in `args` and in URLs (keys ending in `url`/`uri`), and `Bearer`/`Basic` values. One
 * pass, never throws: a value of an unexpected shape is left as it is.
 */
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
