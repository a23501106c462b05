export const HELP = `acp-cancel: cancellation that actually stops work in the Agent Client Protocol

Usage:
  acp-cancel bridge [options] -- <agent command> [args...]
  acp-cancel trace <trace.jsonl> [--mermaid]
  acp-cancel guardian --rules FILE --port N [--host 127.0.0.1]
  acp-cancel --help | --version

bridge: run the agent behind a cancellation bridge (the editor talks to the bridge on stdio)
  --grace-ms N               wait N ms for a cancelled request's answer before answering it (default 2000)
  --timeout METHOD=SECONDS   deadline for a method, e.g. --timeout fs/read_text_file=30 (repeatable)
  --cleanup-method METHOD    never cancel METHOD for anyone, like terminal/release (repeatable)
  --max-line-bytes N         reject lines longer than N bytes (default 67108864)
  --emulate SIDE             treat SIDE (editor, agent, both) as lacking $/cancel_request support
  --assume-support SIDE      treat SIDE (editor, agent, both) as fully supporting cancellation
  --exit-grace-ms N          after closing the agent's stdin, wait N ms before SIGTERM (default 2000)
  --kill-grace-ms N          after SIGTERM, wait N ms before SIGKILL (default 2000)
  --turn-end-window-ms N     after answering a cancelled turn for an agent that ignored the cancel, wait up
                             to N ms for the agent to really end it (default 10000); meanwhile its late
                             updates are dropped and the session's next prompt waits
  --on-stuck ACTION          when that window passes: fail (default: the waiting prompt gets an error
                             naming the stuck turn), kill-tools (stop what the agent started during the
                             turn, SIGTERM then SIGKILL, never the agent; then wait once more) or restart
                             (restart the agent; everything pending for it gets an error)
  --keep-turn-processes      keep what a cancelled turn started (default: processes the agent started
                             during that turn and still running 0.5 s after its cancelled answer get
                             SIGTERM, then SIGKILL; Linux only)
  --trace FILE               write every message with its hop and time to FILE (JSONL)
  --log-level LEVEL          error, warn (default), info or debug (debug prints a summary on exit)
  --log-file FILE            write logs and the agent's stderr to FILE instead of stderr

trace: render a trace written by --trace as a timeline, or with --mermaid as a sequence diagram

guardian: run the reference AOS guardian for A2A cancels (docs/a2a.md), logging each decision
  as a JSON line on stdout; stops on SIGINT/SIGTERM. Exit 65: invalid rules; 66: rules file
  missing or unreadable; 69: cannot listen on the port.

Exit status: the agent's own status; 128+N when the agent was killed by signal N, or when the
bridge itself was stopped by signal N; 126 agent not executable (or a directory); 127 agent not
found; 2 usage; 65 the trace file is not JSONL written by --trace; 66 an input file is missing or
unreadable; 73 the --trace or --log-file file cannot be written; 1 anything else (a bug: please report).
`;
