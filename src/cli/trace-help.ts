/** `acp-cancel trace --help`. */
export const TRACE_HELP = `Usage: acp-cancel trace <trace.jsonl> [--mermaid]

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
