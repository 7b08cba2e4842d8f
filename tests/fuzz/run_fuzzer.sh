#!/usr/bin/env bash
# Runs one libFuzzer harness for a fixed time over a copy of its committed corpus, with a fixed
# seed, so a run is repeatable on the same machine and the source tree is never changed. New inputs
# and any crash land in WORK (artifacts/). Usage: run_fuzzer.sh HARNESS CORPUS SECONDS WORK [DICT]
# (LABPOSE_FUZZ_SECONDS in the environment overrides SECONDS: tools/check.sh runs longer campaigns).
set -euo pipefail
harness=$1 corpus=$2 seconds=${LABPOSE_FUZZ_SECONDS:-$3} work=$4
dictionary=()
[[ -n "${5:-}" ]] && dictionary=(-dict="$5")
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
exec "$harness" -max_total_time="$seconds" -seed=1 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 "${dictionary[@]}" -artifact_prefix="$work/artifacts/" "$work/corpus" \
  "$corpus"
