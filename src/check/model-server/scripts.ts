/** What the scripted model does with a turn request, and the shell tool call it makes: no wire format here. */

/**
 * What the model does with a turn request (one that offers tools; anything else gets a short well-formed answer):
 * - `hold`: streams a little text, then a delta every few hundred ms, until the agent closes the request;
 * - `finish`: streams `text` and completes;
 * - `shell`: calls the agent's shell tool with `command`; the request carrying its result is answered as
 *   `then` says (`finish` with `text`, the default, or `hold`);
 * - `permission`: the same call, for an agent set to ask first (agentRecipe's `ask`); the result gets `text`;
 * - `slow`: sends nothing (not even headers) for `delayMs`, then behaves as `hold`.
 */
export type Script =
  | { kind: "hold" }
  | { kind: "finish"; text: string }
  | { kind: "shell"; command: string; text?: string; then?: "finish" | "hold" }
  | { kind: "permission"; command: string; text?: string }
  | { kind: "slow"; delayMs: number };

/** The shell tools the agents offer, by name, and how each takes a command. */
const SHELL_TOOLS: Record<string, (command: string) => Record<string, unknown>> = {
  // claude-agent-acp (Claude Code) and opencode.
  Bash: (command) => ({ command, description: "Run the command" }),
  bash: (command) => ({ command, description: "Run the command" }),
  // gemini-cli and qwen-code.
  run_shell_command: (command) => ({ command, description: "Run the command", is_background: false }),
  // codex: asked to yield after 250 ms, so that a command still running goes on while the model is asked again.
  exec_command: (command) => ({ cmd: command, yield_time_ms: 250 }),
  shell_command: (command) => ({ command }),
  shell: (command) => ({ command: ["sh", "-c", command] }),
};

/** The shell tool call to make, given the tool names the request offers; undefined when none is a shell. */
export function shellCall(offered: readonly string[], command: string, askFirst = false) {
  for (const [name, args] of Object.entries(SHELL_TOOLS)) {
    if (!offered.includes(name)) continue;
    // codex asks (approval_policy "on-request") only when the model asks to leave its sandbox.
    const escalation = askFirst && name === "exec_command" ? { sandbox_permissions: "require_escalated", justification: "asked by the test" } : {};
    return { name, args: { ...args(command), ...escalation } };
  }
  return undefined;
}

/**
 * A process tree (a shell with a node child) that writes `markerFile` after `delayMs` and keeps running: a Stop
 * that really stops the tool leaves it unwritten. No `sleep`: qwen-code refuses blocking commands like one.
 */
export function delayedMarkerCommand(node: string, markerFile: string, delayMs: number): string {
  const program = `setTimeout(()=>require('fs').writeFileSync(${JSON.stringify(markerFile)},'late'),${delayMs});setInterval(()=>{},1000)`;
  return `${quote(node)} -e ${quote(program)} ; echo finished`;
}

const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
