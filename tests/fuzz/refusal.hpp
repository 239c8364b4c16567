#pragma once
// What every target asks of a refusal: the promise of docs/bad-inputs.md that
// bad input is one line for the user (not empty, no line break).
#include <stdexcept>
#include <string>
#include <string_view>

namespace ulpscope::fuzz {

inline void expect_one_line(const std::exception& refusal) {
  const std::string_view what = refusal.what();
  if (what.empty() || what.find('\n') != std::string_view::npos)
    throw std::logic_error("a refusal that is not one line: \"" + std::string(what) + "\"");
}

}  // namespace ulpscope::fuzz
