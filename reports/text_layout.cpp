#include "reports/text_layout.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace ulpscope {

std::string joined_within_width(const std::vector<std::string>& fields) {
  std::string out, line;
  for (const std::string& f : fields) {
    if (!line.empty() && line.size() + 3 + f.size() > kTextWidth) {
      out += line + '\n';
      line.clear();
    } else if (!line.empty()) {
      line += " | ";
    }
    line += f;
  }
  return out + line + '\n';
}

std::string size_text(std::int64_t n) {
  if (n >= 1024 && (n & (n - 1)) == 0) {
    int k = 0;
    while ((std::int64_t(1) << k) < n) ++k;
    return fmt::format("2^{}", k);
  }
  return fmt::to_string(n);
}

std::string wrapped(const std::string& text, std::size_t indent) {
  std::size_t at = std::min(text.find_first_not_of(' '), text.size());
  std::string out, line = text.substr(0, at);
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    const bool has_words = line.find_first_not_of(' ') != std::string::npos;
    if (has_words && line.size() + 1 + word.size() > kTextWidth) {
      out += line + '\n';
      line = std::string(indent, ' ');
    } else if (has_words) {
      line += ' ';
    }
    line += word;
    at = end + 1;
  }
  return out + line + '\n';
}

}  // namespace ulpscope
