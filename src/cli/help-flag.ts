/** Whether `--help` or `-h` is among the command's own arguments: before a `--` (after it, the agent's). */
export function asksForHelp(argv: readonly string[]): boolean {
  const split = argv.indexOf("--");
  const own = split === -1 ? argv : argv.slice(0, split);
  return own.includes("--help") || own.includes("-h");
}
