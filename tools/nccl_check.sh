#!/usr/bin/env bash
# The NCCL all-reduce runner on a machine with 2 or more GPUs: configures as
# the .devdeps/ steps do (docs: ../shared/device/README.md), builds only the
# runner's targets, runs its tests and the benchmark, and writes the logs to
# $OUT (default ./nccl-check). From the project root:
#   tools/nccl_check.sh [benchmark flags, e.g. --log2-n 26]
set -u
export NCCL_NVLS_ENABLE=0  # no NVLink multicast objects, in every process
OUT=${OUT:-$PWD/nccl-check}
mkdir -p "$OUT"
BUILD=${BUILD:-build-nccl}
if [ -f .devdeps/unpack.sh ]; then
  # shellcheck disable=SC1091
  source .devdeps/unpack.sh
fi
nvidia-smi -L | tee "$OUT/gpus.txt"
nvidia-smi topo -m > "$OUT/topology.txt" 2>&1
PY=$(python3 -c 'import torch, sys; print(sys.executable)' 2>/dev/null || echo /usr/bin/python3)
EXTRA=()
if TI=$($PY -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "include"))' 2>/dev/null); then
  mkdir -p /tmp/pyb && ln -sfn "$TI/pybind11" /tmp/pyb/pybind11
  EXTRA+=(-DPython3_EXECUTABLE="$PY" -DCMAKE_CXX_FLAGS=-I/tmp/pyb)
fi
CHART=/tmp/devroot/usr/share/javascript/chart.js/chart.min.js
[ -f "$CHART" ] && EXTRA+=(-DULPSCOPE_CHART_JS="$CHART")
if ! cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "${EXTRA[@]}" > "$OUT/configure.log" 2>&1; then
  tail -30 "$OUT/configure.log"
  exit 1
fi
grep "ulpscope: NCCL" "$OUT/configure.log"
if ! (time cmake --build "$BUILD" -j "$(nproc)" --target nccl_exact_state_tests nccl_allreduce_tests \
      nccl_allreduce_bench) > "$OUT/build.log" 2>&1; then
  grep -E "error|FAILED" -A6 "$OUT/build.log" | head -60
  exit 1
fi
grep real "$OUT/build.log"
status=0
timeout 120 "$BUILD/tests/kernels/nccl_exact_state_tests" > "$OUT/exact-state-tests.log" 2>&1 || status=1
tail -3 "$OUT/exact-state-tests.log"
# The timeout test last: it aborts communicators on purpose.
timeout 300 "$BUILD/tests/kernels/nccl_allreduce_tests" --gtest_filter=-*Withheld* > "$OUT/gpu-tests.log" 2>&1 || status=1
timeout 120 "$BUILD/tests/kernels/nccl_allreduce_tests" --gtest_filter=*Withheld* >> "$OUT/gpu-tests.log" 2>&1 || status=1
grep -E "^\[  (FAILED|PASSED|SKIPPED|     OK) |Failure|what\(\)" "$OUT/gpu-tests.log" | head -40
timeout "${BENCH_TIMEOUT:-420}" "$BUILD/bench/nccl_allreduce_bench" --json "$OUT/bench.json" \
  --nccl-log "$OUT/nccl-log.txt" "$@" 2>&1 | tee "$OUT/bench.md"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
exit $status
