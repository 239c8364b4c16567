#!/usr/bin/env bash
# Installs, with apt, whatever ulpscope needs to build and test that is not
# installed yet (Debian 12, as root). Installs nothing when all is present.
set -euo pipefail
packages=(
  g++ cmake ninja-build git
  libmpfr-dev libgmp-dev libboost-dev
  libgtest-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev
  libjs-chart.js                # the HTML report's plots (embedded, no network)
  chromium python3-jsonschema   # tests: the HTML report renders; the JSON matches its schema
  clang libclang-rt-14-dev      # tools/fuzz.sh: clang++ and libFuzzer with the sanitizers' runtimes
  pybind11-dev python3-dev python3-numpy python3-pytest  # the Python package and its tests (python/)
  python3-torch                 # python/tests: evaluate(torch.sum, ...) on CPU tensors
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
