/** Exit statuses of `acp-cancel`, following shell conventions where one exists. */
export const ExitCode = {
  ok: 0,
  /** The bridge itself failed unexpectedly. */
  internal: 1,
  /** Bad command line. */
  usage: 2,
  /** An input file is not in the expected format (sysexits EX_DATAERR), e.g. a trace that is not JSONL. */
  dataError: 65,
  /** An input file is missing or cannot be read (sysexits EX_NOINPUT). */
  noInput: 66,
  /** `check`: the agent could not be started or opened no session (sysexits EX_UNAVAILABLE). */
  unavailable: 69,
  /** `check` itself failed unexpectedly (sysexits EX_SOFTWARE): 1 means a cell failed there. */
  software: 70,
  /** An output file (--trace, --log-file, --json) cannot be created (sysexits EX_CANTCREAT). */
  cannotCreate: 73,
  /** The agent command exists but cannot be executed. */
  notExecutable: 126,
  /** The agent command was not found. */
  notFound: 127,
  /** 128 + N: the agent was killed by signal N (as a shell reports it). */
  signalBase: 128,
} as const;
