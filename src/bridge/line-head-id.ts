import type { JsonRpcId } from "../wire/index.js";

const WHITESPACE = /\s/;

/**
 * The top-level `"id"` of a JSON object whose text is cut short (the start of a line too long
 * to read whole), or undefined when the start does not hold a complete one. Nested objects
 * (`params`) are skipped, so an `"id"` inside them is never taken for the request's.
 */
export function idAtLineStart(head: string): JsonRpcId | undefined {
  const scan = new Scanner(head);
  if (!scan.take("{")) return undefined;
  for (;;) {
    const key = scan.string();
    if (key === undefined || !scan.take(":")) return undefined;
    if (key === "id") return scan.id();
    if (!scan.skipValue() || !scan.take(",")) return undefined;
  }
}

class Scanner {
  private at = 0;

  constructor(private readonly text: string) {}

  /** Skips whitespace, then consumes `char` if it is next. */
  take(char: string): boolean {
    this.skipWhitespace();
    if (this.text[this.at] !== char) return false;
    this.at++;
    return true;
  }

  /** A complete JSON string, decoded. */
  string(): string | undefined {
    this.skipWhitespace();
    const end = this.stringEnd(this.at);
    if (end === undefined) return undefined;
    const token = this.text.slice(this.at, end);
    this.at = end;
    return JSON.parse(token) as string;
  }

  /** A complete string or integer id; a number is complete only once a delimiter follows it. */
  id(): JsonRpcId | undefined {
    this.skipWhitespace();
    if (this.text[this.at] === '"') return this.string();
    const number = /^-?\d+(?=[\s,}])/.exec(this.text.slice(this.at));
    return number === null ? undefined : Number(number[0]);
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
