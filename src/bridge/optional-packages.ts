import { fileURLToPath } from "node:url";

/** What `bridge --otel` loads: the API the library uses, and the SDK pieces the exporter is built from. */
export const OTEL_PACKAGES = [
  "@opentelemetry/api",
  "@opentelemetry/sdk-trace-node",
  "@opentelemetry/exporter-trace-otlp-http",
  "@opentelemetry/resources",
] as const;

/** This copy of acp-cancel: `<root>/dist/bridge/` is where this file runs from. */
const PACKAGE_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Those of `names` that an import from this package would not find. */
export function missingPackages(names: readonly string[], resolve = (name: string) => import.meta.resolve(name)): string[] {
  return names.filter((name) => {
    try {
      resolve(name);
      return false;
    } catch {
      return true;
    }
  });
}

const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`);

/**
 * The npm command that makes `packages` importable by this copy: a global install (`<prefix>/lib/
 * node_modules/acp-cancel`) needs them global in the same prefix; a project's copy, in that project.
 */
export function installCommand(packages: readonly string[], packageRoot = PACKAGE_ROOT): string {
  const root = packageRoot.replace(/\/+$/, "");
  const global = /^(.*)\/lib\/node_modules\/acp-cancel$/.exec(root);
  const project = /^(.*)\/node_modules\/acp-cancel$/.exec(root);
  const where = global !== null ? ["-g", "--prefix", global[1] || "/"] : ["--prefix", project?.[1] ?? root];
  return ["npm", "i", ...where, ...packages].map(shellWord).join(" ");
}

/** "needs the optional package `redis`, not installed: npm i -g --prefix /usr/local redis"; undefined when all are there. */
export function missingPackagesMessage(needs: readonly string[], resolve?: (name: string) => string): string | undefined {
  const missing = missingPackages(needs, resolve);
  if (missing.length === 0) return undefined;
  const list = needs.map((name) => `${name}${missing.includes(name) ? " (missing)" : ""}`).join(", ");
  return `needs the optional package${needs.length > 1 ? "s" : ""} ${list}; install with: ${installCommand(missing)}`;
}
