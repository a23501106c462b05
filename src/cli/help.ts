/** `acp-cancel --help`: the commands; each command's own flags are in its own help. */
export const HELP = `acp-cancel: cancellation that actually stops work in the Agent Client Protocol

Usage:
  acp-cancel bridge [options] -- <agent command> [args...]
  acp-cancel trace <trace.jsonl> [--mermaid]
  acp-cancel guardian --rules FILE --port N [--host 127.0.0.1]
  acp-cancel --help | -h | --version | -v

Commands:
  bridge     run the agent behind a cancellation bridge (the editor talks to the bridge on stdio)
  trace      render a trace written by 'bridge --trace' as a timeline or a mermaid diagram
  guardian   run the reference AOS guardian for A2A cancels

Run 'acp-cancel <command> --help' (or 'acp-cancel help <command>') for a command's flags and
exit statuses. Exit status: 0 after --help or --version; 2 for a bad command line (and when no
command is given).
`;
