import type { JsonRpcId } from "../wire/index.js";

const WHITESPACE = /\s/;

/**
 * The top-level `"id"` at the start of a line too long to read whole, or undefined: when none is
 * complete, a string is not valid JSON, the id is beyond 2^53, or the key repeats. Never throws.
 * See docs/decisions.md, "Bridge: the id of an oversized line".
 */
export function idAtLineStart(head: string): JsonRpcId | undefined {
  const scan = new Scanner(head);
  if (!scan.take("{")) return undefined;
  let id: JsonRpcId | undefined;
  for (;;) {
    const key = scan.string();
    if (key === undefined || !scan.take(":")) return scan.unreadable ? undefined : id;
    if (key === "id") {
      if (id !== undefined) return undefined;
      id = scan.id();
      if (id === undefined) return undefined;
    } else if (!scan.skipValue()) return id;
    if (!scan.take(",")) return id;
  }
}

class Scanner {
  private at = 0;
  /** A complete string was not valid JSON: the line is no request, whatever came before. */
  unreadable = false;

  constructor(private readonly text: string) {}

  /** Skips whitespace, then consumes `char` if it is next. */
  take(char: string): boolean {
    this.skipWhitespace();
    if (this.text[this.at] !== char) return false;
    this.at++;
    return true;
  }

  /** A complete JSON string, decoded; undefined when cut off or not valid JSON (a bad escape). */
  string(): string | undefined {
    this.skipWhitespace();
    const end = this.stringEnd(this.at);
    if (end === undefined) return undefined;
    const token = this.text.slice(this.at, end);
    this.at = end;
    try {
      return JSON.parse(token) as string;
    } catch {
      this.unreadable = true;
      return undefined;
    }
  }

  /** A complete string or safe-integer id (a number once a delimiter follows it). */
  id(): JsonRpcId | undefined {
    this.skipWhitespace();
    if (this.text[this.at] === '"') return this.string();
    const number = /^-?(?:0|[1-9]\d*)(?=[\s,}])/.exec(this.text.slice(this.at));
    if (number === null) return undefined;
    this.at += number[0].length;
    const value = Number(number[0]);
    return Number.isSafeInteger(value) ? value : undefined;
  }

  /** Skips one complete value (nested objects and arrays included). */
  skipValue(): boolean {
    this.skipWhitespace();
    let depth = 0;
    while (this.at < this.text.length) {
      const char = this.text[this.at] as string;
      if (char === '"') {
        const end = this.stringEnd(this.at);
        if (end === undefined) return false;
        this.at = end;
      } else {
        if (char === "{" || char === "[") depth++;
        else if (char === "}" || char === "]") depth--;
        else if (depth === 0 && (char === "," || WHITESPACE.test(char))) return true;
        this.at++;
      }
      if (depth === 0 && /[,}\s]/.test(this.text[this.at] ?? "")) return true;
      if (depth < 0) return false;
    }
    return false;
  }

  /** The index just past the string starting at `from`, or undefined when it is cut off. */
  private stringEnd(from: number): number | undefined {
    if (this.text[from] !== '"') return undefined;
    for (let i = from + 1; i < this.text.length; i++) {
      const char = this.text[i];
      if (char === "\\") i++;
      else if (char === '"') return i + 1;
    }
    return undefined;
  }

  private skipWhitespace(): void {
    while (WHITESPACE.test(this.text[this.at] ?? "")) this.at++;
  }
}
