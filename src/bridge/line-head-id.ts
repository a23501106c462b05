import type { JsonRpcId } from "../wire/index.js";

const JSON_INTEGER = /^-?(?:0|[1-9]\d*)$/;

/**
 * The top-level `"id"` at the start of a line too long to read whole, or undefined: when none is
 * complete, a string is not valid JSON, the id is beyond 2^53, or the key repeats. Never throws.
 * See docs/decisions.md, "Bridge: the id of an oversized line".
 */
export function idAtLineStart(head: string): JsonRpcId | undefined {
  const tokens = completeTokens(head);
  if (tokens[0] !== "{") return undefined;
  let id: JsonRpcId | undefined;
  let at = 1;
  for (;;) {
    const keyToken = tokens[at];
    if (keyToken?.startsWith('"') !== true) return id;
    const key = decoded(keyToken);
    // A complete string that is not valid JSON: the line is no request, whatever came before.
    if (key === undefined) return undefined;
    if (tokens[at + 1] !== ":") return id;
    if (key === "id") {
      if (id !== undefined) return undefined; // JSON.parse would take the last one
      id = idFrom(tokens[at + 2]);
      const next = tokens[at + 3];
      if (id === undefined || (next !== undefined && next !== "," && next !== "}")) return undefined;
      at += 3;
    } else {
      const past = pastValue(tokens, at + 2);
      if (past === undefined) return id;
      at = past;
    }
    if (tokens[at] !== ",") return id;
    at++;
  }
}

/** The complete JSON tokens `head` starts with: strings (escapes unchecked), delimiters, and runs such as numbers. */
function completeTokens(head: string): string[] {
  const token = /\s*("(?:[^"\\]|\\.)*"|[{}[\],:]|[^\s{}[\],:"]+)/y;
  const tokens: string[] = [];
  for (let match = token.exec(head); match !== null; match = token.exec(head)) {
    const text = match[1] as string;
    // A run the head ends in may go on (`12` of `123`): it is not complete.
    if (token.lastIndex === head.length && !/^["{}[\],:]/.test(text)) break;
    tokens.push(text);
  }
  return tokens;
}

function decoded(stringToken: string): string | undefined {
  try {
    return JSON.parse(stringToken) as string;
  } catch {
    return undefined;
  }
}

/** A string or safe-integer id; undefined for anything else, or a string that is not valid JSON. */
function idFrom(token: string | undefined): JsonRpcId | undefined {
  if (token?.startsWith('"') === true) return decoded(token);
  if (token === undefined || !JSON_INTEGER.test(token)) return undefined;
  const value = Number(token);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** The index just past the value (nested objects and arrays included) starting at `at`; undefined when cut off. */
function pastValue(tokens: readonly string[], at: number): number | undefined {
  let depth = 0;
  for (let index = at; index < tokens.length; index++) {
    const token = tokens[index];
    if (token === "{" || token === "[") depth++;
    else if (token === "}" || token === "]") depth--;
    if (depth <= 0) return index + 1;
  }
  return undefined;
}
