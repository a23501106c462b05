// One tool lints and formats: ESLint with typescript-eslint (correctness) and @stylistic (layout).
import js from "@eslint/js";
import stylistic from "@stylistic/eslint-plugin";
import globals from "globals";
import tseslint from "typescript-eslint";

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
);
