#pragma once
// The shapes of a run that scans (docs/spec.md, "Scans"): `--op cumsum`
// without `--shape` runs the scan shapes; when every op of the run scans,
// the shapes that only reduce (tree, atomic, cub_deterministic) leave the
// matrix instead of filling the not-run list.
#include "accuracy/run_matrix.hpp"

namespace ulpscope {

void add_scan_shapes(MatrixSettings& s);

}  // namespace ulpscope
