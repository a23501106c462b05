/**
 * A flood of `$/cancel_request` for ids nobody has in flight, written to the bridge in big
 * chunks: the bridge's memory stays flat (VmRSS before, during and after), nothing is answered
 * or forwarded for them, and the session still answers afterwards.
 */
import assert from "node:assert/strict";
import { exitOf, figure, initialize, rssMiB, scaled, spawnPlainBridge } from "./support.js";

const LINES_PER_CHUNK = 10_000;
const RSS_GROWTH_LIMIT_MIB = 50;

function chunkOf(first: number): Buffer {
  let text = "";
  for (let i = first; i < first + LINES_PER_CHUNK; i++)
    text += `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":${i}}}\n`;
  return Buffer.from(text);
}

describe("reliability: a flood of $/cancel_request for unknown ids", function () {
  this.timeout(0);
  const total = scaled(1_000_000, 5_000_000);

  it(`${total.toLocaleString("en")} cancels into the bridge: RSS grows less than ${RSS_GROWTH_LIMIT_MIB} MiB, nothing is answered or forwarded, the session answers afterwards`, async () => {
    const bridge = spawnPlainBridge([], "sdk-agent", ["--bare"]);
    const { peer } = bridge;
    const pid = bridge.child.pid as number;
    try {
      peer.send(initialize("init"));
      await peer.answer("init");
      // Warm up (JIT, buffers), so that "before" is the steady state and not start-up.
      await peer.write(chunkOf(10_000_000));
      peer.send({ jsonrpc: "2.0", id: "warm", method: "_test/echo", params: {} });
      await peer.answer("warm");
      const before = rssMiB(pid);
      let peak = before;
      const started = performance.now();
      for (let sent = 0; sent < total; sent += LINES_PER_CHUNK) {
        await peer.write(chunkOf(20_000_000 + sent));
        if (sent % 100_000 === 0) peak = Math.max(peak, rssMiB(pid));
      }
      peer.send({ jsonrpc: "2.0", id: "after", method: "_test/echo", params: {} });
      const answer = await peer.answer("after", 60_000);
      const seconds = (performance.now() - started) / 1000;
      assert.deepEqual(answer.result, { ok: true });
      const after = rssMiB(pid);
      peak = Math.max(peak, after);
      // Only the three answers to our own requests came back.
      assert.deepEqual(
        peer.received.map((m) => m.id),
        ["init", "warm", "after"],
      );
      assert.deepEqual(peer.garbage, []);
      assert.ok(
        peak - before < RSS_GROWTH_LIMIT_MIB,
        `RSS grew from ${before.toFixed(1)} MiB to a peak of ${peak.toFixed(1)} MiB`,
      );
      assert.ok(after - before < RSS_GROWTH_LIMIT_MIB, `RSS ${before.toFixed(1)} → ${after.toFixed(1)} MiB`);
      // Unknown ids are an ordinary race (the answer crossed the cancel): not even a warning.
      assert.doesNotMatch(bridge.stderr(), /cancel_request/);
      figure(
        `cancel flood: ${total.toLocaleString("en")} $/cancel_request in ${seconds.toFixed(1)} s; bridge RSS ` +
        `${before.toFixed(1)} MiB before, ${peak.toFixed(1)} MiB peak, ${after.toFixed(1)} MiB after; violations: 0`,
      );
    } finally {
      bridge.child.stdin.end();
      const exit = await exitOf(bridge.child, bridge.exited);
      assert.equal(exit.code, 0, bridge.stderr().slice(-2000));
    }
  });
});
