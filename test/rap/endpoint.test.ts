import assert from "node:assert/strict";
import { request as httpRequest, Agent } from "node:http";
import { connect } from "node:net";
import { CallRegistry, type CancelEndpointOptions, type NoticeEvent } from "../../src/rap/index.js";
import type { Listening } from "./http-support.js";
import { type Mount, mountHono, mountNodeHttp } from "./mounts.js";

const GOOD = "Bearer good-token";
const authenticate: CancelEndpointOptions["authenticate"] = (r) => r.headers.get("authorization") === GOOD;

interface Probe {
  method?: string;
  headers?: Record<string, string>;
  /** A stream is made per request (a stream can be sent only once). */
  body?: string | Uint8Array<ArrayBuffer> | (() => ReadableStream<Uint8Array>) | undefined;
}

async function send(server: Listening, probe: Probe): Promise<{ status: number; body: string; headers: Headers }> {
  const init: RequestInit & { duplex?: "half" } = {
    method: probe.method ?? "POST",
    headers: probe.headers ?? { "authorization": GOOD, "content-type": "application/json" },
  };
  if (typeof probe.body === "function") {
    init.body = probe.body();
    init.duplex = "half";
  } else if (probe.body !== undefined) {
    init.body = probe.body;
  }
  const response = await fetch(`${server.url}/cancel_tool_call`, init);
  return { status: response.status, body: await response.text(), headers: response.headers };
}

const json = (value: unknown) => JSON.stringify(value);
const notice = (threadId: unknown, toolCallId: unknown) => json({ thread_id: threadId, tool_call_id: toolCallId });
const withHeaders = (headers: Record<string, string>, body = notice("t", "victim")): Probe => ({ headers, body });
const authed = (body: Probe["body"], type = "application/json"): Probe => ({ headers: { "authorization": GOOD, "content-type": type }, body });

/** A body that never grows past the limit but streams far more than 10 MB in total. */
function hugeStream(): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= 10 * 1024 * 1024) return controller.close();
      sent += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
}

/** Every request that is not an authentic, well-formed notice, with the status docs/rap.md gives it. */
const BAD: [string, number, Probe][] = [
  ["no Authorization header", 401, withHeaders({ "content-type": "application/json" })],
  ["a bad bearer token", 401, withHeaders({ "authorization": "Bearer wrong", "content-type": "application/json" })],
  ["the right token under another scheme", 401, withHeaders({ "authorization": "Basic good-token", "content-type": "application/json" })],
  ["GET", 405, { method: "GET", headers: { authorization: GOOD } }],
  ["PUT", 405, { method: "PUT", headers: { "authorization": GOOD, "content-type": "application/json" }, body: notice("t", "victim") }],
  ["DELETE", 405, { method: "DELETE", headers: { authorization: GOOD } }],
  ["no Content-Type", 415, { headers: { authorization: GOOD }, body: new TextEncoder().encode(notice("t", "victim")) }],
  ["text/plain", 415, authed(notice("t", "victim"), "text/plain")],
  ["form-encoded", 415, authed("thread_id=t&tool_call_id=victim", "application/x-www-form-urlencoded")],
  ["JSON in Latin-1", 415, authed(notice("t", "victim"), "application/json; charset=iso-8859-1")],
  ["a 10 MB body with Content-Length", 413, authed(`{"thread_id":"t","tool_call_id":"victim","pad":"${"x".repeat(10 * 1024 * 1024)}"}`)],
  ["a 10 MB chunked body", 413, authed(hugeStream)],
  ["a 10 kB thread_id (over the body limit)", 413, authed(notice("x".repeat(10_240), "victim"))],
  ["not JSON", 400, authed("cancel victim please")],
  ["truncated JSON", 400, authed('{"thread_id":"t","tool_call_id":')],
  ["an empty body", 400, authed("")],
  ["invalid UTF-8", 400, authed(new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]))],
  ["a JSON array", 422, authed(json(["t", "victim"]))],
  ["JSON null", 422, authed("null")],
  ["a JSON string", 422, authed(json("t/victim"))],
  ["thread_id missing", 422, authed(json({ tool_call_id: "victim" }))],
  ["tool_call_id missing", 422, authed(json({ thread_id: "t" }))],
  ["thread_id null", 422, authed(notice(null, "victim"))],
  ["tool_call_id a number", 422, authed(notice("t", 42))],
  ["thread_id an array", 422, authed(notice(["t"], "victim"))],
  ["tool_call_id an object", 422, authed(notice("t", { id: "victim" }))],
  ["an empty tool_call_id", 422, authed(notice("t", ""))],
  ["a 300-character tool_call_id", 422, authed(notice("t", "v".repeat(300)))],
  ["a NUL in tool_call_id", 422, authed(notice("t", "vic\u0000tim"))],
  ["a newline in thread_id", 422, authed(notice("t\n", "victim"))],
  ["an ANSI escape in thread_id", 422, authed(notice("\u001b[31mt", "victim"))],
  ["a DEL in tool_call_id", 422, authed(notice("t", "victim\u007f"))],
  ["a line separator in tool_call_id", 422, authed(notice("t", "victim\u2028"))],
  ["an extra field", 422, authed(json({ thread_id: "t", tool_call_id: "victim", force: true }))],
];

const SPECIFIC: Record<number, RegExp> = {
  401: /^not authenticated$/,
  405: /^method [A-Z]+ not allowed: use POST$/,
  413: /^body over 4096 bytes$/,
  415: /^content-type must be application\/json, got /,
  400: /^body is not (JSON|UTF-8)$/,
  422: /^(thread_id|tool_call_id): |^unknown field "force"$|^must be a JSON object$/,
};

for (const [name, mount] of [
  ["node:http adapter", mountNodeHttp],
  ["Web handler on Hono", mountHono],
] as [string, Mount][]) {
  describe(`RAP tool server: POST /cancel_tool_call (${name}) over real HTTP`, () => {
    let server: Listening;
    let registry: CallRegistry;
    let events: NoticeEvent[];
    beforeEach(async () => {
      registry = new CallRegistry();
      events = [];
      server = await mount({ registry, authenticate, bodyTimeoutMs: 300, onNotice: (e) => events.push(e) });
    });
    afterEach(() => server.close());

    it("answers 200 with an empty body for unknown ids, duplicates, a cancel after the result and one before the call", async () => {
      const running = registry.track("thread", "running");
      const finished = registry.track("thread", "finished");
      finished.done();
      const ok = async (threadId: string, toolCallId: string) => {
        const answer = await send(server, authed(notice(threadId, toolCallId)));
        assert.deepEqual([answer.status, answer.body], [200, ""]);
      };
      await ok("thread", "running");
      assert.equal(running.signal.aborted, true, "the call's signal aborted");
      await ok("thread", "running");
      await ok("thread", "finished");
      await ok("other-thread", "running"); // the same tool_call_id in another thread is another call
      await ok("thread", "early");
      assert.deepEqual(
        events.map((e) => [e.status, e.effect, e.toolCallId]),
        [
          [200, "cancelled", "running"],
          [200, "duplicate", "running"],
          [200, "already-finished", "finished"],
          [200, "remembered", "running"],
          [200, "remembered", "early"],
        ],
      );
      // The call registered after its cancel starts cancelled.
      const early = registry.track("thread", "early");
      assert.equal(early.signal.aborted, true);
      assert.equal(registry.track("thread", "early"), early, "track is idempotent");
      running.done();
      early.done();
      assert.equal(registry.size, 0);
    });

    it(`rejects ${BAD.length} kinds of bad request, each with its documented status, changing nothing, and keeps serving`, async () => {
      assert.ok(BAD.length >= 25);
      const victim = registry.track("t", "victim");
      const seen: string[] = [];
      for (const [what, status, probe] of BAD) {
        const answer = await send(server, probe);
        seen.push(`${what}: ${answer.status}`);
        assert.equal(answer.status, status, what);
        assert.match(answer.body.trim(), SPECIFIC[status] ?? /./, what);
        if (status === 405) assert.equal(answer.headers.get("allow"), "POST");
        assert.equal(victim.signal.aborted, false, `${what} changed nothing`);
        assert.equal(registry.remembered, 0, `${what} left nothing remembered`);
        assert.equal(registry.size, 1);
      }
      assert.equal(seen.length, BAD.length);
      // A body that trickles in: headers at once, then a byte every 100 ms.
      const trickle = await trickleStatus(server, 300);
      assert.equal(trickle, 408);
      assert.equal(victim.signal.aborted, false);
      assert.equal(events.filter((e) => e.status === 200).length, 0);
      // Still serving: the real notice goes through.
      const answer = await send(server, authed(notice("t", "victim")));
      assert.deepEqual([answer.status, answer.body], [200, ""]);
      assert.equal(victim.signal.aborted, true);
      victim.done();
    });
  });
}

/** Sends headers promising 100 bytes, then one byte every `everyMs`: returns the status the server answers. */
function trickleStatus(server: Listening, everyMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, "127.0.0.1");
    let reply = "";
    const timer = setInterval(() => socket.writable && socket.write(" "), everyMs / 3);
    socket.on("connect", () => {
      socket.write(
        `POST /cancel_tool_call HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${GOOD}\r\n` +
        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
      );
    });
    socket.on("data", (chunk: Buffer) => {
      reply += chunk.toString();
      const match = /^HTTP\/1\.1 (\d{3})/.exec(reply);
      if (match) {
        clearInterval(timer);
        socket.destroy();
        resolve(Number(match[1]));
      }
    });
    socket.on("error", (error) => {
      clearInterval(timer);
      reject(error);
    });
  });
}

describe("RAP tool server: rate limit under a flood (node:http adapter)", () => {
  it("limits 10,000 notices from one client, and answers another client's notices during the flood", async function () {
    this.timeout(300_000); // 10,000 real HTTP requests on a shared 2-core machine: past 60 s beside a second run at load 30
    const registry = new CallRegistry();
    const server = await mountNodeHttp({ registry, authenticate });
    const flooder = new Agent({ keepAlive: true, maxSockets: 32, localAddress: "127.0.0.2" } as ConstructorParameters<typeof Agent>[0]);
    const statuses = new Map<number, number>();
    let done = 0;
    let retryAfter = "";
    const started = performance.now();
    const one = (i: number) =>
      new Promise<void>((resolve, reject) => {
        const body = notice("flood", `call-${i}`);
        const req = httpRequest(
          {
            agent: flooder,
            host: "127.0.0.1",
            port: server.port,
            method: "POST",
            path: "/cancel_tool_call",
            headers: { "authorization": GOOD, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
          },
          (res) => {
            statuses.set(res.statusCode ?? 0, (statuses.get(res.statusCode ?? 0) ?? 0) + 1);
            if (res.statusCode === 429) retryAfter = String(res.headers["retry-after"]);
            res.resume();
            res.on("end", () => (done++, resolve()));
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    const flood = Promise.all(Array.from({ length: 10_000 }, (_, i) => one(i)));
    // Another client (127.0.0.1, real fetch) while the flood is under way.
    while (done < 500) await new Promise((resolve) => setTimeout(resolve, 1));
    const others: number[] = [];
    for (let i = 0; i < 20; i++) {
      const call = registry.track("other", `call-${i}`);
      const answer = await send(server, authed(notice("other", `call-${i}`)));
      others.push(answer.status);
      assert.equal(call.signal.aborted, true);
      call.done();
    }
    const doneWhenOthersFinished = done;
    await flood;
    const elapsedS = (performance.now() - started) / 1000;
    flooder.destroy();
    await server.close();

    assert.deepEqual(others, Array(20).fill(200));
    assert.ok(doneWhenOthersFinished < 10_000, "the other client was served during the flood, not after it");
    assert.deepEqual([...statuses.keys()].sort(), [200, 429]);
    const accepted = statuses.get(200) ?? 0;
    // The default bucket: a burst of 200, then 100 a second.
    assert.ok(accepted >= 200 && accepted <= 200 + Math.ceil(100 * elapsedS) + 1, `accepted ${accepted} in ${elapsedS.toFixed(1)} s`);
    assert.equal(accepted + (statuses.get(429) ?? 0), 10_000);
    assert.equal(retryAfter, "1");
    // Only accepted notices reach the registry, so its memory stays bounded by the rate.
    assert.equal(registry.remembered, accepted + 20);
    assert.equal(registry.size, 0);
  });
});

describe("RAP tool server: ids validated on their own when the body limit allows long ones", () => {
  it("a 10 kB id under a 64 KiB body limit gets 422 naming the id, and nothing changes", async () => {
    const registry = new CallRegistry();
    const server = await mountNodeHttp({ registry, authenticate, bodyLimit: 64 * 1024 });
    try {
      const answer = await send(server, authed(notice("t", "x".repeat(10_240))));
      assert.deepEqual([answer.status, answer.body], [422, "tool_call_id: must be at most 256 characters\n"]);
      assert.equal(registry.remembered, 0);
    } finally {
      await server.close();
    }
  });
});
