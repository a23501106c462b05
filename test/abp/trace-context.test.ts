/**
 * The W3C trace context of an ABP call, over a real WebSocket on loopback in Node: the agent
 * side (AbpClient, the envelope channel) writes the call span's context into the call's
 * `options._meta`; the app side (AbpApp behind its EnvelopeHost, as the page serves it) checks
 * it as untrusted input and hands it to the capability as `context.trace`. The official SDK's
 * in-memory exporter collects the spans.
 */
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { SpanKind } from "@opentelemetry/api";
import { WebSocket, WebSocketServer } from "ws";
import { AbpApp, type CapabilityContext } from "../../src/abp/app/index.js";
import { EnvelopeHost } from "../../src/abp/app/envelope-host.js";
import type { Envelope } from "../../src/abp/app/protocol.js";
import type { NotificationPayload } from "../../src/abp/schemas.js";
import { checkAgentMessage } from "../../src/abp/app/validate.js";
import { AbpClient, webSocketTransport } from "../../src/abp/index.js";
import { Job } from "../../src/core/index.js";
import { eventsOf, parentOf, traced } from "../otel/tracing-harness.js";
import { eventually } from "../support/wire-assertions.js";
import { settle } from "../support/jobs.js";

interface Pair {
  client: AbpClient;
  app: AbpApp;
  /** What the app received, as it came. */
  received: Envelope[];
  /** What the app answered. */
  answered: Envelope[];
  /** The trace context each capability call saw. */
  seen: Readonly<Record<string, string>>[];
  sendRaw(data: string): void;
  close(): Promise<void>;
}

async function pair(): Promise<Pair> {
  const seen: Readonly<Record<string, string>>[] = [];
  const app = new AbpApp({
    app: { id: "trace", name: "trace", version: "1" },
    capabilities: {
      wait: (_params, { signal, trace }: CapabilityContext) => {
        seen.push(trace);
        return new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
      },
      echo: (params, { trace }) => {
        seen.push(trace);
        return params;
      },
    },
  });
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", resolve));
  const accepted = new Promise<WebSocket>((resolve) => server.once("connection", resolve));
  const socket = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  await new Promise((resolve) => socket.once("open", resolve));
  const appEnd = await accepted;
  const host = new EnvelopeHost(app);
  const received: Envelope[] = [];
  const answered: Envelope[] = [];
  appEnd.on("message", (data) => {
    received.push(JSON.parse(String(data)) as Envelope);
    host.receive(String(data), (envelope) => {
      answered.push(envelope);
      appEnd.send(JSON.stringify(envelope));
    });
  });
  const client = new AbpClient(webSocketTransport(socket), { graceMs: 2000 });
  await client.initialize();
  return {
    client,
    app,
    received,
    answered,
    seen,
    sendRaw: (data) => socket.send(data),
    close: async () => {
      await client.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const calls = (p: Pair) => p.received.filter((e) => e.type === "capabilities/call");

describe("ABP: the trace context of a call travels in its options._meta (WebSocket, Node)", () => {
  let otel: ReturnType<typeof traced>;
  let p: Pair;
  beforeEach(async () => {
    otel = traced();
    p = await pair();
  });
  afterEach(async () => {
    await p.close();
    await otel.stop();
  });

  it("the call's span context reaches the app's handler as context.trace; the cancel is an event of the call's span", async () => {
    const parent = new Job({ kind: "turn" });
    const call = p.client.call("wait", {}, { parent });
    await eventually(() => p.seen[0], "the handler running");
    parent.cancel("session");
    const result = await call;
    assert.equal(result.cancelled, true);
    settle(parent);

    const span = otel.named("wait");
    assert.equal(span.kind, SpanKind.CLIENT);
    assert.equal(parentOf(span), undefined, "a root: the parent job has no span");
    const traceparent = `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`;
    assert.deepEqual(p.seen[0], { traceparent }, "the handler got the call span's context");
    const envelope = calls(p)[0];
    assert.deepEqual((envelope?.payload as { options?: unknown }).options, { _meta: { traceparent } });
    assert.ok(checkAgentMessage(envelope).ok, "the page's validator takes it");
    assert.deepEqual(eventsOf(span)[0], { name: "cancel", attributes: { "acp_cancel.cancel.cause": "session", "acp_cancel.cancel.origin": "parent" } });
    assert.equal(p.app.stats().records, 0);
  });

  it("the context sits beside the call's other options (progressToken) and leaves the params alone", async () => {
    const result = await p.client.call("echo", { a: 1 }, { progressToken: "t1" });
    assert.deepEqual(result.data, { a: 1 }, "the params reached the handler untouched");
    const options = (calls(p)[0]?.payload as { options?: { progressToken?: unknown; _meta?: { traceparent?: string } } }).options;
    assert.equal(options?.progressToken, "t1");
    assert.match(options?._meta?.traceparent ?? "", /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    assert.deepEqual(p.seen[0], options?._meta);
  });

  it("bad trace context from an agent is refused with a clear error naming the field; nothing starts and the session carries on", async () => {
    const bad: [unknown, RegExp][] = [
      ["00-abc", /options\._meta must be an object/],
      [{ traceparent: 7 }, /options\._meta\.traceparent must be a string of at most 8192 characters/],
      [{ tracestate: "x".repeat(8193) }, /options\._meta\.tracestate must be a string of at most 8192 characters/],
      [{ baggage: ["k=v"] }, /options\._meta\.baggage must be a string/],
    ];
    for (const [index, [meta, message]] of bad.entries()) {
      const id = `bad-${index}`;
      p.sendRaw(JSON.stringify({ type: "capabilities/call", id, timestamp: 1, payload: { capability: "echo", callId: id, options: { _meta: meta } } }));
      const refusal = await eventually(() => p.answered.find((e) => (e.payload as NotificationPayload).inReplyTo === id), `the refusal of ${id}`);
      assert.equal(refusal.type, "notification");
      const { error } = refusal.payload as NotificationPayload;
      assert.equal(error?.code, "INVALID_MESSAGE");
      assert.match(error?.message ?? "", message);
    }
    assert.equal(p.app.stats().started, 0, "no handler started");
    // Other keys in _meta are the agent's own business; a malformed traceparent string is the propagator's to ignore.
    const id = "other-keys";
    p.sendRaw(JSON.stringify({ type: "capabilities/call", id, timestamp: 1, payload: { capability: "echo", callId: id, options: { _meta: { traceparent: "junk", vendor: { x: 1 } } } } }));
    const answer = await eventually(() => p.answered.find((e) => e.id === id), "the answer");
    assert.deepEqual(answer.payload, { success: true, data: {} });
    assert.deepEqual(p.seen.at(-1), { traceparent: "junk" }, "only the W3C keys reach the handler");
  });

  it("without tracing, nothing is added: the call's envelope has no options", async () => {
    await otel.stop(); // no observer, no propagator (afterEach stopping it again is harmless)
    await p.client.call("echo", {});
    assert.equal((calls(p)[0]?.payload as { options?: unknown }).options, undefined);
    assert.deepEqual(p.seen[0], {});
  });
});
