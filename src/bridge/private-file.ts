import { closeSync, constants, fchmodSync, fstatSync, ftruncateSync, openSync } from "node:fs";

/** A file the bridge refuses to write, with the reason (the path is the caller's to name). */
export class RefusedFileError extends Error {}

const { O_WRONLY, O_CREAT, O_NOFOLLOW, O_NONBLOCK } = constants;

/**
 * Opens `path` for writing as a private file: created mode 0600, never through a symbolic link
 * (O_NOFOLLOW), never a FIFO or device (O_NONBLOCK keeps a FIFO from blocking the open). An
 * existing regular file is emptied and made 0600 only when it is the user's own with no other
 * hard link; anything else is refused (see docs/decisions.md, "Trace files"). The checks are
 * made on the open descriptor, so nothing can be swapped in between.
 */
export function openPrivateFile(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP")
      throw new RefusedFileError("it is a symbolic link (refused: a trace is never written through a link)");
    throw error;
  }
  const refusal = refusalFor(fstatSync(fd));
  if (refusal !== undefined) {
    closeSync(fd);
    throw new RefusedFileError(refusal);
  }
  ftruncateSync(fd, 0);
  fchmodSync(fd, 0o600);
  return fd;
}

function refusalFor(stat: { isFile(): boolean; uid: number; nlink: number }): string | undefined {
  if (!stat.isFile()) return "it is not a regular file";
  if (process.geteuid !== undefined && stat.uid !== process.geteuid()) return "it belongs to another user";
  if (stat.nlink > 1) return "it has other hard links";
  return undefined;
}
