// accuracy_report --gallery's table: its matrix is the gallery (never the
// default matrix's shapes), cub joins only on a GPU, and what was not
// measured is written as unknown (table) or null (JSON), never as a number.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

#include "reports/gallery_table.hpp"

namespace ulpscope {
namespace {

TEST(GalleryTable, MatrixIsTheGallery) {
  const MatrixSettings cpu = gallery_matrix({Dtype::fp16}, false);
  const MatrixSettings gpu = gallery_matrix({Dtype::fp16}, true);
  EXPECT_EQ(cpu.shapes.size(), kGalleryShapeNames.size());
  for (Shape s : cpu.shapes) EXPECT_TRUE(is_gallery(s)) << to_string(s);
  EXPECT_EQ(gpu.shapes.back(), Shape::cub);
  EXPECT_EQ(cpu.axes, std::vector<Axis>{Axis::all});
  EXPECT_GE(cpu.distributions.size(), 19u);  // every adversarial distribution
  // The default matrix does not run the gallery.
  for (Shape s : default_matrix(false).shapes) EXPECT_FALSE(is_gallery(s)) << to_string(s);
  for (Shape s : default_matrix(true).shapes) EXPECT_FALSE(is_gallery(s)) << to_string(s);
}

GalleryTable sample(bool timed) {
  GalleryTable t;
  t.backend = timed ? "cuda" : "cpu";
  t.device = timed ? "a GPU" : "CPU models";
  t.timing_n = timed ? 1 << 24 : 0;
  if (timed) t.cub_fp32_gbps = 3000.0;
  GalleryRow r;
  r.dtype = Dtype::fp16;
  r.kernel = "v2_sequential";
  r.op = Op::sum;
  r.acc = Accumulator::naive;
  r.cells = 4;
  r.max_ulp = 12.5;
  r.ulps = {0.5, 1.0, 12.5};
  r.without_ulp = 1;
  r.correctly_rounded = 2;
  r.max_distinct_runs = 1;
  r.max_distinct_configs = 3;
  if (timed) {
    r.ms = 0.5;
    r.gbps = 67.1;
    r.fraction_of_cub = 67.1 / 3000.0;
    r.model_checked = 4;
    r.matches_model = 4;
  }
  t.rows.push_back(r);
  return t;
}

TEST(GalleryTable, CpuTimingIsUnknown) {
  std::ostringstream text, json;
  write_gallery(sample(false), "table", text);
  EXPECT_NE(text.str().find("timing needs a GPU"), std::string::npos);
  EXPECT_NE(text.str().find("unknown"), std::string::npos);
  EXPECT_NE(text.str().find("12.5 (+1 without)"), std::string::npos);
  EXPECT_NE(text.str().find("2/4"), std::string::npos);
  write_gallery(sample(false), "json", json);
  const auto j = nlohmann::json::parse(json.str());
  EXPECT_TRUE(j["rows"][0]["gbps"].is_null());
  EXPECT_TRUE(j["rows"][0]["median_ms"].is_null());
  EXPECT_TRUE(j["timing_n"].is_null());
  EXPECT_EQ(j["rows"][0]["max_ulp_error"], 12.5);
}

TEST(GalleryTable, GpuTimingIsShown) {
  std::ostringstream md;
  write_gallery(sample(true), "md", md);
  EXPECT_NE(md.str().find("| v2_sequential"), std::string::npos);
  EXPECT_NE(md.str().find("67.1"), std::string::npos);
  EXPECT_NE(md.str().find("0.02"), std::string::npos);  // of cub
  EXPECT_NE(md.str().find("4/4"), std::string::npos);   // GPU = model
  EXPECT_EQ(md.str().find("unknown"), std::string::npos);
  std::ostringstream bad;
  EXPECT_THROW(write_gallery(sample(true), "csv", bad), std::invalid_argument);
}

}  // namespace
}  // namespace ulpscope
