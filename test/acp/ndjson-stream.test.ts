import assert from "node:assert/strict";
import { collectLines, spawnFixture } from "../support/spawn-peer.js";
import { eventually } from "../support/wire-assertions.js";

type Line = Record<string, unknown>;

describe("acp-cancel's ndJsonStream (engine inline), in a real SDK agent over stdio", () => {
  it("answers bad lines (-32700, -32600 over the cap, -32600 for batches) and keeps the session", async () => {
    const peer = spawnFixture("sdk-agent", ["--inline"]);
    const received: Line[] = collectLines(peer.child.stdout);
    const send = (line: string) => peer.child.stdin.write(`${line}\n`);
    try {
      send("definitely not json");
      send(JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "_test/echo" }]));
      send("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1,\"clientCapabilities\":{}}}\r");
      const init = await eventually(() => received.find((m) => m.id === 2), "initialize answered (CRLF line)");
      assert.ok("result" in init);
      send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "_test/echo", params: {} }));
      assert.deepEqual((await eventually(() => received.find((m) => m.id === 3), "echo")).result, { ok: true });
      const errors = received.filter((m) => m.id === null).map((m) => (m.error as { code: number; message: string }));
      assert.deepEqual(errors.map((e) => e.code), [-32700, -32600]);
      assert.match(errors[0]?.message ?? "", /not valid JSON/);
      assert.match(errors[1]?.message ?? "", /batches are not supported/);
    } finally {
      peer.child.stdin.end();
      await peer.exited;
    }
  });
});
