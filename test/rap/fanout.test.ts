import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { bearerSigner, combineSigners, headerSigner, RapRuntime, type RapRuntimeEvent } from "../../src/rap/index.js";
import { cancelUrl } from "../../src/rap/http-post.js";
import { type CancelNoticeOutcome, CancelFanout } from "../../src/rap/cancel-fanout.js";
import { INTERRUPTED_TEXT } from "../../src/rap/messages.js";
import { listen, type Listening, recordingServer, until } from "./http-support.js";

describe("RAP runtime: cancel notices fanned out to every tool server over real HTTP", () => {
  const open: Listening[] = [];
  const held: ServerResponse[] = [];
  afterEach(async () => {
    for (const r of held.splice(0)) r.destroy();
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  it("cancelling a thread returns at once; each reachable server gets exactly one POST per call, concurrently, never retried", async () => {
    let slowAnswered = false;
    const slow = await recordingServer((_arrival, response) => {
      // Takes 10 s to answer the cancel.
      held.push(response);
      const timer = setTimeout(() => ((slowAnswered = true), response.end()), 10_000);
      response.on("close", () => clearTimeout(timer));
    });
    const normal = await recordingServer((_a, response) => response.end());
    const failing = await recordingServer((_a, response) => {
      response.statusCode = 500;
      response.end("boom");
    });
    const gone = await listen(() => undefined);
    await gone.close(); // its port now refuses connections
    open.push(slow, normal, failing);

    const events: RapRuntimeEvent[] = [];
    let slowTimedOutAt = Number.POSITIVE_INFINITY;
    const runtime = new RapRuntime({
      // The slow server first: a sequential sender would make everyone wait behind it.
      servers: [{ baseUrl: slow.url, name: "slow" }, { baseUrl: normal.url, name: "normal" }, { baseUrl: gone.url, name: "refusing" }, { baseUrl: failing.url, name: "failing" }],
      signer: bearerSigner("s3cret"),
      timeoutMs: 2_000,
      onEvent: (event) => {
        events.push(event);
        if (event.type === "cancel-notice" && event.server === "slow") slowTimedOutAt = Math.min(slowTimedOutAt, performance.now());
      },
    });
    const a = runtime.dispatch({ threadId: "thread-1", toolCallId: "call-a" });
    const b = runtime.dispatch({ threadId: "thread-1", toolCallId: "call-b" });
    const other = runtime.dispatch({ threadId: "thread-2", toolCallId: "call-c" });

    assert.equal(runtime.cancelThread("thread-1"), 2);
    // Returned before any POST had an outcome: the cancellation never waits on the network.
    assert.deepEqual(events.filter((e) => e.type === "cancel-notice"), []);
    assert.equal(runtime.size, 1, "the cancelled calls have left the registry");
    for (const call of [a, b]) {
      const outcome = await call.outcome;
      assert.equal(outcome.interrupted, true);
      assert.equal(outcome.result.text, INTERRUPTED_TEXT);
      assert.equal(call.job.isSettled, true);
    }
    assert.equal(slowAnswered, false, "the synthetic results did not wait for the slow server");

    await runtime.idle();
    // Exactly one POST per call at every reachable server.
    for (const server of [slow, normal, failing]) {
      assert.deepEqual(
        server.arrivals.map((x) => JSON.parse(x.body)).sort((x, y) => x.tool_call_id.localeCompare(y.tool_call_id)),
        [
          { thread_id: "thread-1", tool_call_id: "call-a" },
          { thread_id: "thread-1", tool_call_id: "call-b" },
        ],
      );
      for (const arrival of server.arrivals) {
        assert.equal(arrival.method, "POST");
        assert.equal(arrival.url, "/cancel_tool_call");
        assert.equal(arrival.headers["content-type"], "application/json");
        assert.equal(arrival.headers.authorization, "Bearer s3cret");
      }
    }
    // Concurrent: the others were reached while the slow server still held both its POSTs.
    assert.equal(slow.arrivals.length, 2);
    for (const arrival of [...normal.arrivals, ...failing.arrivals]) assert.ok(arrival.at < slowTimedOutAt);
    // One outcome per (server, call), each saying what happened.
    const outcomes = events.filter((e): e is CancelNoticeOutcome => e.type === "cancel-notice");
    assert.equal(outcomes.length, 8);
    const byServer = (name: string) => outcomes.filter((o) => o.server === name).map((o) => [o.result, o.status ?? o.detail]);
    assert.deepEqual(byServer("slow"), [["timeout", "no answer within 2000 ms"], ["timeout", "no answer within 2000 ms"]]);
    assert.deepEqual(byServer("normal"), [["ok", 200], ["ok", 200]]);
    assert.deepEqual(byServer("refusing"), [["network-error", "ECONNREFUSED"], ["network-error", "ECONNREFUSED"]]);
    assert.deepEqual(byServer("failing"), [["http-error", 500], ["http-error", 500]]);
    // Nothing retried after the outcomes were in.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(normal.arrivals.length + failing.arrivals.length + slow.arrivals.length, 6);

    // The other thread's call was untouched, and finishes normally.
    assert.equal(runtime.deliver({ type: "tool_result", group_id: "thread-2", id: "call-c", text: "done" }), "accepted");
    assert.deepEqual(await other.outcome, { result: { type: "tool_result", group_id: "thread-2", id: "call-c", text: "done" }, interrupted: false });
    assert.equal(runtime.size, 0);
    assert.equal(runtime.fanout.pending, 0);
  });

  it("the path hangs off the base URL: prefixes kept, trailing slashes and queries ignored", async () => {
    const server = await recordingServer((_a, response) => response.end());
    open.push(server);
    assert.equal(cancelUrl("https://tools.example/").href, "https://tools.example/cancel_tool_call");
    assert.equal(cancelUrl("https://tools.example/a/b//?x=1#f").href, "https://tools.example/a/b/cancel_tool_call");
    assert.throws(() => cancelUrl("ftp://tools.example/"), /must be http or https/);
    const fanout = new CancelFanout({ servers: [`${server.url}/tools`, `${server.url}/tools/`, `${server.url}/`, server.url] });
    fanout.notify("t", "c");
    await fanout.idle();
    assert.deepEqual(server.arrivals.map((a) => a.url).sort(), ["/cancel_tool_call", "/cancel_tool_call", "/tools/cancel_tool_call", "/tools/cancel_tool_call"]);
  });

  it("bounds the POSTs in flight, and a signer that fails costs only its own POST", async () => {
    let inFlight = 0;
    let most = 0;
    const servers: (Listening & { arrivals: { headers: Record<string, unknown> }[] })[] = [];
    for (let i = 0; i < 6; i++) {
      servers.push(
        await recordingServer((_a, response) => {
          most = Math.max(most, ++inFlight);
          setTimeout(() => {
            inFlight--;
            response.end();
          }, 20);
        }),
      );
    }
    open.push(...servers);
    const outcomes: CancelNoticeOutcome[] = [];
    let signed = 0;
    const fanout = new CancelFanout({
      servers: servers.map((s) => s.url),
      concurrency: 2,
      signer: combineSigners(headerSigner({ "x-api-key": "k" }), () => {
        if (++signed === 3) throw new Error("credentials expired");
      }),
      onOutcome: (o) => outcomes.push(o),
    });
    fanout.notify("t", "c");
    assert.ok(fanout.pending > 0);
    await fanout.idle();
    assert.equal(most, 2);
    assert.deepEqual(outcomes.map((o) => o.result).sort(), ["ok", "ok", "ok", "ok", "ok", "signer-error"]);
    assert.equal(outcomes.find((o) => o.result === "signer-error")?.detail, "credentials expired");
    const arrivals = servers.flatMap((s) => s.arrivals);
    assert.equal(arrivals.length, 5);
    for (const arrival of arrivals) assert.equal(arrival.headers["x-api-key"], "k");
    await until(() => inFlight === 0, "servers idle");
  });

  for (const mode of ["node's HTTP client (the default)", "a configured fetch"] as const) {
    it(`through ${mode}: the same outcome for each kind of server, a redirect not followed, the signer's headers sent`, async () => {
      const ok = await recordingServer((_a, response) => response.end("ignored"));
      const failing = await recordingServer((_a, response) => {
        response.statusCode = 500;
        response.end("boom");
      });
      const redirecting = await recordingServer((_a, response) => {
        response.writeHead(307, { location: `${ok.url}/elsewhere` });
        response.end();
      });
      const hanging = await recordingServer((_a, response) => held.push(response));
      const gone = await listen(() => undefined);
      await gone.close();
      open.push(ok, failing, redirecting, hanging);
      let fetched = 0;
      const counting: typeof fetch = (input, init) => {
        fetched++;
        return fetch(input, init);
      };
      const outcomes: CancelNoticeOutcome[] = [];
      const fanout = new CancelFanout({
        servers: [
          { baseUrl: ok.url, name: "ok" },
          { baseUrl: failing.url, name: "failing" },
          { baseUrl: redirecting.url, name: "redirecting" },
          { baseUrl: hanging.url, name: "hanging" },
          { baseUrl: gone.url, name: "gone" },
        ],
        signer: bearerSigner("t0ken"),
        timeoutMs: 2_000, // the hanging server waits it out; the answering ones must never hit it, even on a loaded machine
        ...(mode === "a configured fetch" ? { fetch: counting } : {}),
        onOutcome: (o) => outcomes.push(o),
      });
      fanout.notify("thread", "call");
      await fanout.idle();
      const by = Object.fromEntries(outcomes.map((o) => [o.server, [o.result, o.status ?? o.detail]]));
      assert.deepEqual(by, {
        ok: ["ok", 200],
        failing: ["http-error", 500],
        redirecting: ["http-error", 307],
        hanging: ["timeout", "no answer within 2000 ms"],
        gone: ["network-error", "ECONNREFUSED"],
      });
      assert.equal(fetched, mode === "a configured fetch" ? 5 : 0);
      assert.deepEqual(ok.arrivals.map((a) => [a.url, a.headers.authorization]), [["/cancel_tool_call", "Bearer t0ken"]]);
      assert.deepEqual(JSON.parse(ok.arrivals[0]?.body ?? "null"), { thread_id: "thread", tool_call_id: "call" });
    });
  }

  it("notify only queues; a hung signer ends in one timeout, and a POST to the next server still goes out", async () => {
    const server = await recordingServer((_a, response) => response.end());
    open.push(server);
    const outcomes: CancelNoticeOutcome[] = [];
    let signed = 0;
    const fanout = new CancelFanout({
      servers: [
        { baseUrl: server.url, name: "hung signer" },
        { baseUrl: server.url, name: "signed" },
      ],
      timeoutMs: 100,
      // The first request's credentials never come.
      signer: () => (++signed === 1 ? new Promise<void>(() => undefined) : undefined),
      onOutcome: (o) => outcomes.push(o),
    });
    fanout.notify("t", "c");
    assert.equal(signed, 0);
    assert.equal(fanout.pending, 2);
    await fanout.idle();
    assert.deepEqual(outcomes.map((o) => [o.server, o.result]).sort(), [["hung signer", "timeout"], ["signed", "ok"]]);
    assert.equal(server.arrivals.length, 1);
    assert.equal(fanout.pending, 0);
  });

  it("many notices to many servers: every POST reported exactly once, at most `concurrency` at a time", async () => {
    let inFlight = 0;
    let most = 0;
    const server = await recordingServer((_a, response) => {
      most = Math.max(most, ++inFlight);
      setImmediate(() => {
        inFlight--;
        response.end();
      });
    });
    open.push(server);
    const outcomes: CancelNoticeOutcome[] = [];
    const fanout = new CancelFanout({
      servers: Array.from({ length: 20 }, (_, i) => ({ baseUrl: `${server.url}/s${i}`, name: `s${i}` })),
      concurrency: 7,
      onOutcome: (o) => outcomes.push(o),
    });
    for (let call = 0; call < 10; call++) fanout.notify("t", `c${call}`);
    await fanout.idle();
    assert.equal(outcomes.length, 200);
    assert.equal(new Set(outcomes.map((o) => `${o.server} ${o.toolCallId}`)).size, 200);
    assert.ok(outcomes.every((o) => o.result === "ok"));
    assert.equal(server.arrivals.length, 200);
    assert.ok(most <= 7);
  });

  it("sends the Host and the URL's credentials as node would, and a signer's own Authorization instead", async () => {
    const server = await recordingServer((_a, response) => response.end());
    open.push(server);
    const withAuth = server.url.replace("http://", "http://us%20er:p%40ss@");
    const plain = new CancelFanout({ servers: [withAuth] });
    plain.notify("t", "c");
    await plain.idle();
    const signed = new CancelFanout({ servers: [withAuth], signer: bearerSigner("tok") });
    signed.notify("t", "c");
    await signed.idle();
    const host = new URL(server.url).host;
    assert.deepEqual(
      server.arrivals.map((a) => [a.headers.host, a.headers.authorization, a.headers["content-type"], a.headers["content-length"]]),
      [
        [host, `Basic ${Buffer.from("us er:p@ss").toString("base64")}`, "application/json", "36"],
        [host, "Bearer tok", "application/json", "36"],
      ],
    );
  });

  it("rejects bad configuration with a message naming it", () => {
    assert.throws(() => new CancelFanout({ servers: [], timeoutMs: 0 }), /timeoutMs must be a positive number/);
    assert.throws(() => new CancelFanout({ servers: [], concurrency: -1 }), /concurrency must be a positive number/);
    assert.throws(() => new CancelFanout({ servers: ["not a url"] }), /Invalid URL/);
  });
});
