/** Exit statuses of `acp-cancel`, following shell conventions where one exists. */
export const ExitCode = {
  ok: 0,
  /** The bridge itself failed unexpectedly. */
  internal: 1,
  /** Bad command line. */
  usage: 2,
  /** The agent command exists but cannot be executed. */
  notExecutable: 126,
  /** The agent command was not found. */
  notFound: 127,
  /** 128 + N: the agent was killed by signal N (as a shell reports it). */
  signalBase: 128,
} as const;
