/**
 * A peer that stops reading. The editor stops reading the bridge's stdout while the agent
 * floods session/update notifications: the bridge must pause the agent's stdout instead of
 * buffering the flood, so its RSS stays bounded and the agent itself is held back. When the
 * editor reads again, every notification arrives, the turn ends, and the session goes on.
 */
import assert from "node:assert/strict";
import { eventually } from "../support/wire-assertions.js";
import {
  exitOf,
  figure,
  killLeftovers,
  type Message,
  openRawSession,
  prompt,
  rssMiB,
  scaled,
  sleep,
  spawnPlainBridge,
  track,
} from "./support.js";

const CHUNK_BYTES = 256 * 1024;
const RSS_GROWTH_LIMIT_MIB = 50;

/** The agent's last "flood sent N" on the bridge's stderr (the agent's stderr is relayed there). */
function progress(stderr: string): number {
  const all = [...stderr.matchAll(/flood sent (\d+)/g)];
  return all.length === 0 ? 0 : Number(all[all.length - 1]?.[1]);
}

describe("reliability: a peer that stops reading (backpressure)", function () {
  this.timeout(0);
  afterEach(killLeftovers);
  const count = scaled(400, 2000);

  it(`the editor stops reading while the agent floods ${count} × 256 KiB: the bridge pauses the agent, its RSS stays within ${RSS_GROWTH_LIMIT_MIB} MiB, nothing is lost`, async () => {
    const bridge = track(spawnPlainBridge([], "flood-agent"));
    const { peer } = bridge;
    const pid = bridge.child.pid as number;
    let updates = 0;
    let updateBytes = 0;
    peer.countOnly = (m: Message) => {
      if (m.method !== "session/update") return false;
      updates++;
      const text = ((m.params as { update?: { content?: { text?: string } } }).update?.content?.text ?? "").length;
      updateBytes += text;
      return true;
    };
    const sessionId = await openRawSession(peer);
    const before = rssMiB(pid);
    peer.stopReading();
    peer.send(prompt("flood", sessionId, `flood ${count} ${CHUNK_BYTES}`));
    // Let the flood run into the closed tap: sample the bridge while the agent's progress stalls.
    let peak = before;
    let last = -1;
    let stableSince = performance.now();
    for (;;) {
      await sleep(50);
      peak = Math.max(peak, rssMiB(pid));
      const now = progress(bridge.stderr());
      if (now !== last) {
        last = now;
        stableSince = performance.now();
      }
      if (performance.now() - stableSince > 750 || now >= count) break;
    }
    const stalledAt = last;
    const held = peak - before;
    assert.ok(stalledAt < count, `the agent was never held back: it sent all ${count} notifications`);
    assert.ok(held < RSS_GROWTH_LIMIT_MIB, `bridge RSS grew ${held.toFixed(1)} MiB while the editor did not read`);
    // Reading again: every notification arrives, in full, then the turn's answer.
    peer.resume();
    const answer = await peer.answer("flood", 120_000);
    assert.deepEqual(answer.result, { stopReason: "end_turn" });
    assert.equal(updates, count, "every notification arrived");
    assert.equal(updateBytes, count * CHUNK_BYTES, "every byte arrived");
    peer.send(prompt("after", sessionId, "hello"));
    assert.deepEqual((await peer.answer("after")).result, { stopReason: "end_turn" });
    assert.deepEqual(peer.garbage, []);
    const after = rssMiB(pid);
    peer.end();
    const exit = await exitOf(bridge.child, bridge.exited);
    assert.equal(exit.code, 0, bridge.stderr().slice(-1500));
    await eventually(() => (peer.ended ? true : undefined), "the bridge's stdout ends");
    figure(
      `backpressure: agent flooded ${count} × 256 KiB (${((count * CHUNK_BYTES) / 2 ** 20).toFixed(0)} MiB); ` +
      `with the editor not reading it was held after ${stalledAt} notifications; bridge RSS ${before.toFixed(1)} MiB ` +
      `before, peak ${peak.toFixed(1)} MiB while held, ${after.toFixed(1)} MiB after; all delivered; violations: 0`,
    );
  });
});
