const BOM = "\uFEFF";

/**
 * Parses one ndjson line; a refused line gets a second chance without a BOM and trimmed, as the
 * SDK's own reader accepts it (a peer that works without acp-cancel must work with it).
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
