/** `acp-cancel guardian --help`: flags added to the guardian command are listed here. */
export const GUARDIAN_HELP = `Usage: acp-cancel guardian --rules FILE --port N [--host 127.0.0.1]

Runs the reference AOS guardian for A2A cancels (docs/a2a.md): an HTTP server that answers each
cancel question with the decision of the rules in FILE. Each decision is logged as a JSON line on
stdout; the listening address and problems go to stderr. Stops on SIGINT or SIGTERM (exit 0).

Options:
  --rules FILE   the rules file (JSON, see docs/a2a.md); required
  --port N       the port to listen on, 0 for a free one; required
  --host HOST    the address to listen on (default 127.0.0.1)
  -h, --help     print this help and exit 0

Exit status: 0 stopped by SIGINT/SIGTERM; 2 usage; 65 invalid rules; 66 rules file missing or
unreadable; 69 cannot listen on the port.
`;
