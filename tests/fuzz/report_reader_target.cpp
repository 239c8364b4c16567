#include <sstream>
#include <stdexcept>
#include <string>

#include "reports/json_report.hpp"
#include "tests/fuzz/fuzz_targets.hpp"
#include "tests/fuzz/refusal.hpp"

namespace ulpscope::fuzz {
namespace {

std::string written(const Report& report) {
  std::ostringstream out;
  write_json(report, out);
  return out.str();
}

}  // namespace

bool report_reader(Bytes data) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data.data()), data.size()));
  Report report;
  try {
    report = read_report(in, "fuzz.json");
  } catch (const ReportInputError& e) {
    expect_one_line(e);
    return false;
  }
  // Reading is strict (reports/json_report.hpp): what it accepts is what this
  // build writes, so writing it and reading that back must give the same JSON.
  const std::string once = written(report);
  std::istringstream again(once);
  Report reread;
  try {
    reread = read_report(again, "rewritten.json");
  } catch (const ReportInputError& e) {
    throw std::logic_error(std::string("a report that was read, once written, is refused: ") + e.what());
  }
  if (written(reread) != once) throw std::logic_error("a report that was read does not write back the same");
  return true;
}

}  // namespace ulpscope::fuzz
