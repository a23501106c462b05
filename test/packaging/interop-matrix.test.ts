import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repositoryRoot } from "../../scripts/count-exports.js";
import { MATRIX_PAGE, matrixOnPage, PEERS, renderMatrix, storedScorecards } from "../../scripts/interop-matrix.js";
import type { AgentName } from "../../src/check/index.js";
import { disagreements } from "../interop/verdicts.js";

// Issue 33 item 5: docs/interop.md's Stop matrix is `acp-cancel check`'s own output, never edited by hand.
const root = repositoryRoot();
const pinned = (JSON.parse(readFileSync(join(root, "test/interop/peers/package.json"), "utf8")) as { dependencies: Record<string, string> })
  .dependencies;

describe("docs/interop.md's Stop matrix", () => {
  const stored = storedScorecards(root);

  it("is what the stored scorecards render (re-render: npm run interop:matrix -- --from-json)", () => {
    const page = readFileSync(join(root, MATRIX_PAGE), "utf8");
    assert.equal(matrixOnPage(page), renderMatrix(stored.map(({ card }) => card)));
  });

  it("has a scorecard, made with the scripted model, of each peer at the version pinned in test/interop/peers", () => {
    assert.deepEqual(
      stored.map(({ peer }) => peer.file),
      PEERS.map((peer) => peer.file),
    );
    for (const { peer, card } of stored) {
      assert.equal(card.modelServer, true, `${peer.file}: made with --model-server`);
      assert.equal(card.agent.agentVersion, pinned[peer.pkg], `${peer.file}: the pinned version of ${peer.pkg}`);
      assert.ok(card.cells.length > 0, `${peer.file}: has cells`);
      assert.equal(card.agent.protocolVersion, peer.checkArgs?.includes("v2") === true ? 2 : 1, `${peer.file}: its ACP version`);
    }
  });

  it("shows, cell by cell, the verdicts the interop suite asserts (test/interop/verdicts.ts)", () => {
    for (const { peer, card } of stored) assert.deepEqual(disagreements(peer.file as AgentName, card), [], peer.file);
  });
});
