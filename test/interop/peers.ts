/**
 * The peers of the interop matrix, run under their real binaries. The third-party ones (codex-acp,
 * claude-agent-acp, gemini-cli, qwen-code, opencode, copilot-cli, acpx) are pinned in test/interop/peers/package.json and
 * installed apart from the root (`npm run interop:install`, into test/interop/peers/node_modules), so that the root install stays
 * small; without them their cells show as pending, naming that script.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { fixturePath } from "../support/spawn-peer.js";
import type { AgentName } from "../../src/check/index.js";
import type { AgentCommand, ModelHole, WireClient } from "./harness.js";

/**
 * test/interop/peers/package.json in the source tree (this file runs compiled, from
 * build/test/interop). A folder of its own, so that its node_modules is never an ancestor of a test
 * source: the tests' own imports resolve from the root as before.
 */
const PEERS_PACKAGE = fileURLToPath(new URL("../../../test/interop/peers/package.json", import.meta.url));
const peersRequire = createRequire(PEERS_PACKAGE);
/** Whether `npm run interop:install` has installed the third-party peers. */
export const PEERS_INSTALLED = existsSync(join(dirname(PEERS_PACKAGE), "node_modules", "acpx", "package.json"));
export const PEERS_NOTE = " [needs the third-party peers: npm run interop:install]";

/** A file of an installed third-party peer (a placeholder path when they are not installed). */
export function peerFile(specifier: string): string {
  if (!PEERS_INSTALLED) return join(dirname(PEERS_PACKAGE), "node_modules", specifier);
  return peersRequire.resolve(specifier);
}

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
  /** Installed by `npm run interop:install` (third-party), not with the root. */
  thirdParty?: boolean;
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

/** Today's agents, run by their real bins against the scripted model (src/check/agents.ts says how). */
export interface RealAgent {
  /** The recipe (src/check/agents.ts) that points it at the scripted model offline. */
  recipe: AgentName;
  /** Name and pinned version, as the matrix shows it. */
  label: string;
  agent: AgentCommand;
}

const viaNode = (file: string): AgentCommand => ({ command: process.execPath, args: [peerFile(file)] });

export const REAL_AGENTS: RealAgent[] = [
  { recipe: "codex-acp", label: "codex-acp 2.6.0", agent: viaNode("@agentclientprotocol/codex-acp/dist/index.js") },
  { recipe: "claude-agent-acp", label: "claude-agent-acp 0.101.0 (v1)", agent: viaNode("@agentclientprotocol/claude-agent-acp/dist/index.js") },
  { recipe: "gemini-cli", label: "gemini-cli 0.61.0", agent: viaNode("@google/gemini-cli/bundle/gemini.js") },
  { recipe: "qwen-code", label: "qwen-code 0.24.4", agent: viaNode("@qwen-code/qwen-code/cli-entry.js") },
  // opencode-ai ships a native binary per platform; the linux-x64 one runs here.
  { recipe: "opencode", label: "opencode 1.18.33", agent: { command: peerFile("opencode-linux-x64/bin/opencode"), args: [] } },
  // @github/copilot's bin is a loader that runs its platform package's binary; the linux-x64 one runs here.
  { recipe: "copilot-cli", label: "copilot-cli 1.0.102", agent: { command: peerFile("@github/copilot-linux-x64"), args: [] } },
];

export const CLAUDE_V2: RealAgent = {
  recipe: "claude-agent-acp-v2",
  label: "claude-agent-acp 0.101.0 (v2)",
  agent: viaNode("@agentclientprotocol/claude-agent-acp/dist/index.js"),
};

/** codex-acp as the acpx and editors cells run it (a ModelHole or a scripted model through sealedEnv's provider). */
export const codex: AgentPeer = {
  name: "codex-acp 2.6.0",
  agent: viaNode("@agentclientprotocol/codex-acp/dist/index.js"),
  auth: "api-key",
  longPrompt: "say hi",
  // Its turn is under way once it has dialled the (loopback) model.
  turnStarted: (_client, hole) => hole.connections > 0,
  exitsOnEof: false,
  honoursCancelRequest: true,
  slow: "direct",
  thirdParty: true,
};

export const claude: AgentPeer = {
  name: "claude-agent-acp 0.101.0",
  agent: viaNode("@agentclientprotocol/claude-agent-acp/dist/index.js"),
  longPrompt: "say hi",
  turnStarted: (_client, hole) => hole.connections > 0,
  exitsOnEof: false,
  honoursCancelRequest: true,
  slow: "all",
  thirdParty: true,
};

/** The SDK-line agents of the ModelHole matrix (today's real agents: real-agents.test.ts, against the scripted model). */
export const AGENT_PEERS: AgentPeer[] = [
  sdkLine("v1", "acp-sdk-v1 (@agentclientprotocol/sdk 1.9.0)"),
  sdkLine("zed04", "acp-sdk-zed04 (@zed-industries/agent-client-protocol 0.4.5)"),
  // The 0.28.1 line is also what the bridge's own tests use as "legacy agent": here only in test:interop.
  sdkLine("legacy", "acp-sdk-legacy (@agentclientprotocol/sdk 0.28.1)", "all"),
];

/** `npm run test:interop` sets this; `npm test` shows the slow cells as pending, naming the script. */
export const RUN_SLOW = process.env.ACP_CANCEL_INTEROP === "1";
export const SLOW_NOTE = " [slow: npm run test:interop]";
