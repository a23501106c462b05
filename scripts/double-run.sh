#!/usr/bin/env bash
# Two `npm test` runs from two clones at once, ROUNDS times in a row (default 3): the fast suite must
# stay green beside a second run of itself (ports, temp dirs, process tables and the CPU shared), with
# no retries. Each clone is installed and built as a newcomer would (npm ci; npm test builds).
#   scripts/double-run.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
work="$(mktemp -d "${TMPDIR:-/tmp}/acp-cancel-double-run-XXXXXX")"
trap 'rm -rf "$work"' EXIT
for clone in a b; do
  git clone --quiet --no-hardlinks . "$work/$clone"
  (cd "$work/$clone" && npm ci --no-audit --no-fund --prefer-offline >"$work/$clone.install.log" 2>&1) \
    || { cat "$work/$clone.install.log"; exit 1; }
done
for round in $(seq 1 "$rounds"); do
  started=$SECONDS
  pids=()
  for clone in a b; do
    (cd "$work/$clone" && npm test >"$work/$clone.round$round.log" 2>&1) &
    pids+=($!)
  done
  failed=0
  for i in 0 1; do wait "${pids[$i]}" || failed=1; done
  for clone in a b; do
    echo "double run $round/$rounds, clone $clone: $(grep -E '^ +[0-9]+ (passing|failing)' "$work/$clone.round$round.log" | tr -s ' ' | tr '\n' ' ')"
  done
  echo "double run $round/$rounds: $((SECONDS - started)) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
  if [ "$failed" -ne 0 ]; then
    for clone in a b; do tail -n 80 "$work/$clone.round$round.log"; done
    echo "double run $round/$rounds failed" >&2
    exit 1
  fi
done
