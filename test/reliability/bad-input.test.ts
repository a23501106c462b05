/**
 * The bad-input corpus (test/reliability/corpus/*.json), run three ways:
 * (a) the bridge as a real process, agent = the SDK 2.4.0 fixture --bare: the editor gets exactly
 *     the expected answer (or nothing), the agent gets exactly what should pass (read from the
 *     trace), and a normal request is answered after every case;
 * (b) the CancelEngine alone, fed the parsed value of every line that is JSON (the engine sees
 *     objects; framing is the wire layer's);
 * (c) an embedded SDK agent (withCancellation) spawned and fed the raw bytes: its framing is the
 *     SDK's own ndJsonStream, so parse errors and non-objects are the SDK's answers.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { CancelEngine } from "../../src/index.js";
import type { Side } from "../../src/acp/index.js";
import { classify, type JsonRpcId, type JsonRpcMessage, parseJsonLine } from "../../src/wire/index.js";
import { closeBridge, spawnBridge } from "../support/bridge-harness.js";
import { spawnFixture } from "../support/spawn-peer.js";
import { eventually } from "../support/wire-assertions.js";
import {
  exitOf,
  figure,
  initialize,
  isRequest,
  isResponse,
  type Message,
  RawPeer,
  sameId,
  scaled,
  sleep,
} from "./support.js";

// ---- the corpus ------------------------------------------------------------------------------

type Expect =
  | { kind: "error"; code: number; messageIncludes: string; id?: unknown }
  | { kind: "ignored" }
  | { kind: "forwarded"; answer?: Answer }
  | { kind: "skip"; why: string };
interface Answer {
  id: unknown;
  result?: unknown;
  code?: number;
}
interface Case {
  name: string;
  line?: string;
  base64?: string;
  expect: Expect;
  embedded?: Expect;
  setup?: string[];
  cleanup?: string[];
  awaitSetup?: boolean;
  also?: Answer[];
  rule?: string;
  note?: string;
}

const MAX_LINE_BYTES = 262_144;
const CORPUS = new URL("../../../test/reliability/corpus/", import.meta.url);

/** `{{pad:N}}` stands for N "x" characters, `{{repeat:N:TEXT}}` for TEXT N times, in lines and expectations alike. */
function expand<T>(value: T): T {
  if (typeof value === "string")
    return value
      .replace(/\{\{pad:(\d+)\}\}/g, (_, n: string) => "x".repeat(Number(n)))
      .replace(/\{\{repeat:(\d+):([\s\S]*?)\}\}/g, (_, n: string, text: string) => text.repeat(Number(n))) as T;
  if (Array.isArray(value)) return value.map(expand) as T;
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expand(v)])) as T;
  return value;
}

function loadCorpus(): Case[] {
  const cases: Case[] = [];
  for (const file of ["bad-input.json", "binary.json"]) {
    const data = JSON.parse(readFileSync(new URL(file, CORPUS), "utf8")) as { cases: Case[] };
    cases.push(...data.cases.map(expand));
  }
  return cases;
}

/** The bytes of a case's line, LF included. */
function bytesOf(c: Case): Buffer {
  const body = c.base64 !== undefined ? Buffer.from(c.base64, "base64") : Buffer.from(c.line ?? "", "utf8");
  return Buffer.concat([body, Buffer.from("\n")]);
}

/** What the bridge's wire layer makes of a line: undefined when it is not a JSON value (or too long, or blank). */
function parsedByBridge(c: Case): { value: unknown } | undefined {
  const bytes = bytesOf(c).subarray(0, -1);
  if (bytes.length > MAX_LINE_BYTES) return undefined;
  const end = bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
  const text = bytes.toString("utf8", 0, end);
  if (text.trim() === "") return undefined;
  try {
    return { value: parseJsonLine(text) };
  } catch {
    return undefined;
  }
}

const canonical = (value: unknown) => JSON.stringify(value);

// ---- matching a window of answers -------------------------------------------------------------

type Wanted = { what: string; matches: (m: Message) => boolean };

const short = (value: unknown) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 160 ? `${text.slice(0, 160)}…(${text.length} chars)` : text;
};

function answerWanted(answer: Answer, what: string): Wanted {
  return {
    what: what.length > 200 ? `${what.slice(0, 200)}…` : what,
    matches: (m) => {
      if (!isResponse(m) || !sameId(m.id, answer.id)) return false;
      if (answer.code !== undefined) return (m.error as { code?: number } | undefined)?.code === answer.code;
      if ("result" in answer) return canonical(m.result) === canonical(answer.result);
      return true;
    },
  };
}

/** Every message of the window matched by one wanted answer, every wanted answer present once. */
function wantedFor(c: Case, expect: Expect, probeId: string): Wanted[] {
  const wanted: Wanted[] = [answerWanted({ id: probeId, result: { ok: true } }, `the probe ${probeId}`)];
  if (expect.kind === "error") {
    const id = expect.id ?? null;
    wanted.push({
      what: `error ${expect.code} for ${JSON.stringify(id)} including ${JSON.stringify(expect.messageIncludes)}`,
      matches: (m) => {
        const error = m.error as { code?: number; message?: string } | undefined;
        return (
          isResponse(m) &&
          sameId(m.id, id) &&
          error?.code === expect.code &&
          (error.message ?? "").includes(expect.messageIncludes)
        );
      },
    });
  }
  if (expect.kind === "forwarded" && expect.answer !== undefined)
    wanted.push(answerWanted(expect.answer, `the agent's answer ${short(expect.answer)}`));
  for (const also of c.also ?? []) wanted.push(answerWanted(also, `the setup's answer ${short(also)}`));
  return wanted;
}

/** Problems with a window: unexpected messages and missing answers. */
function judge(window: Message[], wanted: Wanted[]): string[] {
  const open = [...wanted];
  const problems: string[] = [];
  for (const message of window) {
    const index = open.findIndex((w) => w.matches(message));
    if (index === -1) problems.push(`unexpected: ${short(message)}`);
    else open.splice(index, 1);
  }
  for (const w of open) problems.push(`missing: ${w.what}`);
  return problems;
}

const probe = (id: string) => ({ jsonrpc: "2.0", id, method: "_test/echo", params: {} });

/** Feeds every case to a raw peer (a bridge, or an embedded agent) and judges each window. */
async function runOverWire(
  peer: RawPeer,
  cases: Case[],
  expectationOf: (c: Case) => Expect,
): Promise<{ failures: string[]; run: number; probes: string[] }> {
  const failures: string[] = [];
  const probes: string[] = [];
  let run = 0;
  peer.send(initialize("init"));
  await peer.answer("init");
  for (const [index, c] of cases.entries()) {
    const expect = expectationOf(c);
    if (expect.kind === "skip") continue;
    run++;
    const start = peer.received.length;
    for (const line of c.setup ?? []) peer.send(line);
    if (c.awaitSetup) {
      for (const also of c.also ?? [])
        await eventually(() => (peer.received.slice(start).some(answerWanted(also, "").matches) ? true : undefined), "setup");
    }
    await peer.write(bytesOf(c));
    for (const line of c.cleanup ?? []) peer.send(line);
    const probeId = `probe-${index}`;
    probes.push(probeId);
    peer.send(probe(probeId));
    const wanted = wantedFor(c, expect, probeId);
    try {
      await eventually(
        () => (wanted.every((w) => peer.received.slice(start).some(w.matches)) ? true : undefined),
        `the answers of "${c.name}"`,
        5000,
      );
    } catch {
      // judged below: the missing answers are named
    }
    const problems = judge(peer.received.slice(start), wanted);
    if (problems.length > 0) failures.push(`${c.name}:\n      ${problems.join("\n      ")}`);
    if (process.env.ACP_CANCEL_DEBUG && problems.length > 0) console.log(failures.at(-1));
  }
  // Nothing arrives late, and nothing that is not a JSON-RPC object ever arrives.
  const settled = peer.received.length;
  await sleep(300);
  for (const late of peer.received.slice(settled)) failures.push(`late message: ${JSON.stringify(late).slice(0, 300)}`);
  for (const line of peer.garbage) failures.push(`a line that is not a JSON object: ${line.slice(0, 200)}`);
  return { failures, run, probes };
}

// ---- the tests ---------------------------------------------------------------------------------

describe("reliability: bad input from the editor (corpus)", function () {
  this.timeout(120_000);
  const cases = loadCorpus();

  it(`the corpus holds at least 50 cases, each with a known expectation (${cases.length})`, () => {
    assert.ok(cases.length >= 50, `${cases.length} cases`);
    const names = new Set<string>();
    for (const c of cases) {
      assert.ok(!names.has(c.name), `duplicate case name ${c.name}`);
      names.add(c.name);
      assert.ok((c.line === undefined) !== (c.base64 === undefined), `${c.name}: line or base64`);
      assert.ok(["error", "ignored", "forwarded"].includes(c.expect.kind), c.name);
      if (c.expect.kind === "ignored") assert.ok(c.rule, `${c.name}: ignored input needs its written rule`);
    }
  });

  it("(a) the bridge as a real process: exactly the expected answer or nothing, exactly what should pass reaches the agent, the session goes on", async () => {
    const bridge = spawnBridge(["--max-line-bytes", String(MAX_LINE_BYTES)], "sdk-agent", ["--bare"]);
    const peer = new RawPeer(bridge.input, bridge.child.stdin);
    let result: Awaited<ReturnType<typeof runOverWire>>;
    try {
      result = await runOverWire(peer, cases, (c) => c.expect);
    } finally {
      const exit = await closeBridge(bridge);
      assert.equal(exit.code, 0, `the bridge exits 0 after the corpus: ${bridge.stderr().slice(-2000)}`);
    }
    const { failures, run, probes } = result;
    // The agent side, from the trace: between two probes, exactly the case's own forwarded lines.
    const toAgent = bridge.hop("bridge->agent");
    const first = toAgent.findIndex((m) => m.method === "initialize");
    let cursor = first + 1;
    let probeIndex = 0;
    for (const c of cases) {
      const probeId = probes[probeIndex++];
      const end = toAgent.findIndex((m, i) => i >= cursor && m.id === probeId && m.method === "_test/echo");
      if (end === -1) {
        failures.push(`${c.name}: the probe ${probeId} never reached the agent`);
        break;
      }
      const expected = [
        ...(c.setup ?? []).map((line) => JSON.parse(line)),
        ...(c.expect.kind === "forwarded" ? [parsedByBridge(c)?.value] : []),
        ...(c.cleanup ?? []).map((line) => JSON.parse(line)),
      ].map(canonical);
      const got = toAgent.slice(cursor, end).map(canonical);
      if (canonical(got) !== canonical(expected))
        failures.push(`${c.name}: the agent got ${got.join(" | ").slice(0, 400)}; expected ${expected.join(" | ").slice(0, 400)}`);
      cursor = end + 1;
    }
    // Ignored is not silent: each ignored case is logged once as a warning, except blank lines and
    // cancels of ids that are not (or no longer) in flight, which are ordinary races.
    const warnings = bridge.stderr().split("\n");
    // Floods of one kind are counted (the first 3 printed, then "N more … (M in all)" at exit): M is the total.
    const logged = (pattern: RegExp) => {
      const lines = warnings.filter((line) => pattern.test(line));
      const summary = lines.map((line) => / were not printed \((\d+) in all\)$/.exec(line)).find((match) => match !== null);
      return summary ? Number(summary[1]) : lines.length;
    };
    const ruled = (rule: string) => cases.filter((c) => c.expect.kind === "ignored" && c.rule === rule).length;
    const warned = (what: string, pattern: RegExp, expected: number) => {
      const count = logged(pattern);
      if (count !== expected) failures.push(`${what}: ${count} warnings, expected ${expected}`);
    };
    warned("cancel-params", /editor: \$\/cancel_request without a valid params\.requestId: ignored/, ruled("cancel-params"));
    warned("response-unknown", /editor: response to unknown request id/, ruled("response-unknown"));
    // Two malformed responses are logged with their envelope problem ("jsonrpc", "id"), which
    // error cases share; the other five name the response's own problem.
    warned(
      "response-malformed",
      /editor: (a response needs exactly one of|"error" must be an object)/,
      ruled("response-malformed") - 2,
    );
    assert.deepEqual(failures, [], `${failures.length} of ${run} cases failed`);
    assert.equal(run, cases.length);
    figure(`bad input, bridge process: ${run} cases, ${cases.filter((c) => c.expect.kind === "ignored").length} ignored by rule; violations: 0`);
  });

  it("(b) the engine alone, fed every case that is JSON: the same answers, the same pass-through, nothing left in flight", () => {
    const failures: string[] = [];
    const log: { to: Side; message: JsonRpcMessage }[] = [];
    const agentQueue: JsonRpcMessage[] = [];
    const held = new Set<unknown>();
    const engine = new CancelEngine(
      (to, message) => {
        log.push({ to, message });
        if (to === "agent") agentQueue.push(message);
      },
      { graceMs: 1000 },
    );
    /** The agent, simulated like the bare SDK fixture: echo answers, slow waits for its cancel, the rest is unknown. */
    const runAgent = () => {
      while (agentQueue.length > 0) {
        const m = agentQueue.shift() as Message;
        if (isRequest(m)) {
          if (m.method === "_test/slow") held.add(m.id);
          else if (m.method === "_test/echo" || m.method === "initialize")
            engine.receive("agent", { jsonrpc: "2.0", id: m.id, result: m.method === "initialize" ? { protocolVersion: 1 } : { ok: true } });
          else engine.receive("agent", { jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
        } else if (m.method === "$/cancel_request") {
          const id = (m.params as { requestId: unknown }).requestId;
          if (held.delete(id)) engine.receive("agent", { jsonrpc: "2.0", id, error: { code: -32800, message: "Request cancelled" } });
        }
      }
    };
    const feed = (value: unknown) => {
      engine.receive("client", value);
      runAgent();
    };
    feed(initialize("init"));
    let run = 0;
    for (const [index, c] of cases.entries()) {
      const parsed = parsedByBridge(c);
      if (parsed === undefined) continue; // framing: the wire layer's business, not the engine's
      run++;
      const start = log.length;
      for (const line of c.setup ?? []) feed(JSON.parse(line));
      const agentStart = log.length;
      feed(parsed.value);
      const passed = log.slice(agentStart).filter((d) => d.to === "agent" && d.message === parsed.value);
      const shouldPass = c.expect.kind === "forwarded" ? 1 : 0;
      if (passed.length !== shouldPass)
        failures.push(`${c.name}: passed to the agent ${passed.length} times (expected ${shouldPass}, the same object)`);
      for (const line of c.cleanup ?? []) feed(JSON.parse(line));
      feed(probe(`probe-${index}`));
      const window = log.slice(start).filter((d) => d.to === "client").map((d) => d.message as Message);
      const problems = judge(window, wantedFor(c, c.expect, `probe-${index}`));
      if (problems.length > 0) failures.push(`${c.name}:\n      ${problems.join("\n      ")}`);
      if (engine.inFlight.client + engine.inFlight.agent !== 0)
        failures.push(`${c.name}: left ${JSON.stringify(engine.inFlight)} in flight`);
    }
    assert.deepEqual(failures, [], `${failures.length} of ${run} cases failed`);
    assert.ok(run >= 50, `${run} cases reached the engine`);
    figure(`bad input, engine alone: ${run} cases (the rest are framing); violations: 0`);
  });

  it("(c) an embedded SDK agent fed the raw bytes: the SDK's framing answers, then the engine's; the session goes on", async () => {
    const agent = spawnFixture("sdk-agent", []);
    const peer = new RawPeer(agent.input, agent.child.stdin);
    let result: Awaited<ReturnType<typeof runOverWire>>;
    try {
      result = await runOverWire(peer, cases, (c) => c.embedded ?? c.expect);
    } finally {
      agent.child.stdin.end();
      const exit = await exitOf(agent.child, agent.exited);
      assert.equal(exit.code, 0, `the embedded agent exits 0 after the corpus: ${agent.stderr().slice(-2000)}`);
    }
    assert.deepEqual(result.failures, [], `${result.failures.length} of ${result.run} cases failed`);
    figure(`bad input, embedded SDK agent: ${result.run} cases; violations: 0`);
  });
});

// ---- random bad input ------------------------------------------------------------------------

const anyId = fc.oneof(
  fc.constantFrom<unknown>(1, 0, -1, 1.5, "a", "", null, "probe-x"),
  fc.constantFrom<unknown>(true, {}, [], { n: 1 }),
  fc.string({ maxLength: 8 }),
  fc.double(),
);
const field = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });
/** Message-shaped objects with every field sometimes wrong, missing or of the wrong type. */
const messageShaped = fc
  .record({
    jsonrpc: field(fc.constantFrom<unknown>("2.0", "2.0", "2.0", "1.0", 2, null)),
    id: field(anyId),
    method: field(
      fc.constantFrom<unknown>("_test/echo", "$/cancel_request", "session/cancel", "x/unknown", "", 7, null),
    ),
    params: field(
      fc.oneof(
        fc.record({ requestId: field(anyId), sessionId: field(fc.constantFrom<unknown>("s", 1, null)) }),
        fc.constantFrom<unknown>([], [1], "x", 3, null, true),
      ),
    ),
    result: field(fc.jsonValue({ maxDepth: 2 })),
    error: field(
      fc.oneof(
        fc.record({ code: fc.constantFrom<unknown>(-32000, 1.5, "x"), message: field(fc.string({ maxLength: 5 })) }),
        fc.constantFrom<unknown>("boom", null, 3),
      ),
    ),
  })
  .map((record) => Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)));
/** A line: a message-shaped object, any JSON value, or the bytes of one mangled. */
const badLine: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 4, arbitrary: messageShaped.map((m) => Buffer.from(JSON.stringify(m))) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => Buffer.from(JSON.stringify(v) ?? "null")) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(messageShaped, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.nat(2)), { maxLength: 4 }))
      .map(([m, edits]) => {
        let bytes = [...Buffer.from(JSON.stringify(m))];
        for (const [at, byte, op] of edits) {
          const i = at % (bytes.length + 1);
          if (op === 0) bytes[i] = byte;
          else if (op === 1) bytes.splice(i, 0, byte);
          else bytes = bytes.slice(0, i);
        }
        return Buffer.from(bytes.filter((b) => b !== 0x0a));
      }),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from([...a].filter((b) => b !== 0x0a))) },
);

/** What must hold of whatever the engine forwards to the agent: a valid JSON-RPC message. */
function assertValidToAgent(message: unknown, where: string): void {
  const kind = classify(message).kind;
  assert.notEqual(kind, "invalid", `an invalid message reached the agent: ${where} ${short(message)}`);
}

describe("reliability: random bad input (fuzz)", function () {
  this.timeout(0);
  const engineRuns = scaled(2000, 200_000);
  const bridgeLines = scaled(400, 20_000);

  it(`the engine: at most one answer per line, only valid JSON-RPC forwarded, nothing left in flight (${engineRuns} lines)`, () => {
    let lines = 0;
    let answered = 0;
    fc.assert(
      fc.property(badLine, (bytes) => {
        const log: { to: Side; message: JsonRpcMessage }[] = [];
        const engine = new CancelEngine((to, message) => log.push({ to, message }), { graceMs: 0 });
        let value: unknown;
        try {
          value = JSON.parse(bytes.toString("utf8"));
        } catch {
          return; // framing: not the engine's
        }
        lines++;
        engine.receive("client", value);
        const toAgent = log.filter((d) => d.to === "agent");
        for (const d of toAgent) assertValidToAgent(d.message, "engine");
        // The agent answers what it was asked; nothing else is owed.
        for (const d of toAgent)
          if (isRequest(d.message as Message))
            engine.receive("agent", { jsonrpc: "2.0", id: (d.message as { id: JsonRpcId }).id, result: {} });
        const answers = log.filter((d) => d.to === "client" && isResponse(d.message as Message));
        assert.ok(answers.length <= 1, `${answers.length} answers to one line: ${short(value)}`);
        answered += answers.length;
        assert.deepEqual(engine.inFlight, { client: 0, agent: 0 });
      }),
      { numRuns: engineRuns },
    );
    figure(`random bad input, engine alone: ${engineRuns} lines generated, ${lines} were JSON, ${answered} answered; violations: 0`);
  });

  it(`the bridge as a real process: at most one answer per line, only valid JSON-RPC reaches the agent, the session answers after every batch (${bridgeLines} lines)`, async () => {
    const bridge = spawnBridge([], "sdk-agent", ["--bare"]);
    const peer = new RawPeer(bridge.input, bridge.child.stdin);
    const sample = fc.sample(badLine, { numRuns: bridgeLines });
    let failures: string[] = [];
    try {
      peer.send(initialize("init"));
      await peer.answer("init");
      const batch = 20;
      for (let start = 0; start < sample.length; start += batch) {
        const lines = sample.slice(start, start + batch);
        const from = peer.received.length;
        const forwardedFrom = bridge.hop("bridge->agent").length;
        await peer.write(Buffer.concat(lines.flatMap((line) => [line, Buffer.from("\n")])));
        const probeId = `probe-fuzz-${start}`;
        peer.send(probe(probeId));
        await peer.answer(probeId);
        // The agent answers the batch's requests it was given in any order, the probe's maybe first:
        // wait (bounded) for an answer to each, so that none is counted in the next batch's window.
        const forwarded = bridge.hop("bridge->agent").slice(forwardedFrom).filter((m) => isRequest(m) && m.id !== probeId);
        const answeredHere = (id: unknown) => peer.received.slice(from).some((m) => isResponse(m) && sameId(m.id, id));
        await eventually(() => (forwarded.every((m) => answeredHere(m.id)) ? true : undefined), "the batch's answers", 5000).catch(
          () => undefined, // one never answered is no failure here: at most one answer per line is what is checked
        );
        // And anything else still on its way: wait until all is quiet.
        for (let seen = -1; seen !== peer.received.length;) {
          seen = peer.received.length;
          await sleep(20);
        }
        const window = peer.received.slice(from).filter((m) => isResponse(m) && m.id !== probeId);
        if (window.length > lines.length) failures.push(`batch at ${start}: ${window.length} answers to ${lines.length} lines`);
      }
    } finally {
      const exit = await closeBridge(bridge);
      if (exit.code !== 0) failures.push(`the bridge exited ${exit.code}: ${bridge.stderr().slice(-1000)}`);
    }
    for (const line of peer.garbage) failures.push(`a line that is not a JSON object: ${line.slice(0, 200)}`);
    const toAgent = bridge.hop("bridge->agent");
    for (const message of toAgent) {
      if (classify(message).kind === "invalid") failures.push(`invalid message reached the agent: ${short(message)}`);
    }
    failures = [...new Set(failures)];
    assert.deepEqual(failures, []);
    figure(
      `random bad input, bridge process: ${bridgeLines} lines, ${toAgent.length} messages reached the agent, ` +
      `${peer.received.filter(isResponse).length} answers to the editor; violations: 0`,
    );
  });
});
