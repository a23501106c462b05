/**
 * The fastest agent we can write in node: parses each ndjson line and answers every
 * request `{"jsonrpc":"2.0","id":<id>,"result":{}}`, one write per input chunk.
 */
let pending = "";
process.stdin.on("data", (chunk: Buffer) => {
  const text = pending + chunk.toString("utf8");
  let out = "";
  let start = 0;
  for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
    const line = text.slice(start, newline);
    start = newline + 1;
    if (line.length === 0) continue;
    const message = JSON.parse(line) as { id?: unknown; method?: unknown };
    if (message.id !== undefined && message.method !== undefined) {
      out += `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{}}\n`;
    }
  }
  pending = text.slice(start);
  if (out.length > 0) process.stdout.write(out);
});
process.stdin.on("end", () => process.exit(0));
