import type { CellLimits } from "./run-check.js";

/** check's time limits when no flag sets them; its own file so that `--help` loads nothing else of check. */
export const DEFAULT_LIMITS: CellLimits = { startMs: 30_000, stopMs: 5_000 };
