/**
 * Whether a command line asks for help: `--help` or `-h` among the command's own arguments,
 * that is before a `--` (what follows it belongs to the agent, whose own --help it may be).
 */
export function asksForHelp(argv: readonly string[]): boolean {
  const split = argv.indexOf("--");
  const own = split === -1 ? argv : argv.slice(0, split);
  return own.includes("--help") || own.includes("-h");
}
