/**
 * Control characters, and the Unicode ones that reorder or break a line: C0 (tab and newline
 * included), DEL, C1, the line and paragraph separators, and the bidirectional embeddings,
 * overrides and isolates.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

/**
 * `text` safe to print on a terminal: each control character becomes a visible escape (`\x1b`,
 * `\u{202e}`). A trace holds what peers sent, so an ESC or BEL in a method name must not reach
 * the user's terminal as one.
 */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (char) => {
    const code = char.codePointAt(0) ?? 0;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
  });
}
