// Version 4 UUIDs from pooled `crypto.getRandomValues`: Chromium's `randomUUID()` costs a few µs per id,
// a visible share of a postMessage call.
const IDS_PER_POOL = 128;
const pool = new Uint8Array(16 * IDS_PER_POOL);
let used = IDS_PER_POOL;
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

export function randomCallId(): string {
  if (used === IDS_PER_POOL) {
    crypto.getRandomValues(pool);
    used = 0;
  }
  const at = 16 * used++;
  // Version 4 in the high nibble of byte 6, variant 10xx in the high bits of byte 8 (RFC 9562).
  pool[at + 6] = ((pool[at + 6] as number) & 0x0f) | 0x40;
  pool[at + 8] = ((pool[at + 8] as number) & 0x3f) | 0x80;
  const hex = (from: number, to: number) => {
    let text = "";
    for (let i = at + from; i < at + to; i++) text += HEX[pool[i] as number] as string;
    return text;
  };
  return `${hex(0, 4)}-${hex(4, 6)}-${hex(6, 8)}-${hex(8, 10)}-${hex(10, 16)}`;
}
