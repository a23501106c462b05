import { readFileSync } from "node:fs";
import { bridgeFlagsHelp } from "../bridge/bridge-options.js";
import { DEFAULT_LIMITS } from "../check/default-limits.js";

/** This package's version: package.json is two folders up in dist/, three in the tests' build/. */
export function packageVersion(): string {
  for (const path of ["../../package.json", "../../../package.json"]) {
    try {
      return (JSON.parse(readFileSync(new URL(path, import.meta.url), "utf8")) as { version: string }).version;
    } catch {
      // not there: the other layout
    }
  }
  return "unknown";
}

/** `acp-cancel --help`: the commands; each command's own flags are in its own help. */
export const HELP = `acp-cancel: cancellation that actually stops work in the Agent Client Protocol

Usage:
  acp-cancel bridge [options] -- <agent command> [args...]
  acp-cancel check [options] -- <agent command> [args...]
  acp-cancel trace <trace.jsonl> [--mermaid]
  acp-cancel guardian --rules FILE --port N [--host 127.0.0.1] [--redis URL]
  acp-cancel --help | -h | --version | -v

Commands:
  bridge     run the agent behind a cancellation bridge (the editor talks to the bridge on stdio)
  check      a Stop scorecard for an agent: how it stops, directly and through the bridge
  trace      render a trace written by 'bridge --trace' as a timeline or a mermaid diagram
  guardian   run the reference AOS guardian for A2A cancels

Run 'acp-cancel <command> --help' (or 'acp-cancel help <command>') for a command's flags and
exit statuses. Exit status: 0 after --help or --version; 2 for a bad command line (an unknown
command, an unknown 'help' topic, and when no command is given).
`;

/** `acp-cancel bridge --help`. */
const BRIDGE_HELP = `Usage: acp-cancel bridge [options] -- <agent command> [args...]

Runs the agent behind a cancellation bridge: the editor talks to the bridge on stdin/stdout, the
bridge to the agent on the agent's stdio. Everything after '--' is the agent's (its own --help too).

Options:
${bridgeFlagsHelp()}
  -h, --help                 print this help and exit 0

If the bridge is killed (even by SIGKILL), a watchdog process stops the agent's process group
(SIGTERM, then SIGKILL 2 s later). If the agent ends on its own, pending editor requests get
error -32603 naming the exit, and a warning goes to stderr.

Exit status: the agent's own status; 128+N when the agent was killed by signal N, or when the
bridge itself was stopped by signal N; 0 when the editor closed stdin and the agent was stopped;
126 agent not executable (or a directory); 127 agent not found; 2 usage; 73 the --trace or
--log-file file cannot be written or is refused; 1 anything else (a bug: please report).
`;

/** `acp-cancel check --help`. */
const CHECK_HELP = `Usage: acp-cancel check [options] -- <agent command> [args...]

Drives the agent as an editor would, each cell a fresh run of it, directly and through
'acp-cancel bridge': initialize, session/new, a prompt, then Stop in one way per row
(session/cancel, $/cancel_request, a cancel right after the prompt, stdin closed mid-turn,
SIGTERM mid-turn). Prints a table: each cell ✔ holds, ✘ does not, – could not be judged; the
time from Stop to the answer (or the exit); what was left running (the run's processes, found
by an environment marker in /proc); and what the bridge changes. Progress goes to stderr.

Without --model-server the agent uses its own model (your keys and settings; each cell costs a
short turn) and the cells that need a scripted turn (a shell tool, a permission dialog, the next
prompt) are listed as left out.

Options:
  --model-server         start the scripted loopback model server and point the agent at it
                         (fake keys, a fresh HOME), so the tool and dialog cells run too
  --json FILE            also write the scorecard as JSON to FILE (docs/check.md)
  --markdown             print a markdown table instead of the text table
  --prompt TEXT          the prompt of a turn to stop (default: a long counting task)
  --only NAME            run only this scenario (repeatable); names as in the table
  --placement WHERE      run only direct or only bridge cells
  --stop-limit-ms N      how long to wait from Stop for the answer or exit (default ${DEFAULT_LIMITS.stopMs})
  --start-limit-ms N     how long to wait for each of initialize and session/new (default ${DEFAULT_LIMITS.startMs})
  --bridge-arg ARG       a flag for 'acp-cancel bridge' (repeatable), e.g. --bridge-arg=--grace-ms=500
  --protocol v1|v2       the ACP version to ask for (default v1); the agent's answer is the one checked
  --quiet                no progress lines on stderr
  -h, --help             print this help and exit 0

Exit status: 0 every cell that ran holds; 1 some cell is ✘; 2 usage (no agent command, an unknown
flag or scenario); 69 the agent could not be used (it exited at once, printed no JSON-RPC, or
initialize or session/new failed or timed out; the message says which); 70 the check itself
failed (a bug: please report); 73 the --json file cannot be written; 126 the agent command is not
executable; 127 it was not found.
`;

/** `acp-cancel trace --help`. */
const TRACE_HELP = `Usage: acp-cancel trace <trace.jsonl> [--mermaid]

Renders a trace written by 'acp-cancel bridge --trace' (or a cross-protocol trace) on stdout:
one line per message or note with its time, or with --mermaid a mermaid sequence diagram.
Control characters from the trace (ESC, BEL, newlines, bidirectional overrides) are printed as
visible escapes such as \\x1b, never raw.

Options:
  --mermaid    print a mermaid sequenceDiagram instead of the timeline
  -h, --help   print this help and exit 0

Exit status: 0 rendered; 2 usage (no file, two files, an unknown flag); 65 the file is not a JSONL
trace (the message names the first bad line); 66 the file is missing, a directory or unreadable.
`;

/** `acp-cancel guardian --help`: flags added to the guardian command are listed here. */
const GUARDIAN_HELP = `Usage: acp-cancel guardian --rules FILE --port N [--host 127.0.0.1] [--redis URL]

Runs the reference AOS guardian for A2A cancels (docs/a2a.md): an HTTP server that answers each
cancel question with the decision of the rules in FILE. Each decision is logged as a JSON line on
stdout; the listening address and problems go to stderr. Stops on SIGINT or SIGTERM (exit 0).

Options:
  --rules FILE   the rules file (JSON, see docs/a2a.md); required
  --port N       the port to listen on, 0 for a free one; required
  --host HOST    the address to listen on (default 127.0.0.1); a non-loopback address needs a
                 token in the rules, or --allow-unauthenticated
  --allow-unauthenticated
                 listen on a non-loopback --host although the rules set no token
  --redis URL    share the rate counts (requests per client, rules' "rate") with the other
                 replicas of this guardian on Redis (redis://HOST:PORT; needs the optional peer
                 'redis'); while Redis is unreachable, checks are answered 503 and each
                 GuardianClient's fail policy decides
  -h, --help     print this help and exit 0

Exit status: 0 stopped by SIGINT/SIGTERM; 2 usage (or a non-loopback --host without a token); 65
invalid rules; 66 rules file missing or unreadable; 69 cannot listen on the port; 78 --redis without
the package 'redis' installed where acp-cancel is (the message gives the npm command).
`;

/** Each command's own help, for `<command> --help` and `help <command>`. */
export const COMMAND_HELP: ReadonlyMap<string, string> = new Map([
  ["bridge", BRIDGE_HELP],
  ["check", CHECK_HELP],
  ["trace", TRACE_HELP],
  ["guardian", GUARDIAN_HELP],
]);
