// Loading plug-ins (plugin/kernel_lib.hpp): a library written in C gives the
// same cells as the built-in serial shape; a missing file, a file that is not
// a library, a library without the entry point and one built against another
// ABI version are each refused with one line naming the file.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>

#include "accuracy/evaluate_kernel.hpp"
#include "plugin/kernel_lib.hpp"
#include "test_files.hpp"

namespace ulpscope {
namespace {

std::string refusal(const std::string& path) {
  try {
    load_kernel_lib(path);
  } catch (const KernelLibError& e) {
    return e.what();
  }
  return "(loaded)";
}

TEST(KernelLib, LoadsTheKernelsOfACPlugin) {
  const auto kernels = load_kernel_lib(BYO_GOOD_PLUGIN);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].name, "c_serial_sum");
  EXPECT_EQ(kernels[0].accumulator, "fp32");
  EXPECT_EQ(kernels[0].op, Op::sum);
  EXPECT_EQ(kernels[0].in, Dtype::fp32);
  EXPECT_EQ(kernels[0].axes, (std::vector<Axis>{Axis::all, Axis::inner, Axis::outer}));
  EXPECT_EQ(kernels[0].configs, (std::vector<LaunchConfig>{{1, 1}}));
  EXPECT_TRUE(kernels[0].run_host);
  EXPECT_FALSE(kernels[0].run_device);
  EXPECT_TRUE(kernels[0].deterministic);
  EXPECT_TRUE(kernels[0].reentrant);
  EXPECT_EQ(kernels[0].library, BYO_GOOD_PLUGIN);
  EXPECT_EQ(kernels[1].accumulator, "custom");
  EXPECT_FALSE(kernels[1].reentrant);
  EXPECT_TRUE(kernels[1].axes.empty());
}

TEST(KernelLib, ACKernelGivesTheBuiltInSerialCellsAndItsErrors) {
  EvaluateOptions o;
  o.sizes = {1, 33, 1000};
  o.seeds = {5};
  o.row_cols = 100;
  o.accumulators = {Accumulator::fp32};
  o.shapes = {Shape::serial};
  o.backend = EvaluationBackend::cpu;
  const Evaluation e = evaluate_kernels(load_kernel_lib(BYO_GOOD_PLUGIN), o);
  std::size_t compared = 0, refused = 0;
  for (const Cell& c : e.cells) {
    if (c.shape == "c_picky_sum") {
      if (c.n == 33) {
        EXPECT_EQ(c.status, "failed: c_picky_sum (run_host): refuses n = 33");
        ++refused;
      } else {
        EXPECT_EQ(c.status, "ok");
      }
      continue;
    }
    if (c.shape != "c_serial_sum") continue;
    for (const Cell& b : e.cells)
      if (b.shape == "serial" && b.distribution == c.distribution && b.n == c.n && b.axis == c.axis) {
        EXPECT_EQ(c.result, b.result) << c.distribution << " n=" << c.n << " " << c.axis;
        EXPECT_EQ(c.ulp_error, b.ulp_error);
        ++compared;
      }
  }
  EXPECT_GT(compared, 100u);
  EXPECT_EQ(refused, e.settings.distributions.size());  // n = 33 once per distribution (one seed, whole array)
}

TEST(KernelLib, AMissingFile) {
  EXPECT_EQ(refusal("/nonexistent/libmine.so"), "--kernel-lib /nonexistent/libmine.so: no such file");
}

TEST(KernelLib, AFileThatIsNotALibrary) {
  test::ScratchDir dir;
  const auto path = (dir / "libtext.so").string();
  std::ofstream(path) << "not an ELF file\n";
  const std::string why = refusal(path);
  EXPECT_EQ(why.rfind("--kernel-lib " + path + ": cannot load it (", 0), 0u) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos);
}

TEST(KernelLib, ALibraryWithoutTheEntryPoint) {
  const std::string why = refusal(BYO_NO_ENTRY_PLUGIN);
  EXPECT_EQ(why, std::string("--kernel-lib ") + BYO_NO_ENTRY_PLUGIN +
                     ": exports no symbol ulpscope_get_plugin (declare it extern \"C\" with default visibility; "
                     "plugin/ulpscope_plugin.h)");
}

TEST(KernelLib, ALibraryOfAnotherAbiVersion) {
  const std::string why = refusal(BYO_WRONG_VERSION_PLUGIN);
  EXPECT_EQ(why, std::string("--kernel-lib ") + BYO_WRONG_VERSION_PLUGIN +
                     ": plug-in ABI version 99, this ulpscope reads version 1 (rebuild it against this ulpscope's "
                     "plugin/ulpscope_plugin.h)");
}

// A host call that returns 0 but leaves out as the suite filled it
// is an error, not an "ok" cell; a result whose bytes are all ones (a NaN) is
// not mistaken for one never written.
TEST(KernelLib, AKernelThatDoesNotWriteItsOutputFails) {
  const auto kernels = load_kernel_lib(BYO_LAZY_PLUGIN);
  ASSERT_EQ(kernels.size(), 3u);
  const float x[6] = {1, 2, 3, 4, 5, 6};
  auto call = [&](const UserKernel& k, Axis axis, std::int64_t rows, std::int64_t cols, std::uint32_t* out) {
    KernelArgs a;
    a.op = Op::sum;
    a.axis = axis;
    a.rows = rows;
    a.cols = cols;
    a.x = x;
    a.out = out;
    try {
      k.run_host(a);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(written)");
  };
  std::uint32_t out[3] = {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};
  EXPECT_EQ(call(kernels[0], Axis::all, 1, 6, out), "lazy_sum (run_host): did not write its output (1 of 1 values left as filled)");
  EXPECT_EQ(call(kernels[1], Axis::inner, 3, 2, out), "half_sum (run_host): did not write its output (2 of 3 values left as filled)");
  EXPECT_EQ(call(kernels[2], Axis::all, 1, 6, out), "(written)");
  EXPECT_EQ(out[0], 0xFFFFFFFFu);
}

// Each host call runs in a child process; what would end the run
// (a signal, exit(), abort(), a hang, a write past out) is an exception
// naming the kernel, and the process goes on.
TEST(KernelLib, ACrashingKernelFailsItsCallNotTheProcess) {
  const auto kernels = load_kernel_lib(BYO_CRASH_PLUGIN, PluginCalls{1.0});
  ASSERT_EQ(kernels.size(), 6u);
  const float x[4] = {1, 2, 3, 4};
  auto call = [&](const UserKernel& k) {
    float out = -1;
    KernelArgs a;
    a.op = Op::sum;
    a.rows = 1;
    a.cols = 4;
    a.x = x;
    a.out = &out;
    try {
      k.run_host(a);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return fmt::format("returned {}", out);
  };
  EXPECT_EQ(call(kernels[0]), "returned 10");
  EXPECT_EQ(call(kernels[1]).rfind("segv_sum (run_host): killed by signal 11", 0), 0u) << call(kernels[1]);
  EXPECT_EQ(call(kernels[2]), "exit_sum (run_host): exited with status 3 instead of returning");
  EXPECT_EQ(call(kernels[3]).rfind("abort_sum (run_host): killed by signal 6", 0), 0u) << call(kernels[3]);
  EXPECT_EQ(call(kernels[4]), "hang_sum (run_host): did not return within 1 s (killed; --kernel-timeout)");
  EXPECT_EQ(call(kernels[5]), "overrun_sum (run_host): wrote past its output (4 bytes)");
  EXPECT_EQ(call(kernels[0]), "returned 10");
}

// By default a device function is called in ulpscope-kernel-host, never in
// this process; --kernel-timeout 0 calls it here.
TEST(KernelLib, DeviceFunctionsAreIsolatedByDefault) {
  const auto isolated = load_kernel_lib(BYO_DEVICE_STUB_PLUGIN);
  ASSERT_EQ(isolated.size(), 1u);
  EXPECT_FALSE(isolated[0].run_device);
  ASSERT_TRUE(isolated[0].isolated_device);
  EXPECT_TRUE(isolated[0].isolated_device->run);
  EXPECT_TRUE(isolated[0].isolated_device->time);
  EXPECT_TRUE(has_device_form(isolated[0]));
  const auto in_process = load_kernel_lib(BYO_DEVICE_STUB_PLUGIN, PluginCalls(0));
  EXPECT_TRUE(in_process[0].run_device);
  EXPECT_FALSE(in_process[0].isolated_device);
}

}  // namespace
}  // namespace ulpscope
