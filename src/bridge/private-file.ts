import { closeSync, constants, fchmodSync, fstatSync, ftruncateSync, openSync } from "node:fs";
import { errorMessage } from "../core/error-message.js";

/** A file the bridge refuses to write, with the reason (the path is the caller's to name). */
export class RefusedFileError extends Error {}

const { O_WRONLY, O_CREAT, O_NOFOLLOW, O_NONBLOCK, O_APPEND } = constants;

/**
 * Opens `path` as a private file: mode 0600, never through a link, a FIFO or a device; an existing
 * file only when it is the user's own with one link (checked on the descriptor), whose content a
 * trace replaces and a log adds to (`mode`). See docs/decisions.md, "Bridge: trace files".
 */
export function openPrivateFile(path: string, mode: "replace" | "append" = "replace"): number {
  let fd: number;
  try {
    fd = openSync(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | (mode === "append" ? O_APPEND : 0), 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") throw new RefusedFileError("it is a symbolic link");
    throw error;
  }
  const refusal = refusalFor(fstatSync(fd));
  if (refusal !== undefined) {
    closeSync(fd);
    throw new RefusedFileError(refusal);
  }
  if (mode === "replace") ftruncateSync(fd, 0);
  fchmodSync(fd, 0o600);
  return fd;
}

function refusalFor(stat: { isFile(): boolean; uid: number; nlink: number }): string | undefined {
  if (!stat.isFile()) return "it is not a regular file";
  if (process.geteuid !== undefined && stat.uid !== process.geteuid()) return "it belongs to another user";
  if (stat.nlink > 1) return "it has other hard links";
  return undefined;
}

const FILE_ERRORS: ReadonlyMap<string, string> = new Map([
  ["ENOENT", "no such file or directory"],
  ["EISDIR", "is a directory"],
  ["ENOTDIR", "a part of the path is not a directory"],
  ["EACCES", "permission denied"],
  ["EPERM", "permission denied"],
]);

/** "no such file", "is a directory", ... for the file errors people actually meet. */
export function describeFileError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return FILE_ERRORS.get(code ?? "") ?? errorMessage(error);
}

/** "--trace: cannot write 'FILE': refused: it is a symbolic link", or why the system said no. */
export function cannotWrite(flag: string, file: string | undefined, error: unknown): string {
  const why = error instanceof RefusedFileError ? `refused: ${error.message}` : describeFileError(error);
  return `${flag}: cannot write '${file}': ${why}`;
}
