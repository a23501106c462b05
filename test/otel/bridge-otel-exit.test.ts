/**
 * The bridge's last OTLP flush is bounded: a collector that refuses, or accepts and never answers,
 * holds its exit at most the export timeout (1 s, or OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT), not the
 * exporter's 10 s of retries. Before the bound: 8.2 s (refused) and 10.4 s (silent).
 */
import assert from "node:assert/strict";
import net from "node:net";
import * as acp from "@agentclientprotocol/sdk";
import { closeBridge, spawnBridge } from "../support/bridge-harness.js";
import { cooperativeClient, openSession, textPrompt } from "../support/client-harness.js";
import { eventually } from "../support/wire-assertions.js";

const { methods } = acp;

/** A loopback TCP server that accepts and never answers; `refused`: a port nobody listens on. */
async function collector(kind: "silent" | "refused"): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  if (kind === "refused") await close();
  return { url: `http://127.0.0.1:${port}`, close: kind === "refused" ? async () => {} : close };
}

/** A session with a cancelled prompt through the bridge, spans queued for `url`; the ms from stdin closed to exit. */
async function exitAfterTurn(url: string, env: NodeJS.ProcessEnv = {}): Promise<{ exitMs: number; stopToAnswerMs: number }> {
  const bridge = spawnBridge(["--otel"], "sdk-agent", [], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: url, ...env } });
  const editor = cooperativeClient("editor");
  let stopToAnswerMs = Number.NaN;
  await editor.connectWith(acp.ndJsonStream(bridge.output, bridge.input), async (agent) => {
    const sessionId = await openSession(agent);
    const prompt = agent.request(methods.agent.session.prompt, textPrompt(sessionId, "nested"));
    await eventually(
      () => (bridge.hop("agent->bridge").filter((m) => "method" in m && "id" in m).length >= 2 ? true : undefined),
      "both nested requests",
    );
    const stop = performance.now();
    await agent.notify(methods.agent.session.cancel, { sessionId });
    assert.deepEqual(await prompt, { stopReason: "cancelled" });
    stopToAnswerMs = performance.now() - stop;
  });
  const start = performance.now();
  const exit = await closeBridge(bridge);
  const exitMs = performance.now() - start;
  assert.equal(exit.code, 0, bridge.stderr());
  return { exitMs, stopToAnswerMs };
}

describe("bridge --otel: the last flush at exit is bounded by the export timeout", function () {
  this.timeout(30_000);

  for (const kind of ["refused", "silent"] as const) {
    it(`a collector that ${kind === "refused" ? "refuses connections" : "accepts and never answers"}: exit within the 1 s bound (plus the bridge's own stop); Stop→answer unaffected`, async () => {
      const target = await collector(kind);
      try {
        const { exitMs, stopToAnswerMs } = await exitAfterTurn(target.url);
        // Without the bound the exporter retried for its 10 s (8.2 s refused, 10.4 s silent).
        assert.ok(exitMs < 5000, `exit took ${Math.round(exitMs)} ms`);
        // The turn's answer never waits on an export (the grace, 2 s, would answer it otherwise).
        assert.ok(stopToAnswerMs < 2000, `Stop→answer took ${Math.round(stopToAnswerMs)} ms`);
      } finally {
        await target.close();
      }
    });
  }
});
