#!/usr/bin/env bash
# Checks the tarball users get, not the work tree: `npm pack` (prepack builds dist/), publint and
# arethetypeswrong on the tarball, then a fresh project installs it and uses every entry of
# `exports` from ESM and from TypeScript, and runs the CLI through npx.
#
#   scripts/pack-smoke.sh            (CI runs it after the tests; needs the repo's devDependencies)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/acp-cancel-pack-XXXXXX")"
trap 'rm -rf "$work"' EXIT   # the tarball is written there too: nothing is left in the clone
bin="$root/node_modules/.bin"
optional_peers=$(node -e 'const p=require(process.argv[1]);console.log(Object.keys(p.peerDependenciesMeta??{}).filter(n=>p.peerDependenciesMeta[n].optional).join(" "))' "$root/package.json")

echo "== npm pack"
cd "$root"
tarball="$work/$(npm pack --silent --pack-destination "$work" | tail -n 1)"
tar -tzf "$tarball" > "$work/files.txt"
grep -qx 'package/dist/index.js' "$work/files.txt" || { echo "the tarball has no dist/index.js" >&2; exit 1; }
# The maintainers' log stays in the repository; no source map points at sources the tarball lacks;
# nothing a user is told to open lives in test/ (test/packaging/docs.test.ts checks the same list).
for unwanted in 'package/docs/decisions\.md' 'package/docs/bench-before-after\.md' '.*\.map' 'package/test/.*' 'package/src/.*'; do
  if grep -qx "$unwanted" "$work/files.txt"; then
    echo "the tarball ships $(grep -x "$unwanted" "$work/files.txt" | head -n 3 | tr '\n' ' ')" >&2; exit 1
  fi
done

echo "== publint"
"$bin/publint" run "$tarball" --strict

echo "== arethetypeswrong (profile esm-only: the package has no CommonJS entry on purpose)"
"$bin/attw" "$tarball" --profile esm-only

echo "== install into a fresh project"
app="$work/app"
mkdir "$app"
cd "$app"
printf '{ "name": "pack-smoke", "private": true, "type": "module" }\n' > package.json
# The registry dependencies are usually in npm's cache already; fall back to the network.
npm install --no-audit --no-fund --offline "$tarball" >/dev/null 2>&1 \
  || npm install --no-audit --no-fund --prefer-offline "$tarball" >/dev/null
for peer in $optional_peers; do
  [ ! -e "node_modules/$peer" ] || { echo "optional peer $peer was installed" >&2; exit 1; }
done

echo "== the CLI through npx"
npx --no-install acp-cancel --version > version.txt
grep -qx "$(node -p 'require(process.argv[1]).version' "$root/package.json")" version.txt
npx --no-install acp-cancel bridge --help > help.txt
grep -q 'acp-cancel bridge \[options\]' help.txt

# One line per entry of the installed package's `exports` (minus package.json), whatever it holds.
node -e '
  const { exports } = require("./node_modules/acp-cancel/package.json");
  for (const key of Object.keys(exports)) if (key !== "./package.json") console.log("acp-cancel" + key.slice(1));
' > specifiers.txt

echo "== ESM: import every export without the optional peers (any that needs one must say which)"
cat > import-all.mjs <<'JS'
import { readFileSync } from "node:fs";
const specifiers = readFileSync("specifiers.txt", "utf8").split("\n").filter(Boolean);
const optional = (process.env.OPTIONAL_PEERS ?? "").split(" ").filter(Boolean);
const requireAll = process.argv.includes("--all");
let failed = false;
for (const specifier of specifiers) {
  try {
    const module = await import(specifier);
    if (Object.keys(module).length === 0) throw new Error("exports nothing");
    console.log(`ok      ${specifier} (${Object.keys(module).length} exports)`);
  } catch (error) {
    const needsPeer = optional.find((peer) => String(error?.message).includes(`'${peer}'`));
    if (!requireAll && specifier !== "acp-cancel" && error?.code === "ERR_MODULE_NOT_FOUND" && needsPeer) {
      console.log(`peer    ${specifier} needs the optional peer ${needsPeer}`);
    } else {
      console.error(`FAILED  ${specifier}: ${error?.message ?? error}`);
      failed = true;
    }
  }
}
process.exit(failed ? 1 : 0);
JS
OPTIONAL_PEERS="$optional_peers" node import-all.mjs

echo "== with the optional peers present: every export imports, and typechecks from TypeScript"
for peer in $optional_peers; do
  if [ -e "$root/node_modules/$peer" ]; then
    mkdir -p "node_modules/$(dirname "$peer")"
    ln -s "$root/node_modules/$peer" "node_modules/$peer"
  fi
done
OPTIONAL_PEERS="$optional_peers" node import-all.mjs --all
node -e '
  const lines = require("fs").readFileSync("specifiers.txt", "utf8").split("\n").filter(Boolean);
  const body = lines.map((s, i) => `import * as m${i} from "${s}";\nexport const used${i}: object = m${i};`).join("\n");
  require("fs").writeFileSync("types.ts", body + "\n");
'
cat > tsconfig.json <<JSON
{
  "compilerOptions": {
    "module": "NodeNext", "moduleResolution": "NodeNext", "target": "ES2022", "lib": ["ES2023", "DOM"],
    "strict": true, "noEmit": true, "skipLibCheck": false, "types": ["node"],
    "typeRoots": ["$root/node_modules/@types"]
  },
  "files": ["types.ts"]
}
JSON
"$bin/tsc" -p tsconfig.json
echo "pack smoke: ok ($(wc -l < specifiers.txt) exports)"
