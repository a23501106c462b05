/**
 * Node's `parseArgs` errors as one plain line. Its own text spans lines (printed as `\x0a` once
 * escaped), and its advice for an unknown option ends in an unbalanced quote.
 */
export function parseArgsMessage(error: Error & { code?: string }, command: string | undefined): string {
  const { message } = error;
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? "";
  const flag = quoted.replace(/ <value>$/, "").split(", ").at(-1) ?? quoted;
  switch (error.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown option '${flag}'${command === "bridge" ? " (the agent's own options go after '--')" : ""}`;
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return `unexpected argument '${quoted}'`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      if (message.includes("is ambiguous"))
        return `${flag} needs a value, and the next argument starts with '-' (a value starting with '-' is written ${flag}=VALUE)`;
      if (message.includes("argument missing")) return `${flag} needs a value`;
      if (message.includes("does not take an argument")) return `${flag} takes no value`;
  }
  return message.split("\n")[0] ?? message;
}
