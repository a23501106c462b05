const BOM = "\uFEFF";

/**
 * Parses one ndjson line. A line JSON.parse refuses gets a second chance without a leading
 * BOM and with Unicode whitespace trimmed (U+2028, no-break space, form feed…): the SDK's own
 * reader (TextDecoder, then trim) accepts such lines, and a peer that works without acp-cancel
 * must work with it. The fallback costs nothing on the ordinary path.
 */
export function parseJsonLine(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const cleaned = (text.startsWith(BOM) ? text.slice(1) : text).trim();
    if (cleaned === text) throw error;
    return JSON.parse(cleaned);
  }
}
