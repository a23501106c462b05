import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Logger } from "../../src/bridge/logger.js";
import { TraceWriter } from "../../src/bridge/trace-writer.js";
import { TurnProcesses } from "../../src/bridge/turn-processes.js";
import { TICKS_PER_SECOND, TOOL_ANNOUNCE_LAG_MS, uptimeTicks } from "../../src/os/index.js";
import type { JsonRpcResponse } from "../../src/wire/index.js";
import { isAlive } from "../support/bridge-harness.js";
import { eventually } from "../support/wire-assertions.js";

/**
 * TurnProcesses in process against real processes: a shell stands for the agent and starts a
 * `sleep` per line it reads ("<label> <pid>" back), as an agent starts servers and tools; a line
 * "<label> <command>" runs that command instead.
 */
class ShellAgent {
  readonly child: ChildProcessWithoutNullStreams;
  private out = "";
  constructor() {
    const loop = 'while read -r label command; do if [ -n "$command" ]; then eval "$command" & else sleep 300 & fi; echo "$label $!"; done';
    this.child = spawn("bash", ["-c", loop]);
    this.child.stdout.on("data", (chunk: Buffer) => (this.out += chunk.toString()));
  }
  /** Starts a process and resolves with its pid once it runs. */
  async start(label: string, command = ""): Promise<number> {
    this.child.stdin.write(`${label} ${command}\n`);
    const line = await eventually(() => this.out.split("\n").find((l) => l.startsWith(`${label} `)), `${label} started`);
    return Number(line.split(" ")[1]);
  }
  stop(): void {
    for (const line of this.out.split("\n")) {
      const pid = Number(line.split(" ")[1]);
      if (pid > 0 && isAlive(pid)) process.kill(pid, "SIGKILL");
    }
    this.child.kill("SIGKILL");
  }
}

/** The editor's prompt `id` in session `sessionId`, as the engine's turn plug-ins see its job. */
const prompt = (id: string, sessionId = "s") => ({ payload: { id, issuer: "client" as const, sessionId } });
/** The agent's update announcing a tool in `sessionId`. */
const toolCall = (sessionId = "s") => ({ sessionId, update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "sleep" } });
const answer = (id: string, stopReason: string): JsonRpcResponse => ({ jsonrpc: "2.0", id, result: { stopReason } });
/** The editor's `session/new` `id`, as the engine's turn plug-ins see its job. */
const sessionNew = (id: string) => ({ payload: { id, issuer: "client" as const, sessionId: undefined } });
/** Resolves once /proc's clock has moved past the current tick. */
const nextTick = (from = uptimeTicks()) => eventually(() => (uptimeTicks() > from ? true : undefined), "the next tick");
const gone = (pid: number, what: string) => eventually(() => (isAlive(pid) ? undefined : true), `${what} gone`);

describe("bridge: which processes are a turn's (TurnProcesses against real processes, Linux /proc)", function () {
  let agent: ShellAgent;
  let dir: string;
  let trace: TraceWriter;
  let turns: TurnProcesses;
  const notes = () =>
    readFileSync(join(dir, "trace.jsonl"), "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => (JSON.parse(line) as { note?: string }).note ?? "");
  const note = (prefix: string) => eventually(() => notes().find((n) => n.startsWith(prefix)), `the note "${prefix}"`);

  beforeEach(async function () {
    if (process.platform !== "linux") this.skip(); // the rule reads Linux /proc; elsewhere the bridge warns and stops nothing
    agent = new ShellAgent();
    dir = await mkdtemp(join(tmpdir(), "acp-cancel-turn-spans-"));
    trace = new TraceWriter(join(dir, "trace.jsonl"));
    turns = new TurnProcesses(() => agent.child.pid, 300, new Logger("error"), trace, true);
  });
  afterEach(async () => {
    agent.stop();
    await trace.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a child started just before the prompt went out (during session/new) is never the turn's; one started during it is", async () => {
    const server = await agent.start("server");
    turns.promptSent(prompt("p1")); // the prompt goes out within the same tick or the next
    assert.equal(turns.dropUpdate(toolCall()), false, "an update is heard, never dropped");
    const tool = await agent.start("tool");
    turns.answered(prompt("p1"), answer("p1", "cancelled"));
    assert.match(await note("turn-processes:"), new RegExp(`prompt "p1" ended cancelled: SIGTERM \\[${tool}\\], SIGKILL \\[\\]`));
    await gone(tool, "the turn's tool");
    assert.ok(isAlive(server), "the server started before the prompt lives on");
  });

  it("the agent's own probe, started with the prompt before any tool call, is not the turn's; a tool started just before its announcement is", async () => {
    turns.promptSent(prompt("p1"));
    const probe = await agent.start("probe"); // claude-agent-acp's `claude auth status` at each prompt
    const lagTicks = (TOOL_ANNOUNCE_LAG_MS * TICKS_PER_SECOND) / 1000;
    await nextTick(uptimeTicks() + lagTicks + 1); // the model answers with a tool call, later
    const tool = await agent.start("tool"); // codex-acp announces `exec_command` once it runs
    turns.dropUpdate(toolCall());
    turns.answered(prompt("p1"), answer("p1", "cancelled"));
    assert.match(await note("turn-processes:"), new RegExp(`prompt "p1" ended cancelled: SIGTERM \\[${tool}\\], SIGKILL \\[\\]`));
    await gone(tool, "the turn's tool");
    assert.ok(isAlive(probe), "the probe from before the first tool call lives on");
  });

  it("a cancelled turn that announced no tool call has no processes of its own", async () => {
    turns.promptSent(prompt("p1"));
    const probe = await agent.start("probe");
    turns.dropUpdate({ sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } } });
    turns.dropUpdate(toolCall("another session"));
    turns.answered(prompt("p1"), answer("p1", "cancelled"));
    // The next turn's clean-up comes after p1's (both 0.5 s after their answers).
    turns.promptSent(prompt("p2"));
    turns.dropUpdate(toolCall());
    await agent.start("tool");
    turns.answered(prompt("p2"), answer("p2", "cancelled"));
    assert.match(await note("turn-processes:"), /prompt "p2" ended cancelled/);
    assert.equal(notes().filter((n) => n.startsWith("turn-processes:")).length, 1, JSON.stringify(notes()));
    assert.ok(isAlive(probe), "p1 announced no tool: its probe lives on");
  });

  it("--on-stuck kill-tools stops only the stuck turn's processes, never another session's turn's", async () => {
    turns.promptSent(prompt("a", "sa"));
    turns.answered(prompt("a", "sa"), answer("a", "cancelled")); // answered for the agent; its turn goes on
    turns.event({ type: "turn-outlives-answer", sessionId: "sa", id: "a", windowMs: 1000 });
    turns.promptSent(prompt("b", "sb"));
    turns.dropUpdate(toolCall("sb"));
    const serverOfB = await agent.start("server-b");
    turns.answered(prompt("b", "sb"), answer("b", "end_turn"));
    await nextTick(); // start times have a tick's resolution: tool-a is clearly born after b ended
    turns.dropUpdate(toolCall("sa")); // the stuck turn keeps working
    const toolOfA = await agent.start("tool-a");
    await turns.stopStuck("a", 10_000);
    const killed = await note("kill-tools:");
    assert.ok(!killed.includes(String(serverOfB)), killed);
    await gone(toolOfA, "the stuck turn's tool");
    assert.ok(isAlive(serverOfB), "session b's server, born during its own turn, lives on");
  });

  it("a session opened during a turn: its server, and what that server starts later in the turn, are not the turn's", async () => {
    turns.promptSent(prompt("a"));
    turns.dropUpdate(toolCall());
    const tool = await agent.start("tool");
    await nextTick();
    // The new session's MCP server (gemini-cli starts them in session/new) starts a child when told, over a fifo.
    const fifo = join(dir, "go");
    execFileSync("mkfifo", [fifo]);
    turns.requestSent(sessionNew("new-b"));
    const server = await agent.start("server", `sh -c 'read _ < ${fifo}; sleep 300 & echo $! > ${fifo}.pid; wait'`);
    await nextTick();
    turns.answered(sessionNew("new-b"), { jsonrpc: "2.0", id: "new-b", result: { sessionId: "b" } });
    await nextTick();
    await writeFile(fifo, "go\n");
    const written = () => (existsSync(`${fifo}.pid`) ? readFileSync(`${fifo}.pid`, "utf8").trim() || undefined : undefined);
    const child = Number(await eventually(written, "the server's child"));
    try {
      turns.answered(prompt("a"), answer("a", "cancelled"));
      assert.match(await note("turn-processes:"), new RegExp(`prompt "a" ended cancelled: SIGTERM \\[${tool}\\], SIGKILL \\[\\]`));
      await gone(tool, "the turn's tool");
      assert.ok(isAlive(server) && isAlive(child), "the new session's server and its child live on");
    } finally {
      if (isAlive(child)) process.kill(child, "SIGKILL");
    }
  });

  it("a cancelled turn answered for the agent, which goes on: what it starts after the clean-up is stopped at its real end", async () => {
    const helper = await agent.start("helper");
    turns.promptSent(prompt("a"));
    turns.dropUpdate(toolCall());
    const tool = await agent.start("tool");
    turns.answered(prompt("a"), answer("a", "cancelled"), true); // the engine's answer after the grace
    turns.event({ type: "turn-outlives-answer", sessionId: "s", id: "a", windowMs: 10_000 });
    await gone(tool, "the tool of the answered turn");
    await nextTick();
    const late = await agent.start("late"); // the agent's turn still runs, and starts another tool
    turns.expectedReply("a");
    turns.event({ type: "turn-ended", sessionId: "s", id: "a", how: "the agent's late answer", afterMs: 0, suppressedUpdates: 0 });
    await gone(late, "what the turn started after its answer");
    const stopped = () => notes().filter((n) => n.startsWith("turn-processes:"));
    const stops = await eventually(() => (stopped().length > 1 ? stopped() : undefined), "the second stop's note");
    assert.match(stops.at(-1) ?? "", new RegExp(`prompt "a" ended cancelled: SIGTERM \\[${late}\\], SIGKILL \\[\\]`), JSON.stringify(stops));
    assert.ok(isAlive(helper), "the helper from before the turn lives on");
  });

  it("the agent restarted while a cancelled turn is followed: nothing of the new agent is that turn's", async () => {
    let current = agent;
    const fresh = new ShellAgent();
    const followed = new TurnProcesses(() => current.child.pid, 300, new Logger("error"), trace, true);
    try {
      followed.promptSent(prompt("old"));
      followed.dropUpdate(toolCall());
      followed.answered(prompt("old"), answer("old", "cancelled"), true); // the engine's answer; the turn is stuck
      followed.event({ type: "turn-outlives-answer", sessionId: "s", id: "old", windowMs: 10_000 });
      current = fresh; // --on-stuck restart: a new agent in the old one's place
      followed.closed();
      const server = await fresh.start("server"); // born inside the old turn's open span
      followed.event({ type: "turn-ended", sessionId: "s", id: "old", how: "the agent was replaced", afterMs: 0, suppressedUpdates: 0 });
      // A turn of the new agent, cancelled after the old one's stop was due: its note comes last.
      followed.promptSent(prompt("new"));
      followed.dropUpdate(toolCall());
      const tool = await fresh.start("tool");
      followed.answered(prompt("new"), answer("new", "cancelled"));
      assert.match(await note("turn-processes:"), new RegExp(`prompt "new" ended cancelled: SIGTERM \\[${tool}\\], SIGKILL \\[\\]`));
      await followed.stopInFlight(Promise.resolve(), 0);
      assert.deepEqual(notes().filter((n) => n.startsWith("turn-processes:")).length, 1, JSON.stringify(notes()));
      assert.ok(isAlive(server), "the new agent's server lives on");
    } finally {
      fresh.stop();
    }
  });

  it("shutdown with a turn in flight: its processes are stopped like a cancelled turn's; what ran before it lives", async () => {
    const helper = await agent.start("helper");
    turns.promptSent(prompt("p1"));
    turns.dropUpdate(toolCall());
    const tool = await agent.start("tool");
    await turns.stopInFlight(new Promise(() => {}), 0);
    await gone(tool, "the in-flight turn's tool");
    assert.match(notes().find((n) => n.startsWith("turn-processes: shutdown")) ?? "", new RegExp(`SIGTERM \\[${tool}\\]`));
    assert.ok(isAlive(helper), "the helper from before the turn lives on");
  });
});
