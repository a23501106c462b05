import { closeSync, readFileSync } from "node:fs";
import { ExitCode } from "../bridge/exit-codes.js";
import { cannotWrite, describeFileError, openPrivateFile } from "../bridge/private-file.js";

/** A mistake in what the user gave the CLI, reported as one line and a documented exit status. */
export class CliInputError extends Error {
  constructor(message: string, readonly exitCode: number) {
    super(message);
  }
}

/** Reads a file the user named, or fails with exit status 66 naming the file and why. */
export function readInputFile(what: string, file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new CliInputError(`cannot read ${what} '${file}': ${describeFileError(error)}`, ExitCode.noInput);
  }
}

/**
 * Opens an output file as the command will (the bridge's through `openPrivateFile`) before anything starts,
 * so a typo costs no run; else exit 73 naming flag, file and why.
 */
export function checkOutputFile(flag: string, file: string, open?: () => number): void {
  try {
    closeSync(open?.() ?? openPrivateFile(file, flag === "--log-file" ? "append" : "replace"));
  } catch (error) {
    throw new CliInputError(cannotWrite(flag, file, error), ExitCode.cannotCreate);
  }
}
