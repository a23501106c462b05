/**
 * How to run each known agent offline against the scripted model: environment around a fresh HOME, config files,
 * authentication, and what to send after `session/new` so that tools run (or ask) without a model-based judge.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export const AGENT_NAMES = ["claude-agent-acp", "claude-agent-acp-v2", "codex-acp", "gemini-cli", "qwen-code", "opencode", "copilot-cli"] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

export interface RecipeOptions {
  /** Make the agent ask before running a shell command, so that a permission dialog opens. */
  ask?: boolean | undefined;
  extraEnv?: Record<string, string>;
}

/** How to start an agent and open its session (a check cell's, an interop cell's). */
export interface AgentRecipe {
  /** The whole environment of the agent (a known one's: PATH and LANG kept, nothing else inherited). */
  readonly env: NodeJS.ProcessEnv;
  /** Config files under HOME, for writeRecipeFiles. */
  readonly files: readonly { path: string; content: string }[];
  /** Arguments the agent's command needs to speak ACP (e.g. `--acp`), when started by its plain bin. */
  readonly acpArgs: readonly string[];
  readonly authenticate?: { methodId: string };
  /** Requests to send after `session/new` (a mode without an approval classifier, say). */
  sessionSetup(sessionId: string): { method: string; params: Record<string, unknown> }[];
}

const FAKE_KEY = "sk-fake-acp-cancel-check-0000";

/** The environment every agent starts from: a fresh HOME and config dirs, fake keys, quiet, no proxies. */
function baseEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ["PATH", "LANG"]) if (process.env[key] !== undefined) env[key] = process.env[key];
  return {
    ...env,
    HOME: home,
    TMPDIR: join(home, "tmp"),
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    NO_COLOR: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    NO_PROXY: "*",
    ...extra,
  };
}

/** How to run `name` offline against the scripted model at `modelUrl` (its base URL, no path). */
export function agentRecipe(name: AgentName, modelUrl: string, home: string, options: RecipeOptions = {}): AgentRecipe {
  const env = baseEnv(home, options.extraEnv);
  const ask = options.ask === true;
  const common = { env, files: [] as { path: string; content: string }[], acpArgs: [] as string[], sessionSetup: () => [] };
  switch (name) {
    case "claude-agent-acp":
    case "claude-agent-acp-v2": {
      const v2 = name === "claude-agent-acp-v2";
      Object.assign(env, {
        ANTHROPIC_API_KEY: FAKE_KEY,
        ANTHROPIC_BASE_URL: modelUrl,
        CLAUDE_CONFIG_DIR: join(home, ".claude"),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        CLAUDE_AGENT_ACP_PROTOCOL: v2 ? "v2" : "v1",
      });
      return {
        ...common,
        // Its default "auto" mode lets a model-based classifier approve tools; offline it blocks
        // them. "default" asks before Bash; the editor answers the dialog.
        sessionSetup: (sessionId) => [
          v2
            ? { method: "session/set_config_option", params: { sessionId, configId: "mode", type: "id", value: "default" } }
            : { method: "session/set_mode", params: { sessionId, modeId: "default" } },
        ],
      };
    }
    case "codex-acp": {
      const codexHome = join(home, ".codex");
      Object.assign(env, { CODEX_HOME: codexHome, OPENAI_API_KEY: FAKE_KEY, CODEX_API_KEY: FAKE_KEY, RUST_LOG: "error" });
      common.files.push({ path: join(codexHome, "config.toml"), content: codexConfig(modelUrl, ask) });
      return {
        ...common,
        authenticate: { methodId: "api-key" },
        // Its default mode ("agent") has a reviewer model judge each escalation; offline there is none.
        // "workspace-write" asks the editor instead; "agent-full-access" never asks.
        sessionSetup: (sessionId) => [{ method: "session/set_mode", params: { sessionId, modeId: ask ? "workspace-write" : "agent-full-access" } }],
      };
    }
    case "gemini-cli":
    case "qwen-code": {
      // qwen-code is gemini-cli's fork: the same flags and settings file (in ~/.qwen), another API.
      const gemini = name === "gemini-cli";
      Object.assign(env, gemini
        ? { GEMINI_API_KEY: FAKE_KEY, GOOGLE_GEMINI_BASE_URL: modelUrl, GEMINI_CLI_NO_RELAUNCH: "true" }
        : { OPENAI_API_KEY: FAKE_KEY, OPENAI_BASE_URL: `${modelUrl}/v1`, OPENAI_MODEL: "qwen3-coder-plus" });
      const settings = {
        ...(gemini ? { security: { auth: { selectedType: "gemini-api-key" } } } : {}),
        privacy: { usageStatisticsEnabled: false },
        general: { disableAutoUpdate: true, ...(gemini ? { disableUpdateNag: true } : {}) },
        telemetry: { enabled: false },
      };
      common.files.push({ path: join(home, gemini ? ".gemini" : ".qwen", "settings.json"), content: JSON.stringify(settings) });
      return {
        ...common,
        acpArgs: ["--acp", ...(ask ? [] : ["--approval-mode", "yolo"])],
        authenticate: { methodId: gemini ? "gemini-api-key" : "openai" },
      };
    }
    case "opencode":
      Object.assign(env, { OPENCODE_DISABLE_MODELS_FETCH: "1", OPENCODE_DISABLE_AUTOUPDATE: "1", OPENCODE_DISABLE_LSP_DOWNLOAD: "1" });
      common.files.push({ path: join(home, ".config", "opencode", "opencode.json"), content: opencodeConfig(modelUrl, ask) });
      return { ...common, acpArgs: ["acp"] };
    case "copilot-cli":
      // Its own provider ("BYOK"): with COPILOT_OFFLINE it needs no GitHub sign-in and makes no other
      // call (no telemetry, updates or GitHub MCP server); Chat Completions on the scripted model.
      Object.assign(env, {
        COPILOT_OFFLINE: "true",
        COPILOT_PROVIDER_BASE_URL: `${modelUrl}/v1`,
        COPILOT_PROVIDER_API_KEY: FAKE_KEY,
        COPILOT_MODEL: "gpt-4.1",
        COPILOT_AUTO_UPDATE: "false",
      });
      return { ...common, acpArgs: ["--acp", "--stdio", ...(ask ? [] : ["--allow-all-tools"])] };
  }
}

/** Writes the recipe's config files and makes its TMPDIR. */
export function writeRecipeFiles(recipe: AgentRecipe): void {
  if (recipe.env.TMPDIR !== undefined) mkdirSync(recipe.env.TMPDIR, { recursive: true });
  for (const file of recipe.files) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, file.content, { mode: 0o600 });
  }
}

const RECOGNIZED: readonly [string, AgentName][] = [
  ["claude-agent-acp", "claude-agent-acp"], ["codex-acp", "codex-acp"], ["gemini", "gemini-cli"], ["qwen", "qwen-code"], ["opencode", "opencode"], ["copilot", "copilot-cli"],
];

/** Which known agent a command line runs, from its words, asked for ACP `protocol` (undefined: not one we know). */
export function recognizeAgent(command: readonly string[], protocol: 1 | 2 = 1): AgentName | undefined {
  const name = RECOGNIZED.find(([word]) => command.join(" ").includes(word))?.[1];
  return name === "claude-agent-acp" && protocol === 2 ? "claude-agent-acp-v2" : name;
}

/** codex ignores OPENAI_BASE_URL: a provider of our own. Tools run as plain processes (no sandbox). */
function codexConfig(modelUrl: string, ask: boolean): string {
  return [
    'model_provider = "scripted"',
    // A codex model family, so that codex offers exec_command (the tool that outlives a cancel).
    'model = "gpt-5.3-codex"',
    // codex 2.6 no longer takes "untrusted"; "on-request" asks when the model asks to leave the sandbox.
    `approval_policy = "${ask ? "on-request" : "never"}"`,
    `sandbox_mode = "${ask ? "workspace-write" : "danger-full-access"}"`,
    "[model_providers.scripted]",
    'name = "scripted"',
    `base_url = "${modelUrl}/v1"`,
    'env_key = "OPENAI_API_KEY"',
    'wire_api = "responses"',
    "request_max_retries = 0",
    "stream_max_retries = 0",
    "stream_idle_timeout_ms = 600000",
    "",
  ].join("\n");
}

/** A provider on the OpenAI-compatible (Chat Completions) package opencode bundles. */
function opencodeConfig(modelUrl: string, ask: boolean): string {
  return JSON.stringify({
    $schema: "https://opencode.ai/config.json",
    model: "scripted/scripted-model",
    autoupdate: false,
    share: "disabled",
    permission: { bash: ask ? "ask" : "allow", edit: "allow" },
    provider: {
      scripted: {
        npm: "@ai-sdk/openai-compatible",
        name: "scripted",
        options: { baseURL: `${modelUrl}/v1`, apiKey: FAKE_KEY },
        models: { "scripted-model": { name: "scripted-model", tool_call: true } },
      },
    },
  });
}
