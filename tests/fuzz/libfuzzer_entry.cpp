// libFuzzer's entry point for one target, chosen when it is built
// (ULPSCOPE_FUZZ_TARGET, tests/fuzz/CMakeLists.txt).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ulpscope::fuzz::ULPSCOPE_FUZZ_TARGET(ulpscope::fuzz::Bytes(data, size));
  return 0;
}
