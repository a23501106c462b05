import { fileURLToPath } from "node:url";

/** Compiled files, relative to build/bench/lib. */
const built = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));

export const CLI = built("../../src/cli/main.js");
export const peer = (name: string) => built(`../peers/${name}.js`);
export const probe = (name: string) => built(`../probes/${name}.js`);
/** The repository root (build/bench/lib -> ../../..). */
export const REPO = built("../../../");
