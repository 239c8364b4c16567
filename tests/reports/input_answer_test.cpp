// The answer of an --input run: the reference in decimal once per op when
// every row shares it, each kernel's result and each --check value in
// decimal beside its hex-float, columns of their own where the rows'
// references differ (row-wise ops), and the same through JSON and back.
#include "reports/input_answer.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "reports/json_report.hpp"
#include "sample_report.hpp"

namespace ulpscope {
namespace {

Report input_report() {
  Report r = test::sample_report();
  r.header.input = InputDescription{"data/x.npy", "<f2", "fp16", ""};
  r.cells.clear();
  // fp16 4448 + 1: exact 4449, correctly rounded 4448.
  for (const char* acc : {"fp32", "naive"}) {
    Cell c = test::base_cell("sum", "fp16", acc, "tree", "file:x.npy", 2);
    c.reference_rounded = hex_float(4448.0);
    c.reference_exact = "4.449e+03";
    c.result = hex_float(acc == std::string("fp32") ? 4448.0 : 4452.0);
    c.ulp_error = acc == std::string("fp32") ? 0.25 : 0.75;
    c.correctly_rounded = acc == std::string("fp32");
    r.cells.push_back(c);
  }
  Cell failed = test::base_cell("sum", "fp16", "kahan", "serial", "file:x.npy", 2);
  failed.status = "failed: reference: out of memory";
  r.cells.push_back(failed);
  UserValueCheck u;
  u.label = "user value 1";
  u.given = "4444";
  u.value = hex_float(4444.0);
  u.op = "sum";
  u.out_dtype = "fp16";
  u.reference_rounded = hex_float(4448.0);
  u.reference_exact = "4.449e+03";
  u.ulp_error = 1.25;
  r.checks.push_back(u);
  u.label = "user value 2";
  u.given = "4450";  // not an fp16 value: read as 4448
  u.given_exactly = false;
  u.value = hex_float(4448.0);
  u.ulp_error = 0.25;
  u.correctly_rounded = true;
  r.checks.push_back(u);
  return r;
}

TEST(InputAnswer, TextShowsTheReferenceOnceAndEveryResultInDecimal) {
  const std::string text = input_answer_text(input_report());
  EXPECT_EQ(text,
            "\n"
            "your data: data/x.npy (stored as '<f2', read as fp16)\n"
            "\n"
            "sum fp16: correctly rounded 4448 (0x1.16p+12), exact 4449\n"
            "  kernel or value      result  hex           ulp  CR\n"
            "  fp32 tree              4448  0x1.16p+12   0.25  yes\n"
            "  naive tree             4452  0x1.164p+12  0.75  no\n"
            "  kahan serial         failed\n"
            "  user value 1           4444  0x1.15cp+12  1.25  no\n"
            "  user value 2 (4450)    4448  0x1.16p+12   0.25  yes\n");
  // A generated input has no answer to show.
  EXPECT_EQ(input_answer_text(test::sample_report()), "");
  EXPECT_EQ(input_answer_markdown(test::sample_report()), "");
}

TEST(InputAnswer, ConversionAndRowWiseReferencesAreShown) {
  Report r = input_report();
  r.header.input->read_as = "bf16";
  r.header.input->conversion = "float16 data ('<f2') converted to bf16 (--dtype bf16): 1 of 2 values rounded";
  r.checks.clear();
  r.cells.resize(1);
  Cell row = test::base_cell("rms", "fp16", "fp32", "tree", "file:x.npy", 8);
  row.axis = "inner";
  row.component = "row 1";
  row.reference_rounded = hex_float(0.5);
  row.reference_exact = "5.0001e-01";
  row.result = hex_float(0.5);
  r.cells.push_back(row);
  const std::string text = input_answer_text(r);
  EXPECT_NE(text.find("read as bf16)\n  float16 data ('<f2') converted to bf16 (--dtype bf16): 1 of 2 values rounded\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nrms fp16 along inner\n"), std::string::npos) << text;
  EXPECT_NE(text.find("at     correctly rounded  exact"), std::string::npos) << text;
  EXPECT_NE(text.find("row 1  0.5                0.50001"), std::string::npos) << text;
  const std::string md = input_answer_markdown(r);
  EXPECT_NE(md.find("**sum fp16**: correctly rounded `4448` (0x1.16p+12), exact `4449`"), std::string::npos) << md;
  EXPECT_NE(md.find("| fp32 tree | 4448 | 0x1.16p+12 | 0.25 | yes |"), std::string::npos) << md;
  EXPECT_NE(md.find("| fp32 tree | 0.5 | 0x1p-1 | 0.25 | yes | row 1 | 0.5 | 0.50001 |"), std::string::npos) << md;
}

TEST(InputAnswer, InputAndChecksGoThroughJsonAndBack) {
  const Report r = input_report();
  std::stringstream json;
  write_json(r, json);
  const Report back = read_report(json, "x.json");
  ASSERT_TRUE(back.header.input);
  EXPECT_EQ(back.header.input->file, "data/x.npy");
  EXPECT_EQ(back.header.input->stored_as, "<f2");
  EXPECT_EQ(back.header.input->read_as, "fp16");
  ASSERT_EQ(back.checks.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.checks[i].label, r.checks[i].label);
    EXPECT_EQ(back.checks[i].given, r.checks[i].given);
    EXPECT_EQ(back.checks[i].value, r.checks[i].value);
    EXPECT_EQ(back.checks[i].given_exactly, r.checks[i].given_exactly);
    EXPECT_EQ(back.checks[i].ulp_error, r.checks[i].ulp_error);
    EXPECT_EQ(back.checks[i].correctly_rounded, r.checks[i].correctly_rounded);
    EXPECT_EQ(back.checks[i].reference_exact, "4.449e+03");
  }
  // The same table from the report read back.
  EXPECT_EQ(input_answer_text(back), input_answer_text(r));
  // Reports of earlier versions have neither key.
  auto doc = nlohmann::json::parse(json.str());
  doc["header"].erase("input");
  doc.erase("checks");
  const Report old = report_from_json(doc, "old.json");
  EXPECT_FALSE(old.header.input);
  EXPECT_TRUE(old.checks.empty());
  // A check's value must be a hex-float, as a cell's result.
  doc = nlohmann::json::parse(json.str());
  doc["checks"][0]["value"] = "4444";
  EXPECT_THROW(report_from_json(doc, "bad.json"), ReportInputError);
}

}  // namespace
}  // namespace ulpscope
