import { BRIDGE_DEFAULTS, DEFAULT_DEADLINES } from "../bridge/bridge-options.js";

const initializeSeconds = (DEFAULT_DEADLINES.initialize ?? 0) / 1000;

/** `acp-cancel bridge --help`. */
export const BRIDGE_HELP = `Usage: acp-cancel bridge [options] -- <agent command> [args...]

Runs the agent behind a cancellation bridge: the editor talks to the bridge on stdin/stdout, the
bridge to the agent on the agent's stdio. Everything after '--' is the agent's (its own --help too).

Options:
  --grace-ms N               wait N ms for a cancelled request's answer before answering it
                             (default ${BRIDGE_DEFAULTS.graceMs})
  --timeout METHOD=SECONDS   deadline for a method, e.g. --timeout fs/read_text_file=30 (repeatable);
                             the request is then cancelled and its answer names the deadline.
                             initialize has one by default: ${initializeSeconds} s (--timeout initialize=SECONDS
                             changes it), so an agent that never answers it cannot leave the editor
                             waiting; other methods have none unless set
  --cleanup-method METHOD    never cancel METHOD for anyone, like terminal/release (repeatable)
  --max-line-bytes N         reject lines longer than N bytes (default ${BRIDGE_DEFAULTS.maxLineBytes})
  --emulate SIDE             treat SIDE (editor, agent, both) as lacking $/cancel_request support
  --assume-support SIDE      treat SIDE (editor, agent, both) as fully supporting cancellation
  --exit-grace-ms N          after closing the agent's stdin, wait N ms before SIGTERM (default ${BRIDGE_DEFAULTS.exitGraceMs})
  --kill-grace-ms N          after SIGTERM, wait N ms before SIGKILL (default ${BRIDGE_DEFAULTS.killGraceMs})
  --turn-end-window-ms N     after answering a cancelled turn for an agent that ignored the cancel, wait up
                             to N ms for the agent to really end it (default ${BRIDGE_DEFAULTS.turnEndWindowMs}); meanwhile its late
                             updates are dropped and the session's next prompt waits
  --on-stuck ACTION          when that window passes: fail (default: the waiting prompt gets an error
                             naming the stuck turn), kill-tools (stop what the agent started during the
                             turn, SIGTERM then SIGKILL, never the agent; then wait once more) or restart
                             (restart the agent; everything pending for it gets an error)
  --keep-turn-processes      keep what a cancelled turn started (default: processes the agent started
                             during that turn and still running 0.5 s after its cancelled answer get
                             SIGTERM, then SIGKILL; Linux only)
  --trace FILE               write every message with its hop and time to FILE (JSONL). The file is
                             created mode 0600; a symbolic link, another user's file or a file with
                             other hard links is refused (exit 73); the user's own file is replaced.
                             Secrets are redacted: env values, credential headers, anything under a
                             key named like a token, secret, password or API key
  --trace-secrets            keep those secrets in the trace, unredacted (prompts and file contents
                             are always in it)
  --otel                     export every request as an OpenTelemetry span over OTLP/HTTP (needs
                             @opentelemetry/sdk-trace-node and @opentelemetry/exporter-trace-otlp-http;
                             OTEL_EXPORTER_OTLP_ENDPOINT etc. apply, and setting it also turns this on).
                             Joins the editor's trace from params._meta.traceparent, else starts one
  --log-level LEVEL          error, warn (default), info or debug (debug prints a summary on exit)
  --log-file FILE            write logs and the agent's stderr to FILE instead of stderr
  -h, --help                 print this help and exit 0

If the bridge is killed (even by SIGKILL), a watchdog process stops the agent's process group
(SIGTERM, then SIGKILL 2 s later). If the agent ends on its own, pending editor requests get
error -32603 naming the exit, and a warning goes to stderr.

Exit status: the agent's own status; 128+N when the agent was killed by signal N, or when the
bridge itself was stopped by signal N; 0 when the editor closed stdin and the agent was stopped;
126 agent not executable (or a directory); 127 agent not found; 2 usage; 73 the --trace or
--log-file file cannot be written or is refused; 1 anything else (a bug: please report).
`;
