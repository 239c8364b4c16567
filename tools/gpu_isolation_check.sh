#!/usr/bin/env bash
# The GPU tests of plug-in isolation (run_device in ulpscope-kernel-host,
# docs/byo.md "accuracy_report --kernel-lib"), on the GPU machine, from the
# repo root: configure (as tools/gpu_check.sh does), build only what they
# need, run byo_gpu_isolation_tests and the plug-in test of byo_gpu_tests,
# then accuracy_report on the crashing device plug-in. Logs go to $OUT (or
# ./gpu-isolation-out); the last lines printed are a summary, one line per
# step, and the throughput and per-call cost the tests measured. Exit status:
# 0 when every step passed.
#
#   tools/gpu_isolation_check.sh
#   BUILD_DIR=build-gpu JOBS=16 tools/gpu_isolation_check.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUT:-$root/gpu-isolation-out}
mkdir -p "$out"
build=${BUILD_DIR:-build-gpu}
jobs=${JOBS:-$(nproc)}
# shellcheck source=tools/gpu_steps.sh
source "$root/tools/gpu_steps.sh"
finish() {
  echo
  echo "== summary (logs in $out)"
  printf '%s\n' "${summary[@]}"
  grep -h "GB/s\|wall clock" "$out/tests.log" 2>/dev/null | sed 's/^/   /'
  exit $status
}

if [ -f .devdeps/unpack.sh ]; then
  # shellcheck disable=SC1091
  source .devdeps/unpack.sh
fi
chart_js=$(chart_js_flag)
nvidia-smi >"$out/nvidia-smi.txt" 2>&1

log=$out/build.log
: >"$log"
# shellcheck disable=SC2086
step configure "$log" cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release $chart_js || finish
grep -E "ulpscope: CUDA" "$log"
grep -q "ulpscope: CUDA kernels ON" "$log" || { summary+=("no CUDA compiler found: nothing to test"); status=1; finish; }
targets="ulpscope-kernel-host byo_gpu_isolation_tests byo_gpu_tests byo_gpu_crash_plugin accuracy_report"
# shellcheck disable=SC2086
step build "$log" cmake --build "$build" -j "$jobs" --target $targets || finish

log=$out/tests.log
: >"$log"
bin() { find "$build/tests" -type f -name "$1" -perm -u+x | head -n 1; }
step "test byo_gpu_isolation_tests" "$log" "$(bin byo_gpu_isolation_tests)" --gtest_brief=1
step "test byo_gpu_tests (plug-in)" "$log" "$(bin byo_gpu_tests)" --gtest_brief=1 \
  "--gtest_filter=*APluginsDeviceFunctionGivesItsHostTwinsBits*"

# The program itself: every crashing kernel a failed cell, the good one ok,
# exit status 1 (failed cells), the report written.
log=$out/accuracy_report.log
: >"$log"
plugin=$(find "$build/tests" -name 'libbyo_gpu_crash_plugin.so' | head -n 1)
report=$out/crash_plugin_report.json
"$build/reports/accuracy_report" --kernel-lib "$plugin" --kernel-timeout 5 --backend cuda -q --dist normal \
  --n 4096 --seed 1 --format json --out "$report" >>"$log" 2>&1
rc=$?
python3 - "$report" >>"$log" 2>&1 <<'EOF'
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
for c in cells:
    print(f"{c['shape']:28} {c['status']}")
bad = [c for c in cells if (c["shape"] == "gpu_fine_sum") != (c["status"] == "ok")]
sys.exit(1 if bad or not cells else 0)
EOF
cells_rc=$?
summary+=("$(printf '%-34s %s' "accuracy_report crash plug-in" \
  "$([ $rc -eq 1 ] && [ $cells_rc -eq 0 ] && echo "ok (exit 1, statuses as expected)" || echo "FAILED exit $rc, cells $cells_rc")")")
{ [ $rc -eq 1 ] && [ $cells_rc -eq 0 ]; } || status=1
sed 's/^/   /' "$log"
finish
