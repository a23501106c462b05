/** The third-party agents of the interop matrix, pinned as devDependencies, run under their real binaries. */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fixturePath } from "../support/spawn-peer.js";
import type { AgentCommand, ModelHole, WireClient } from "./harness.js";

const require = createRequire(import.meta.url);

export interface AgentPeer {
  name: string;
  agent: AgentCommand;
  /** The same agent with acp-cancel embedded (SDK peers only). */
  embedded?: AgentCommand;
  /** `authenticate` method id to call before `session/new` (with the fake key in the env). */
  auth?: string;
  /** A prompt that completes offline; undefined when every turn needs a model. */
  normalPrompt?: string;
  /** A prompt that keeps the turn running until cancelled (offline). */
  longPrompt: string;
  /** True once the long turn is visibly under way. */
  turnStarted(client: WireClient, hole: ModelHole): boolean;
  /** True once the agent itself reported its long turn stopped (undefined: it cannot say). */
  turnStopped?: (client: WireClient) => boolean;
  /** A prompt that opens a permission dialog offline; undefined when that needs a model. */
  permissionPrompt?: string;
  /** Exits when its stdin closes (found directly; the bridge copes either way). */
  exitsOnEof: boolean;
  /** `$/cancel_request` honoured directly. */
  honoursCancelRequest: boolean;
  /** Which cells are too slow for `npm test` (they run in `npm run test:interop`). */
  slow: "none" | "direct" | "all";
}

const saidWorking = (client: WireClient) =>
  client.received("session/update").some((m) => JSON.stringify(m).includes('"working"'));

export function sdkLine(line: "legacy" | "v1" | "zed04", label: string, slow: AgentPeer["slow"] = "none"): AgentPeer {
  return {
    name: label,
    agent: { command: process.execPath, args: [fixturePath("sdk-line-agent"), line] },
    embedded: { command: process.execPath, args: [fixturePath("sdk-line-agent"), line, "--embedded"] },
    normalPrompt: "hello",
    longPrompt: "work",
    turnStarted: saidWorking,
    turnStopped: (client) => client.received("session/update").some((m) => JSON.stringify(m).includes('"stopped"')),
    permissionPrompt: "permission",
    exitsOnEof: true,
    honoursCancelRequest: false,
    slow,
  };
}

function codexBinary(): string {
  const pkg = require.resolve("@zed-industries/codex-acp-linux-x64/package.json");
  return join(dirname(pkg), "bin", "codex-acp");
}

export const codex: AgentPeer = {
  name: "codex-acp 0.16.0",
  agent: { command: codexBinary(), args: [] },
  auth: "openai-api-key",
  longPrompt: "say hi",
  // Its turn is under way once it has dialled the (loopback) model.
  turnStarted: (_client, hole) => hole.connections > 0,
  exitsOnEof: false,
  honoursCancelRequest: false,
  // Direct cells wait for it to exit on EOF, which it never does.
  slow: "direct",
};

export const claude: AgentPeer = {
  name: "claude-agent-acp 0.23.1",
  agent: { command: process.execPath, args: [require.resolve("@zed-industries/claude-agent-acp/dist/index.js")] },
  longPrompt: "say hi",
  turnStarted: (_client, hole) => hole.connections > 0,
  exitsOnEof: false,
  honoursCancelRequest: false,
  // session/new alone takes seconds (it starts Claude Code): every cell is slow.
  slow: "all",
};

export const AGENT_PEERS: AgentPeer[] = [
  codex,
  claude,
  sdkLine("v1", "acp-sdk-v1 (@agentclientprotocol/sdk 1.9.0)"),
  sdkLine("zed04", "acp-sdk-zed04 (@zed-industries/agent-client-protocol 0.4.5)"),
  // The 0.28.1 line is also what the bridge's own tests use as "legacy agent": here only in test:interop.
  sdkLine("legacy", "acp-sdk-legacy (@agentclientprotocol/sdk 0.28.1)", "all"),
];

/** `npm run test:interop` sets this; `npm test` shows the slow cells as pending, naming the script. */
export const RUN_SLOW = process.env.ACP_CANCEL_INTEROP === "1";
export const SLOW_NOTE = " [slow: npm run test:interop]";
