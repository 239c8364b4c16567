#!/usr/bin/env bash
# Everything the GPU side needs, in one go, on the GPU machine, from the repo
# root: configure against the newest CCCL carried in .devdeps (for
# cub_deterministic), build the GPU targets, run the GPU tests, run
# compute-sanitizer memcheck and racecheck over the GPU test binaries at small
# sizes, run the throughput table. Logs go to $OUT (or ./gpu-check-out); the
# last lines printed are a summary, one line per step. Exit status: 0 when
# every step passed.
#
#   tools/gpu_check.sh                 # everything
#   BENCH_ARGS="--n 16777216" tools/gpu_check.sh
#   SKIP_BENCH=1 SKIP_SANITIZERS=1 tools/gpu_check.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
out=${OUT:-$root/gpu-check-out}
mkdir -p "$out"
build=${BUILD_DIR:-build-gpu}
jobs=${JOBS:-$(nproc)}
STEP_TAIL=25  # each step's last lines, after it
# shellcheck source=tools/gpu_steps.sh
source "$root/tools/gpu_steps.sh"

if [ -f .devdeps/unpack.sh ]; then
  # shellcheck disable=SC1091
  source .devdeps/unpack.sh
else
  echo "gpu_check: .devdeps/unpack.sh is missing (run ../shared/device/fetch-deps.sh here first)" >&2
  exit 1
fi
cccl_dirs=""
if [ -f .devdeps/cccl.tar.gz ]; then
  mkdir -p /tmp/cccl && tar -xzf .devdeps/cccl.tar.gz -C /tmp/cccl
  cccl_dirs="/tmp/cccl/cub;/tmp/cccl/thrust;/tmp/cccl/libcudacxx/include"
fi
# reports/ embeds Chart.js; the GPU machine has it only from .devdeps
# (EXTRA_DEBS=libjs-chart.js ../shared/device/fetch-deps.sh).
if [ ! -f /tmp/devroot/usr/share/javascript/chart.js/chart.min.js ]; then
  for deb in .devdeps/libjs-chart.js_*.deb; do [ -f "$deb" ] && dpkg -x "$deb" /tmp/devroot; done
fi
chart_js=$(chart_js_flag)
nvidia-smi >"$out/nvidia-smi.txt" 2>&1

log=$out/build.log
: >"$log"
step configure "$log" cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "-DULPSCOPE_CCCL_INCLUDE_DIRS=$cccl_dirs" $chart_js || { printf '%s\n' "${summary[@]}"; exit 1; }
grep -E "ulpscope: (CUDA|CCCL)" "$log"
targets="gpu_backend_tests gpu_throughput"
# The other GPU test programs, where the build has them.
# The list is read whole first: grep -q stops at its first match, and
# under pipefail the SIGPIPE of the ninja still writing would drop a target.
all_targets=$(ninja -C "$build" -t targets all 2>/dev/null)
for t in kernels_gpu_tests scan_gpu_tests gallery_gpu_tests byo_gpu_tests accuracy_gpu_tests; do
  if grep -q "^$t:" <<<"$all_targets"; then
    targets="$targets $t"
  fi
done
step build "$log" cmake --build "$build" -j "$jobs" --target $targets || { printf '%s\n' "${summary[@]}"; exit 1; }

log=$out/tests.log
: >"$log"
for t in $targets; do
  [ "$t" = gpu_throughput ] && continue
  bin=$(find "$build/tests" -type f -name "$t" -perm -u+x | head -n 1)
  step "test $t" "$log" "$bin" --gtest_brief=1
done

if [ -z "${SKIP_SANITIZERS:-}" ]; then
  log=$out/sanitizers.log
  : >"$log"
  # Small sizes only: the timing, out-of-memory (a refused cudaMalloc is an
  # API error to the sanitizer), 2^20-element and > 2^31-element cases are
  # left out.
  for t in $targets; do
    case $t in
      gpu_backend_tests) filter=${SANITIZE_FILTER:--*Timing*:*OutOfMemory*:*n1048579*} ;;
      # Sizes/.../7 is 2^20 + 3 elements, GpuAtomic runs 2^20 + 3 too, Large 2^31.
      # GpuTreeSpecials sweeps values (signed zeros, NaN) up to 2^20 + 3 elements too.
      # QuotientByCount is 2^35 divisions per launch on registers (arithmetic, not memory).
      kernels_gpu_tests) filter=${SANITIZE_FILTER:--*GpuTreeWhole*/7:*GpuAtomic*:*Large*:*Specials*:*QuotientByCount*} ;;
      # The seeds' traps: 32-thread blocks, partial last warps, atomic resets.
      gallery_gpu_tests) filter=${SANITIZE_FILTER:-GalleryGpuTraps.*} ;;
      # Every scan shape, accumulator and launch over 8 rows of 4097 (the
      # look-back's staging and window share one shared-memory buffer).
      scan_gpu_tests) filter=${SANITIZE_FILTER:-ScanGpu.RowsMatchTheirModels} ;;
      *) continue ;;
    esac
    bin=$(find "$build/tests" -type f -name "$t" -perm -u+x | head -n 1)
    for tool in memcheck racecheck; do
      f=$filter
      # racecheck is far slower: the tree kernels at 33 elements (every op,
      # format, accumulator and config) and the row-wise ones ran clean in
      # 118 s on the H100; the whole small-size set ran past 110 s.
      [ "$tool/$t" = racecheck/kernels_gpu_tests ] && f=${SANITIZE_FILTER:-Sizes/GpuTreeWhole.*/4:GpuTreeRows.*}
      step "$tool $t" "$log" timeout "${SANITIZE_TIMEOUT:-300}" compute-sanitizer --tool "$tool" \
        --error-exitcode 99 "$bin" --gtest_brief=1 "--gtest_filter=$f"
    done
  done
fi

if [ -z "${SKIP_BENCH:-}" ]; then
  log=$out/gpu_throughput.log
  : >"$log"
  # shellcheck disable=SC2086
  step gpu_throughput "$log" "$build/bench/gpu_throughput" ${BENCH_ARGS:-} \
    --json "$out/gpu_throughput.json" --csv "$out/gpu_throughput.csv"
fi

echo
echo "== summary (logs in $out)"
printf '%s\n' "${summary[@]}"
exit $status
