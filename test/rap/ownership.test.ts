/**
 * Issue 25 item 12: a notice cancels only its own principal's calls. `authenticate` names the
 * principal, the registry records each call's owner, another principal's notice (or early
 * notice) does nothing, and its answer is the same 200, byte for byte, so that it cannot learn
 * whether the call exists. The rate limit after authentication is per principal.
 */
import assert from "node:assert/strict";
import { connect } from "node:net";
import { CallRegistry, type CancelEndpointOptions, type NoticeEvent } from "../../src/rap/index.js";
import type { Listening } from "./http-support.js";
import { type Mount, mountHono, mountNodeHttp } from "./mounts.js";

const PRINCIPALS: Record<string, string> = { "Bearer alice-token": "alice", "Bearer bob-token": "bob" };
const byToken: CancelEndpointOptions["authenticate"] = (request) => PRINCIPALS[request.headers.get("authorization") ?? ""] ?? false;

/** The raw bytes of the answer to one notice (a connection per request), its Date line removed. */
function rawAnswer(server: Listening, token: string, threadId: string, toolCallId: string): Promise<string> {
  const body = JSON.stringify({ thread_id: threadId, tool_call_id: toolCallId });
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, "127.0.0.1");
    let reply = "";
    socket.on("connect", () =>
      socket.end(
        `POST /cancel_tool_call HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      ),
    );
    socket.on("data", (chunk: Buffer) => (reply += chunk.toString("latin1")));
    socket.on("end", () => resolve(reply.replace(/^date: .*\r\n/im, "")));
    socket.on("error", reject);
  });
}

for (const [name, mount] of [
  ["node:http adapter", mountNodeHttp],
  ["Web handler on Hono", mountHono],
] as [string, Mount][]) {
  describe(`RAP tool server: whose call a notice may cancel (${name}, issue 25 item 12)`, () => {
    let server: Listening;
    let registry: CallRegistry;
    let events: NoticeEvent[];
    beforeEach(async () => {
      registry = new CallRegistry();
      events = [];
      server = await mount({ registry, authenticate: byToken, onNotice: (e) => events.push(e) });
    });
    afterEach(() => server.close());

    it("another principal's notice has no effect, and its answer is byte-identical to any other 200", async () => {
      const call = registry.track("t", "alices", { owner: "alice" });
      const fromBob = await rawAnswer(server, "bob-token", "t", "alices");
      assert.equal(call.signal.aborted, false, "bob cannot cancel alice's call");
      const unknown = await rawAnswer(server, "bob-token", "t", "no-such-call");
      const fromAlice = await rawAnswer(server, "alice-token", "t", "alices");
      assert.equal(call.signal.aborted, true, "alice can");
      assert.match(fromBob, /^HTTP\/1\.1 200 /);
      assert.equal(fromBob, unknown, "a call of another principal looks like no call at all");
      assert.equal(fromBob, fromAlice);
      assert.deepEqual(
        events.map((e) => [e.principal, e.effect]),
        [["bob", "not-owner"], ["bob", "remembered"], ["alice", "cancelled"]],
      );
      call.done();
    });

    it("another principal's early notice does not pre-cancel the call; the owner's does", async () => {
      await rawAnswer(server, "bob-token", "t", "soon");
      assert.equal(registry.track("t", "soon", { owner: "alice" }).signal.aborted, false);
      await rawAnswer(server, "alice-token", "t", "later");
      assert.equal(registry.track("t", "later", { owner: "alice" }).signal.aborted, true);
    });
  });
}

describe("RAP tool server: the rate limit after authentication is per principal (issue 25 item 12)", () => {
  it("one principal over its limit does not spend another's, from the same address", async () => {
    const registry = new CallRegistry();
    const server = await mountNodeHttp({ registry, authenticate: byToken, rateLimit: { perSecond: 0.001, burst: 2 } });
    try {
      const status = async (token: string, id: string) => /^HTTP\/1\.1 (\d{3})/.exec(await rawAnswer(server, token, "t", id))?.[1];
      assert.deepEqual([await status("alice-token", "a1"), await status("alice-token", "a2"), await status("alice-token", "a3")], ["200", "200", "429"]);
      assert.equal(await status("bob-token", "b1"), "200", "bob has his own allowance");
      assert.equal(await status("alice-token", "a4"), "429");
    } finally {
      await server.close();
    }
  });

  it("before authentication only a per-address flood limit applies", async () => {
    const registry = new CallRegistry();
    const flood = { perSecond: 0.001, burst: 3 };
    const server = await mountNodeHttp({ registry, authenticate: byToken, rateLimit: false, floodLimit: flood });
    try {
      const status = async (token: string) => /^HTTP\/1\.1 (\d{3})/.exec(await rawAnswer(server, token, "t", "x"))?.[1];
      assert.deepEqual([await status("wrong"), await status("wrong"), await status("alice-token"), await status("bob-token")], ["401", "401", "200", "429"]);
    } finally {
      await server.close();
    }
  });
});

describe("RAP call registry: ownership without HTTP", () => {
  it("records the owner; a notice names its principal; the default principal is the anonymous one", () => {
    const registry = new CallRegistry();
    const mine = registry.track("t", "c", { owner: "alice" });
    assert.equal(mine.owner, "alice");
    assert.equal(registry.cancel("t", "c", "external", "bob"), "not-owner");
    assert.equal(registry.cancel("t", "c"), "not-owner", "the anonymous principal is not alice");
    assert.equal(registry.cancel("t", "c", "external", "alice"), "cancelled");
    const anyone = registry.track("t", "d");
    assert.equal(anyone.owner, "");
    assert.equal(registry.cancel("t", "d"), "cancelled");
  });
});
