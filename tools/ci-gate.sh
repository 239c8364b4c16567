#!/usr/bin/env bash
# The accuracy gate of CI, in one place: .github/workflows/accuracy.yml runs
# it, and ctest (CiGateScript, tests/reports/CMakeLists.txt) checks that it
# passes. The CPU models re-run the matrix of the baseline committed in the
# repository and are compared with it cell by cell (docs/ci.md).
#
#   tools/ci-gate.sh ACCURACY_REPORT OUT_DIR [LABEL]
#       writes OUT_DIR/current.json and OUT_DIR/gate.md (also appended to
#       $GITHUB_STEP_SUMMARY when set); exits 0 pass, 1 regression, 2 error.
#   tools/ci-gate.sh --refresh ACCURACY_REPORT
#       rewrites the baseline with this build: commit it with the change
#       that moved the numbers on purpose.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
baseline=tests/data/baselines/cpu-gate.json  # from $root: the report's command line names no local path

if [ "${1:-}" = "--refresh" ]; then
  [ $# -eq 2 ] || { echo "usage: tools/ci-gate.sh --refresh ACCURACY_REPORT" >&2; exit 2; }
  tool=$(realpath "$2")
  cd "$root"
  # Small and fast: one dtype, four ops, the tree shape, a benign, an
  # ill-conditioned and an overflowing distribution, two sizes.
  PATH="$(dirname "$tool"):$PATH"
  exec accuracy_report --backend cpu -q --dtype fp16 --op sum,norm2,mean_var,rmsnorm \
      --accumulator naive,fp32,welford,exact --shape tree \
      --dist normal,ill_conditioned:1e8,near_max --n 1024,4099 --seed 1 \
      --format json --out "$baseline"
fi

[ $# -ge 2 ] && [ $# -le 3 ] || { echo "usage: tools/ci-gate.sh ACCURACY_REPORT OUT_DIR [LABEL]" >&2; exit 2; }
mkdir -p "$2"
tool=$(realpath "$1") out=$(realpath "$2") label=${3:-}
cd "$root"
exec "$tool" --backend cpu -q --baseline "$baseline" --gate --ulp-tolerance 0 \
    ${label:+--label "$label"} --gate-summary "$out/gate.md" --format json --out "$out/current.json"
