#!/usr/bin/env bash
# Writes the small JSON reports that seed the report and baseline-settings
# fuzzers (tests/fuzz/), each made by accuracy_report itself on the CPU models,
# so that the seeds are what a real run stores. Run from this folder:
#   bash make_report_fixtures.sh path/to/accuracy_report
set -euo pipefail
report=${1:?usage: make_report_fixtures.sh ACCURACY_REPORT}
# Whole-array ops, two accumulators and shapes (fp16).
"$report" --op sum,mean_var --dtype fp16 --accumulator fp32,kahan --shape tree,atomic --dist normal --n 100 \
  --seed 1 --format json --out sum_mean_var_fp16.json
# Row-wise ops with a parameterised distribution (bf16).
"$report" --op rmsnorm,logsumexp --axis inner --cols 32 --n 128 --dtype bf16 --accumulator fp32 --shape tree \
  --dist normal,ill_conditioned:1e8 --format json --out rows_bf16.json
# A user's .npy file instead of generated data.
"$report" --input ../npy/f4_2d.npy --op sum,max --accumulator fp32,exact --shape serial --format json \
  --out input_f4.json
# An fp8 input with an fp8 output format.
"$report" --op dot,norm2 --dtype fp8_e4m3 --out-dtype fp8_e4m3 --n 64 --accumulator fp32 --shape serial \
  --dist normal --format json --out fp8_out.json
# Non-finite data: null metrics with their notes.
"$report" --op sum,amax --dist with_nan,with_inf --n 16 --accumulator fp32 --shape serial --format json \
  --out non_finite.json
