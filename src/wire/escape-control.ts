/** C0 (tab and newline too), DEL, C1, line and paragraph separators, bidi embeddings, overrides, isolates. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

/** `text` safe to print on a terminal (peer text may hold an ESC): control characters become `\x1b`, `\u{202e}`. */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (char) => {
    const code = char.codePointAt(0) ?? 0;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
  });
}

/** A peer's value as JSON text, cut at `max` characters; one nested too deeply for JSON.stringify is named, never thrown. */
export function jsonText(value: unknown, max = Number.POSITIVE_INFINITY): string {
  let text: string;
  try {
    text = String(JSON.stringify(value));
  } catch {
    return "(a value nested too deeply to serialise)";
  }
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
