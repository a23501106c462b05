// One tool lints and formats: ESLint with typescript-eslint (correctness) and @stylistic (layout),
// and the layering of src/ (docs/design: imports point down only) through no-restricted-imports.
import js from "@eslint/js";
import stylistic from "@stylistic/eslint-plugin";
import globals from "globals";
import tseslint from "typescript-eslint";

/**
 * What each folder of src/ may import of ours besides itself; anything else of ours is refused.
 * src/cli and src/index.ts, at the top, may import anything; a new folder gets a line here.
 * core and os are the bottom: the job tree, no I/O, no protocol (core); the host's processes (os).
 * A binding never imports another binding.
 */
const BINDING = ["core", "wire"];
export const LAYERS = {
  core: [],
  os: [],
  wire: ["core"],
  acp: BINDING,
  jsonrpc: BINDING,
  rap: [...BINDING, "os"],
  abp: BINDING,
  a2a: BINDING,
  mcp: BINDING,
  replicas: BINDING,
  // Tracing maps jobs to spans; it knows core only. The bridge loads it when --otel asks.
  otel: BINDING,
  bridge: ["acp", "wire", "core", "os", "otel"],
  // `acp-cancel check`: an editor on the wire (wire) and the run's processes (os); the bridge it
  // checks runs as the CLI's own subprocess, never imported. Its scripted model and agent recipes
  // (check/model-server, check/agents.ts, shared with the interop suite) use node:http only.
  check: ["wire", "os"],
};
/**
 * One block per folder and depth: a file `depth` folders below src/<layer> reaches src/ with
 * depth + 1 "../", so the import string alone says which folder it lands in. Imports that climb
 * out of src/ (test, bench, examples) or into the root entry are refused everywhere in a layer.
 */
function layering() {
  return Object.entries(LAYERS).flatMap(([layer, allowed]) => {
    const own = [layer, ...allowed].join("|");
    return [0, 1, 2, 3].map((depth) => {
      const up = `(?:\\.\\./){${depth + 1}}`;
      return {
        files: [`src/${layer}/${"*/".repeat(depth)}*.ts`],
        rules: {
          "no-restricted-imports": ["error", {
            patterns: [
              {
                regex: `^${up}(?!(?:${own})(?:/|$)|index(?:\\.js)?$)[^./]`,
                message: allowed.length === 0
                  ? `src/${layer} imports nothing of ours (layers point down: LAYERS in eslint.config.js).`
                  : `src/${layer} may import only ${allowed.map((f) => `src/${f}`).join(", ")} (layers point down: LAYERS in eslint.config.js).`,
              },
              {
                regex: `^${up}(?:\\.\\./|index(?:\\.js)?$)`,
                message: `src/${layer} may not import the root entry or anything outside src/ (layers point down).`,
              },
            ],
          }],
        },
      };
    });
  });
}

export default tseslint.config(
  { ignores: ["dist/", "build/", "coverage/", "node_modules/", "schema/", "bench/results/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  stylistic.configs.customize({
    indent: 2,
    quotes: "double",
    semi: true,
    jsx: false,
    braceStyle: "1tbs",
    arrowParens: true,
    commaDangle: "always-multiline",
  }),
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "@stylistic/max-len": ["error", { code: 130, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreUrls: true }],
      "@stylistic/operator-linebreak": ["error", "after", { overrides: { "?": "before", ":": "before", "|": "before", "&": "before" } }],
      "@stylistic/lines-between-class-members": "off",
      "@stylistic/quotes": ["error", "double", { avoidEscape: true }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" }],
      "@typescript-eslint/no-non-null-assertion": "error",
      "no-constant-condition": ["error", { checkLoops: false }],
    },
  },
  ...layering(),
);
