#!/usr/bin/env bash
# Fuzzes the input readers (docs/bad-inputs.md, "Fuzzing"): builds the
# libFuzzer programs of tests/fuzz in the debug preset's build (clang, ASan,
# UBSan; build/debug; the fuzz build preset builds them alone) and runs each
# for SECONDS (default 30). Any finding (a crash, a sanitizer report, a leak,
# an uncaught exception, an input slower than 10 s) makes the script fail, and
# the input is kept in tests/fuzz/regressions/<target>/, which fuzz_tests
# replays in every ctest; a small one is also printed in base64, for a CI
# whose clone does not outlive the run.
#   tools/fuzz.sh [SECONDS]
set -euo pipefail
seconds=${1:-30}
case "$seconds" in
  ''|*[!0-9]*|0) echo "fuzz.sh: SECONDS must be a whole number > 0, not '$seconds'" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
cmake --preset debug > /dev/null
cmake --build --preset fuzz
build=build/debug
findings=0
for target in npy_reader raw_reader report_reader baseline_settings; do
  corpus=$build/corpus/$target   # what the fuzzer learns; kept between local runs
  artifacts=$build/artifacts/$target
  log=$build/fuzz_$target.log
  mkdir -p "$corpus" "$artifacts"
  rm -f "$artifacts"/*
  echo "fuzz.sh: $target for $seconds s"
  if "$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$corpus" "$build/tests/fuzz/seeds/$target" > "$log" 2>&1; then
    grep -E '^Done [0-9]+ runs' "$log" | sed "s/^/fuzz.sh: $target: /" || true
  else
    findings=$((findings + 1))
    echo "fuzz.sh: $target: a finding (log: $log):"
    grep -E 'ERROR|SUMMARY|terminate|what\(\)|runtime error' "$log" | head -n 20 || tail -n 40 "$log"
    kept=tests/fuzz/regressions/$target
    mkdir -p "$kept"
    for input in "$artifacts"/*; do
      [ -e "$input" ] || continue
      cp "$input" "$kept/"
      echo "fuzz.sh: $target: input kept as $kept/$(basename "$input")"
      if [ "$(stat -c %s "$input")" -le 4096 ]; then
        echo "fuzz.sh: $target: $(basename "$input") in base64:"
        base64 "$input"
      fi
    done
  fi
done
echo "fuzz.sh: 4 targets fuzzed for $seconds s each, $findings with a finding"
[ "$findings" -eq 0 ]
