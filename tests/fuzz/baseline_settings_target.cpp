#include <stdexcept>
#include <string>

#include "accuracy/run_matrix.hpp"
#include "accuracy/settings_check.hpp"
#include "tests/fuzz/fuzz_targets.hpp"
#include "tests/fuzz/refusal.hpp"

namespace ulpscope::fuzz {

// As accuracy_report reads a baseline's settings: settings_from_json (its
// refusal is std::invalid_argument), then settings_problem, the flags' check.
bool baseline_settings(Bytes data) {
  const std::string text(reinterpret_cast<const char*>(data.data()), data.size());
  MatrixSettings settings;
  try {
    settings = settings_from_json(text);
  } catch (const std::invalid_argument& e) {
    expect_one_line(e);
    return false;
  }
  if (const std::string why = settings_problem(settings); !why.empty()) {
    expect_one_line(std::invalid_argument(why));
    return false;
  }
  // Settings a gate would run must be the ones a report of that run stores:
  // to_json and back gives the same settings.
  const std::string stored = settings.to_json();
  MatrixSettings reread;
  try {
    reread = settings_from_json(stored);
  } catch (const std::invalid_argument& e) {
    throw std::logic_error(std::string("accepted settings, once stored, are refused: ") + e.what());
  }
  if (reread.to_json() != stored) throw std::logic_error("accepted settings do not store and read back the same");
  return true;
}

}  // namespace ulpscope::fuzz
