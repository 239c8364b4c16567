#pragma once
// Collects the failures of an exhaustive loop and shows the first few, so a
// broken conversion gives a readable message instead of 65536 of them.
#include <cstddef>
#include <string>
#include <vector>

namespace ulpscope::test {

class Mismatches {
 public:
  void add(std::string what) {
    if (count_++ < kShown) first_.push_back(std::move(what));
  }
  std::size_t count() const { return count_; }
  std::string summary() const {
    std::string out = std::to_string(count_) + " mismatches";
    for (const auto& s : first_) out += "\n  " + s;
    return out;
  }

 private:
  static constexpr std::size_t kShown = 8;
  std::size_t count_ = 0;
  std::vector<std::string> first_;
};

}  // namespace ulpscope::test

#define EXPECT_NO_MISMATCHES(m) EXPECT_EQ((m).count(), 0u) << (m).summary()
