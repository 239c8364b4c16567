#pragma once
// "Which of these results is right?" for a run on a user's data (--input):
// per op, the correctly rounded value and the exact value in decimal, each
// kernel's result in decimal beside them with its ULP error, and the values
// the user got elsewhere (--check). Empty for runs on generated inputs.
#include <string>

#include "accuracy/cell.hpp"

namespace ulpscope {

// Aligned text for the terminal table.
std::string input_answer_text(const Report& report);
// The same as Markdown tables, for the Markdown report.
std::string input_answer_markdown(const Report& report);

}  // namespace ulpscope
