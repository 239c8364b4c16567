#include <cstdint>
#include <limits>
#include <stdexcept>

#include "accuracy/input_file.hpp"
#include "formats/dtype.hpp"
#include "tests/fuzz/fuzz_targets.hpp"
#include "tests/fuzz/memory_file.hpp"
#include "tests/fuzz/refusal.hpp"

namespace ulpscope::fuzz {

bool raw_reader(Bytes data) {
  const std::string& path = memory_file_holding(data);
  bool read = false;
  for (const Dtype d : {Dtype::fp32, Dtype::fp16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2, Dtype::fp64}) {
    const std::int64_t fits = std::int64_t(data.size() / std::size_t(format_info(d).bits / 8));
    // The count that fits, one more (a short file), and counts a user might mistype.
    for (const std::int64_t n : {fits, fits + 1, std::int64_t(-1), std::numeric_limits<std::int64_t>::max()}) {
      try {
        LoadedInput in = read_raw(path, d, n);
        if (in.values.size() != std::size_t(n) || in.rows != 1 || in.cols != n)
          throw std::logic_error("read_raw returned another count than it was asked for");
        read = true;
        // --rows 2 --cols n/2 on a raw file: a view of an even count only.
        try {
          reshape(in, 2, n / 2);
        } catch (const InputError& e) {
          expect_one_line(e);
        }
      } catch (const InputError& e) {
        expect_one_line(e);
      }
    }
  }
  return read;
}

}  // namespace ulpscope::fuzz
