#include "accuracy/scan_shapes.hpp"

#include <algorithm>

namespace ulpscope {

void add_scan_shapes(MatrixSettings& s) {
  const bool any = std::any_of(s.ops.begin(), s.ops.end(), is_scan);
  if (!any) return;
  const bool only = std::all_of(s.ops.begin(), s.ops.end(), is_scan);
  std::vector<Shape> scan_shapes{Shape::serial};
  for (const auto& [shape, name] : kScanShapeNames) scan_shapes.push_back(shape);
  scan_shapes.push_back(Shape::cub);
  if (only) {
    s.shapes = scan_shapes;
    return;
  }
  for (Shape sh : scan_shapes)
    if (std::find(s.shapes.begin(), s.shapes.end(), sh) == s.shapes.end()) s.shapes.push_back(sh);
}

}  // namespace ulpscope
