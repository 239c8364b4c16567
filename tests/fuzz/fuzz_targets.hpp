#pragma once
// The fuzz targets (docs/bad-inputs.md, "Fuzzing"): each hands one input to
// the real reader and returns whether it was read (true) or refused with the
// reader's documented error (false). Anything else is a finding: a crash or
// sanitizer report, an exception of another type, a refusal that is not one
// line, or a read input that breaks the reader's own promises (a logic_error
// thrown here). The same functions run under libFuzzer (libfuzzer_entry.cpp)
// and, built by any compiler, in the replay test over the seeds and the
// stored regressions (replay_test.cpp).
#include <cstdint>
#include <span>

namespace ulpscope::fuzz {

using Bytes = std::span<const std::uint8_t>;

// The bytes as a .npy file, read with no --dtype and with each dtype.
bool npy_reader(Bytes data);
// The bytes as a raw file of each dtype, with the count that fits and wrong ones.
bool raw_reader(Bytes data);
// The bytes as a stored JSON report (a baseline or --current); a report that
// is read must write and read back to the same JSON.
bool report_reader(Bytes data);
// The bytes as a baseline's "settings" object, then checked as flags are;
// settings that pass must survive to_json and back.
bool baseline_settings(Bytes data);

struct Target {
  const char* name;  // also the folder of its seeds and regressions
  bool (*run)(Bytes);
};
inline constexpr Target kTargets[] = {{"npy_reader", &npy_reader},
                                      {"raw_reader", &raw_reader},
                                      {"report_reader", &report_reader},
                                      {"baseline_settings", &baseline_settings}};

}  // namespace ulpscope::fuzz
