// --input: .npy files of each dtype written byte by byte (as numpy.save
// lays them out), raw files, and each malformed case, which must give one
// line naming the file.
#include "accuracy/input_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "formats/binary_format.hpp"

namespace ulpscope {
namespace {

namespace fs = std::filesystem;

template <class T>
std::string bytes_of(const std::vector<T>& v) {
  std::string out(v.size() * sizeof(T), '\0');
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// numpy.lib.format: magic, version, little-endian header length (2 bytes in
// 1.0, 4 in 2.0 and 3.0), the dict padded with spaces and ended by '\n' so
// that the data starts at a multiple of 64.
std::string npy(const std::string& dict, const std::string& data, int major = 1) {
  const std::size_t preamble = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(major);
  out += char(0);
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out += char((header.size() >> (8 * i)) & 0xFF);
  return out + header + data;
}

std::string dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape +
         ", }";
}

class InputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ulpscope_input_file_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& content) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary).write(content.data(), std::streamsize(content.size()));
    return p.string();
  }

  // The call must fail with an InputError: one line that names the file
  // and says what is wrong.
  template <class Read>
  void expect_error(const std::string& path, Read read, const std::string& phrase) {
    try {
      read();
      ADD_FAILURE() << path << ": no error, expected one about '" << phrase << "'";
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
      EXPECT_NE(msg.find(phrase), std::string::npos) << "message: " << msg << "\nwanted: " << phrase;
    }
  }
  void expect_npy_error(const std::string& name, const std::string& content, std::optional<Dtype> requested,
                        const std::string& phrase) {
    const std::string path = write(name, content);
    expect_error(path, [&] { read_npy(path, requested); }, phrase);
  }

  fs::path dir_;
};

bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

TEST_F(InputFileTest, Float16OneDimensional) {
  const std::vector<std::uint16_t> bits = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x8000, 0x7C00, 0x7E00};
  const auto in = read_npy(write("h.npy", npy(dict("<f2", "(7,)"), bytes_of(bits))), std::nullopt);
  EXPECT_EQ(in.values.dtype(), Dtype::fp16);
  EXPECT_EQ(in.rows, 1);
  EXPECT_EQ(in.cols, 7);
  EXPECT_EQ(in.ndim, 1);
  EXPECT_EQ(in.source_dtype, "<f2");
  ASSERT_EQ(in.values.size(), bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) {
    EXPECT_EQ(in.values.as<Fp16>()[i].bits, bits[i]) << i;
    EXPECT_TRUE(same(in.values.at(i), decode<Fp16Format>(bits[i]))) << i;
  }
}

TEST_F(InputFileTest, Float32TwoDimensionalIsRowMajor) {
  const std::vector<float> v = {1.0f, 2.0f, 3.0f, -4.5f, 0x1p-149f, std::numeric_limits<float>::max()};
  const auto in = read_npy(write("f.npy", npy(dict("<f4", "(2, 3)"), bytes_of(v))), std::nullopt);
  EXPECT_EQ(in.values.dtype(), Dtype::fp32);
  EXPECT_EQ(in.rows, 2);
  EXPECT_EQ(in.cols, 3);
  EXPECT_EQ(in.ndim, 2);
  EXPECT_EQ(in.values.as<float>(), v);
}

TEST_F(InputFileTest, Float64IsRoundedOnceToTheRequestedDtype) {
  // 1 + 2^-11 + 2^-40 lies just above the fp16 midpoint between 1 and
  // 1 + 2^-10, so RN_fp16 gives 1 + 2^-10; rounding through float32 first
  // would land on the midpoint and tie to 1.
  const std::vector<double> v = {0.1, 1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-24, -0.0, std::nan(""), HUGE_VAL};
  const std::string path = write("d.npy", npy(dict("<f8", "(6,)"), bytes_of(v)));
  const auto as_fp16 = read_npy(path, Dtype::fp16);
  EXPECT_EQ(as_fp16.values.dtype(), Dtype::fp16);
  EXPECT_EQ(as_fp16.source_dtype, "<f8");
  EXPECT_EQ(as_fp16.values.at(0), decode<Fp16Format>(encode<Fp16Format>(0.1)));
  EXPECT_EQ(as_fp16.values.at(1), 1 + 0x1p-10);
  EXPECT_EQ(as_fp16.values.at(2), 1.0);
  EXPECT_TRUE(same(as_fp16.values.at(3), -0.0));
  EXPECT_TRUE(std::isnan(as_fp16.values.at(4)));
  EXPECT_EQ(as_fp16.values.at(5), HUGE_VAL);
  // No dtype asked for: fp32, rounded the same way (1 + 2^-24 ties to 1).
  const auto as_fp32 = read_npy(path, std::nullopt);
  EXPECT_EQ(as_fp32.values.dtype(), Dtype::fp32);
  EXPECT_EQ(as_fp32.values.at(0), double(0.1f));
  EXPECT_EQ(as_fp32.values.at(1), double(float(1 + 0x1p-11 + 0x1p-40)));
  EXPECT_EQ(as_fp32.values.at(2), 1.0);
  // bf16 and fp8 from the same file.
  EXPECT_EQ(read_npy(path, Dtype::bf16).values.at(0), decode<Bf16Format>(encode<Bf16Format>(0.1)));
  EXPECT_EQ(read_npy(path, Dtype::fp8_e5m2).values.at(0), decode<Fp8E5M2Format>(encode<Fp8E5M2Format>(0.1)));
}

TEST_F(InputFileTest, Float32AndFloat16AreRoundedToAnotherRequestedDtype) {
  const std::vector<float> v = {0.1f, 3.0f};
  const auto in = read_npy(write("f.npy", npy(dict("<f4", "(2,)"), bytes_of(v))), Dtype::bf16);
  EXPECT_EQ(in.values.dtype(), Dtype::bf16);
  EXPECT_EQ(in.values.at(0), decode<Bf16Format>(encode<Bf16Format>(double(0.1f))));
  EXPECT_EQ(in.values.at(1), 3.0);
  const std::vector<std::uint16_t> h = {0x3555};  // fp16 0.333251953125, exact in fp32
  const auto wide = read_npy(write("h.npy", npy(dict("<f2", "(1,)"), bytes_of(h))), Dtype::fp32);
  EXPECT_EQ(wide.values.dtype(), Dtype::fp32);
  EXPECT_EQ(wide.values.at(0), decode<Fp16Format>(0x3555));
}

TEST_F(InputFileTest, OverflowInTheRequestedDtypeIsAnError) {
  const std::vector<double> big = {1.0, 1000.0};
  expect_npy_error("big.npy", npy(dict("<f8", "(2,)"), bytes_of(big)), Dtype::fp8_e4m3,
                   "value 1000 at index 1 does not fit fp8_e4m3");
  expect_npy_error("huge.npy", npy(dict("<f8", "(1,)"), bytes_of(std::vector<double>{1e300})), std::nullopt,
                   "does not fit fp32");
  // E4M3 has no infinity.
  expect_npy_error("inf.npy", npy(dict("<f4", "(1,)"), bytes_of(std::vector<float>{HUGE_VALF})), Dtype::fp8_e4m3,
                   "value inf at index 0");
  // 464 ties down to 448 in E4M3: that is rounding, not overflow.
  const auto ok = read_npy(write("tie.npy", npy(dict("<f8", "(1,)"), bytes_of(std::vector<double>{464.0}))),
                           Dtype::fp8_e4m3);
  EXPECT_EQ(ok.values.at(0), 448.0);
}

TEST_F(InputFileTest, Uint16IsBf16BitsAndUint8IsFp8Bits) {
  const std::vector<std::uint16_t> b = {0x3F80, 0xC040, 0x0001, 0x7F80};
  const std::string bpath = write("b.npy", npy(dict("<u2", "(2, 2)"), bytes_of(b)));
  const auto bf = read_npy(bpath, Dtype::bf16);
  EXPECT_EQ(bf.values.dtype(), Dtype::bf16);
  EXPECT_EQ(bf.rows, 2);
  for (std::size_t i = 0; i < b.size(); ++i) EXPECT_EQ(bf.values.at(i), decode<Bf16Format>(b[i]));
  EXPECT_EQ(bf.conversion, "");  // bit patterns: nothing was converted
  expect_error(bpath, [&] { read_npy(bpath, std::nullopt); }, "give --dtype fp16 or --dtype bf16");
  expect_error(bpath, [&] { read_npy(bpath, Dtype::fp32); }, "uint16 data ('<u2') is read as fp16 or bf16 bit patterns");
  const auto h = read_npy(bpath, Dtype::fp16);
  EXPECT_EQ(h.values.dtype(), Dtype::fp16);
  for (std::size_t i = 0; i < b.size(); ++i) EXPECT_TRUE(same(h.values.at(i), decode<Fp16Format>(b[i]))) << i;

  const std::vector<std::uint8_t> q = {0x00, 0x38, 0x7E, 0x7F, 0xFE, 0x01};
  const std::string qpath = write("q.npy", npy(dict("|u1", "(6,)"), bytes_of(q)));
  const auto e4 = read_npy(qpath, Dtype::fp8_e4m3);
  const auto e5 = read_npy(qpath, Dtype::fp8_e5m2);
  EXPECT_EQ(e4.values.dtype(), Dtype::fp8_e4m3);
  EXPECT_EQ(e5.values.dtype(), Dtype::fp8_e5m2);
  for (std::size_t i = 0; i < q.size(); ++i) {
    EXPECT_TRUE(same(e4.values.at(i), decode<Fp8E4M3Format>(q[i]))) << i;
    EXPECT_TRUE(same(e5.values.at(i), decode<Fp8E5M2Format>(q[i]))) << i;
  }
  EXPECT_EQ(e4.values.at(2), 448.0);
  EXPECT_EQ(e4.values.at(4), -448.0);
  EXPECT_TRUE(std::isnan(e5.values.at(4)));  // E5M2 S.11111.10
  expect_error(qpath, [&] { read_npy(qpath, Dtype::bf16); }, "give --dtype fp8_e4m3 or --dtype fp8_e5m2");
}


// The 16- and 8-bit descrs that frameworks write for bit patterns: int16
// views of fp16/bf16 tensors (tensor.view(torch.int16).numpy()), ml_dtypes'
// bfloat16 ('<V2': kind 'V', byte order '='), a plain NumPy void ('|V2'),
// ml_dtypes' float8 types ('<V1') and float8_e5m2 ('<f1', kind 'f').
TEST_F(InputFileTest, BitPatternsOfEveryDescrFrameworksWrite) {
  const std::vector<std::uint16_t> b = {0x3F80, 0xC040, 0x8001, 0x7F80};
  for (const char* descr : {"<i2", "<u2", "<V2", "|V2"}) {
    const std::string path = write("b.npy", npy(dict(descr, "(4,)"), bytes_of(b)));
    const auto bf = read_npy(path, Dtype::bf16);
    const auto h = read_npy(path, Dtype::fp16);
    EXPECT_EQ(bf.source_dtype, descr);
    EXPECT_EQ(bf.conversion, "") << descr;
    for (std::size_t i = 0; i < b.size(); ++i) {
      EXPECT_TRUE(same(bf.values.at(i), decode<Bf16Format>(b[i]))) << descr << " " << i;
      EXPECT_TRUE(same(h.values.at(i), decode<Fp16Format>(b[i]))) << descr << " " << i;
    }
    expect_error(path, [&] { read_npy(path, std::nullopt); }, "is read as fp16 or bf16 bit patterns");
    expect_error(path, [&] { read_npy(path, Dtype::fp8_e4m3); }, "give --dtype fp16 or --dtype bf16");
  }
  const std::vector<std::uint8_t> q = {0x00, 0x38, 0x7E, 0xFE, 0x01};
  for (const char* descr : {"|u1", "|i1", "<V1", "|V1"}) {
    const std::string path = write("q.npy", npy(dict(descr, "(5,)"), bytes_of(q)));
    const auto e4 = read_npy(path, Dtype::fp8_e4m3);
    const auto e5 = read_npy(path, Dtype::fp8_e5m2);
    for (std::size_t i = 0; i < q.size(); ++i) {
      EXPECT_TRUE(same(e4.values.at(i), decode<Fp8E4M3Format>(q[i]))) << descr << " " << i;
      EXPECT_TRUE(same(e5.values.at(i), decode<Fp8E5M2Format>(q[i]))) << descr << " " << i;
    }
    expect_error(path, [&] { read_npy(path, std::nullopt); }, "give --dtype fp8_e4m3 or --dtype fp8_e5m2");
    expect_error(path, [&] { read_npy(path, Dtype::bf16); }, "is read as fp8 bit patterns");
  }
  // '<f1' is float8_e5m2's values: read as such without --dtype.
  const std::string f1 = write("f1.npy", npy(dict("<f1", "(5,)"), bytes_of(q)));
  const auto e5 = read_npy(f1, std::nullopt);
  EXPECT_EQ(e5.values.dtype(), Dtype::fp8_e5m2);
  EXPECT_EQ(e5.conversion, "");
  for (std::size_t i = 0; i < q.size(); ++i) EXPECT_TRUE(same(e5.values.at(i), decode<Fp8E5M2Format>(q[i]))) << i;
  // Other 2-byte kinds stay refused.
  expect_npy_error("f2big.npy", npy(dict(">f2", "(4,)"), bytes_of(b)), Dtype::fp16, "unsupported dtype '>f2'");
  expect_npy_error("c.npy", npy(dict("<V4", "(4,)"), bytes_of(b)), Dtype::bf16, "unsupported dtype '<V4'");
}

// Values rounded into another format are never silent: the conversion says
// what was converted to what, why, and how many values changed.
TEST_F(InputFileTest, ConversionsToAnotherFormatAreSaid) {
  // fp16 1 + 2^-10 is not a bf16 value (8 bits of precision); 3 and 0.5 are.
  const std::vector<std::uint16_t> h = {0x3C01, 0x4200, 0x3800};
  const std::string hpath = write("h.npy", npy(dict("<f2", "(3,)"), bytes_of(h)));
  EXPECT_EQ(read_npy(hpath, std::nullopt).conversion, "");
  EXPECT_EQ(read_npy(hpath, Dtype::fp16).conversion, "");
  const auto bf = read_npy(hpath, Dtype::bf16);
  EXPECT_EQ(bf.values.dtype(), Dtype::bf16);
  EXPECT_EQ(bf.conversion, "float16 data ('<f2') converted to bf16 (--dtype bf16): 1 of 3 values rounded");
  EXPECT_EQ(read_npy(hpath, Dtype::fp32).conversion,
            "float16 data ('<f2') converted to fp32 (--dtype fp32): 0 of 3 values rounded");
  const std::string dpath = write("d.npy", npy(dict("<f8", "(2,)"), bytes_of(std::vector<double>{0.1, 0.5})));
  EXPECT_EQ(read_npy(dpath, std::nullopt).conversion,
            "float64 data ('<f8') converted to fp32 (give --dtype to choose the format): 1 of 2 values rounded");
  EXPECT_EQ(read_npy(dpath, Dtype::fp16).conversion,
            "float64 data ('<f8') converted to fp16 (--dtype fp16): 1 of 2 values rounded");
  const std::string f1 = write("f1.npy", npy(dict("<f1", "(1,)"), std::string(1, char(0x3C))));  // e5m2 1.0
  EXPECT_EQ(read_npy(f1, Dtype::fp8_e4m3).conversion,
            "float8_e5m2 (ml_dtypes) data ('<f1') converted to fp8_e4m3 (--dtype fp8_e4m3): 0 of 1 values rounded");
}

TEST_F(InputFileTest, FormatVersions2And3AndOtherSpellingsOfTheHeader) {
  const std::vector<float> v = {1.5f, -2.0f};
  for (int major : {2, 3}) {
    const auto in = read_npy(write("v.npy", npy(dict("<f4", "(2,)"), bytes_of(v), major)), std::nullopt);
    EXPECT_EQ(in.values.as<float>(), v) << major;
  }
  // Key order, double quotes, no trailing comma, a Python 2 long.
  const auto in = read_npy(
      write("o.npy", npy("{\"shape\": (1L, 2L), \"fortran_order\": False, \"descr\": \"<f4\"}", bytes_of(v))),
      std::nullopt);
  EXPECT_EQ(in.rows, 1);
  EXPECT_EQ(in.cols, 2);
  EXPECT_EQ(in.ndim, 2);
  // Fortran order changes nothing for a 1-D array.
  EXPECT_EQ(read_npy(write("f1.npy", npy(dict("<f4", "(2,)", true), bytes_of(v))), std::nullopt).values.as<float>(), v);
  // An empty array.
  EXPECT_EQ(read_npy(write("e.npy", npy(dict("<f4", "(0,)"), "")), std::nullopt).values.size(), 0u);
}

TEST_F(InputFileTest, MalformedNpyFilesGiveOneClearLine) {
  const std::string four(16, '\0');  // four floats
  const std::string good = npy(dict("<f4", "(4,)"), four);
  struct Case {
    const char* name;
    std::string content;
    const char* phrase;
  };
  const Case cases[] = {
      {"magic", "\x93NUMPX" + good.substr(6), "bad magic string"},
      {"text", "descr,shape\n1,2\n", "bad magic string"},
      {"short", "\x93NUM", "too short"},
      {"version", "\x93NUMPY\x04" + good.substr(7), "unsupported .npy format version 4.0"},
      {"header_len", good.substr(0, 8) + "\xff\x7f" + good.substr(10), "truncated .npy header"},
      {"unclosed", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), ", four), "bad .npy header"},
      {"no_shape", npy("{'descr': '<f4', 'fortran_order': False}", four), "are all required"},
      {"extra_key", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}", four), "unexpected key 'x'"},
      {"twice", npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,)}", four), "given twice"},
      {"bool", npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (4,)}", four), "True or False"},
      {"neg_dim", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-4,)}", four), "non-negative integers"},
      {"garbage", npy(dict("<f4", "(4,)") + " junk", four), "text after the closing"},
      {"int32", npy(dict("<i4", "(4,)"), four), "unsupported dtype '<i4'"},
      {"big_endian", npy(dict(">f4", "(4,)"), four), "unsupported dtype '>f4'"},
      {"complex", npy(dict("<c8", "(2,)"), four), "unsupported dtype '<c8'"},
      {"structured", npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,)}", four),
       "structured dtype"},
      {"fortran", npy(dict("<f4", "(2, 2)", true), four), "Fortran-ordered"},
      {"three_d", npy(dict("<f4", "(1, 2, 2)"), four), "a 3-D array of shape (1, 2, 2)"},
      {"scalar", npy(dict("<f4", "()"), four.substr(0, 4)), "a 0-D array"},
      {"truncated", npy(dict("<f4", "(5,)"), four), "truncated data: shape (5,) of float32 needs 20 bytes, the file has 16"},
      {"trailing", npy(dict("<f4", "(3,)"), four), "4 bytes after the data"},
      {"enormous", npy(dict("<f4", "(4611686018427387904, 4)"), four), "too large"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    expect_npy_error(std::string(c.name) + ".npy", c.content, std::nullopt, c.phrase);
  }
  expect_npy_error("fp64.npy", good, Dtype::fp64, "fp64 is an output format");
  const std::string missing = (dir_ / "missing.npy").string();
  expect_error(missing, [&] { read_npy(missing, std::nullopt); }, "cannot open");
  const std::string folder = dir_.string();
  expect_error(folder, [&] { read_npy(folder, std::nullopt); }, "is a directory");
}

TEST_F(InputFileTest, RawFilesOfEachDtype) {
  const std::vector<std::uint16_t> h = {0x3C00, 0x8001, 0x7BFF};
  const auto fp16 = read_raw(write("h.bin", bytes_of(h)), Dtype::fp16, 3);
  EXPECT_EQ(fp16.values.dtype(), Dtype::fp16);
  EXPECT_EQ(fp16.rows, 1);
  EXPECT_EQ(fp16.cols, 3);
  EXPECT_EQ(fp16.source_dtype, "raw fp16");
  for (std::size_t i = 0; i < h.size(); ++i) EXPECT_EQ(fp16.values.at(i), decode<Fp16Format>(h[i]));
  const auto bf16 = read_raw(write("b.bin", bytes_of(h)), Dtype::bf16, 3);
  for (std::size_t i = 0; i < h.size(); ++i) EXPECT_EQ(bf16.values.at(i), decode<Bf16Format>(h[i]));
  const std::vector<float> f = {0.25f, -0.0f};
  EXPECT_EQ(read_raw(write("f.bin", bytes_of(f)), Dtype::fp32, 2).values.as<float>(), f);
  const std::vector<std::uint8_t> q = {0x7E, 0x7B, 0x80};
  const auto e4 = read_raw(write("q.bin", bytes_of(q)), Dtype::fp8_e4m3, 3);
  const auto e5 = read_raw(write("q.bin", bytes_of(q)), Dtype::fp8_e5m2, 3);
  EXPECT_EQ(e4.values.at(0), 448.0);
  EXPECT_EQ(e5.values.at(1), 57344.0);
  EXPECT_TRUE(same(e5.values.at(2), -0.0));
  EXPECT_EQ(read_raw(write("empty.bin", ""), Dtype::fp32, 0).values.size(), 0u);
}

TEST_F(InputFileTest, RawSizeMismatchAndBadArguments) {
  const std::string path = write("seven.bin", std::string(7, '\0'));
  expect_error(path, [&] { read_raw(path, Dtype::fp16, 3); }, "holds 7 bytes, but 3 values of fp16 are 6 bytes");
  expect_error(path, [&] { read_raw(path, Dtype::fp32, 2); }, "holds 7 bytes");
  expect_error(path, [&] { read_raw(path, Dtype::fp8_e4m3, 8); }, "holds 7 bytes");
  expect_error(path, [&] { read_raw(path, Dtype::fp16, -1); }, "negative");
  expect_error(path, [&] { read_raw(path, Dtype::fp64, 0); }, "fp64 is an output format");
  EXPECT_EQ(read_raw(path, Dtype::fp8_e5m2, 7).values.size(), 7u);
}

TEST_F(InputFileTest, ShapeMustFitTheOp) {
  const std::vector<float> six(6, 1.0f);
  const auto flat = read_npy(write("flat.npy", npy(dict("<f4", "(6,)"), bytes_of(six))), std::nullopt);
  const auto grid = read_npy(write("grid.npy", npy(dict("<f4", "(2, 3)"), bytes_of(six))), std::nullopt);
  EXPECT_NO_THROW(check_shape_fits(flat, Op::sum, Axis::all));
  EXPECT_NO_THROW(check_shape_fits(flat, Op::rmsnorm, Axis::all));  // one row
  EXPECT_NO_THROW(check_shape_fits(grid, Op::sum, Axis::all));
  EXPECT_NO_THROW(check_shape_fits(grid, Op::sum, Axis::inner));
  EXPECT_NO_THROW(check_shape_fits(grid, Op::layernorm, Axis::inner));
  EXPECT_THROW(check_shape_fits(flat, Op::sum, Axis::inner), InputError);
  EXPECT_THROW(check_shape_fits(flat, Op::max, Axis::outer), InputError);
  EXPECT_THROW(check_shape_fits(grid, Op::rmsnorm, Axis::all), InputError);
  try {
    check_shape_fits(flat, Op::mean, Axis::inner);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "mean reduced along axis inner needs a 2-D [rows, cols] array; the input is a 1-D array of 6 values");
  }

  LoadedInput raw = flat;
  reshape(raw, 3, 2);
  EXPECT_EQ(raw.rows, 3);
  EXPECT_EQ(raw.cols, 2);
  EXPECT_EQ(raw.ndim, 2);
  EXPECT_NO_THROW(check_shape_fits(raw, Op::sum, Axis::outer));
  EXPECT_THROW(reshape(raw, 4, 2), InputError);
  EXPECT_THROW(reshape(raw, 6, 0), InputError);
  EXPECT_THROW(reshape(raw, -2, -3), InputError);
}

// Files written by NumPy itself (tests/data/npy/make_npy_fixtures.py).
std::string fixture(const std::string& name) { return std::string(ULPSCOPE_TEST_DATA_DIR) + "/npy/" + name; }

TEST(NumpyWrittenFiles, AreReadAsWritten) {
  const auto h = read_npy(fixture("f2_1d.npy"), std::nullopt);
  EXPECT_EQ(h.values.dtype(), Dtype::fp16);
  const std::vector<double> hv = {1.0, -2.0, 65504.0, 0x1p-24, -0.0, HUGE_VAL, std::nan("")};
  ASSERT_EQ(h.values.size(), hv.size());
  for (std::size_t i = 0; i < hv.size(); ++i) EXPECT_TRUE(same(h.values.at(i), hv[i])) << i;

  const auto f = read_npy(fixture("f4_2d.npy"), std::nullopt);
  EXPECT_EQ(f.rows, 2);
  EXPECT_EQ(f.cols, 3);
  EXPECT_EQ(f.values.as<float>(), (std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}));

  const auto d = read_npy(fixture("f8_1d.npy"), Dtype::fp16);
  EXPECT_EQ(d.values.at(0), decode<Fp16Format>(encode<Fp16Format>(0.1)));
  EXPECT_EQ(d.values.at(1), 1 + 0x1p-10);
  EXPECT_EQ(d.values.at(2), -3.0);

  const auto b = read_npy(fixture("u2_2d.npy"), Dtype::bf16);
  EXPECT_EQ(b.rows, 2);
  EXPECT_EQ(b.values.to_doubles(), (std::vector<double>{1.0, -3.0, 0x1p-133, HUGE_VAL}));

  const auto q = read_npy(fixture("u1_1d.npy"), Dtype::fp8_e4m3);
  EXPECT_EQ(q.source_dtype, "|u1");
  EXPECT_EQ(q.values.to_doubles(), (std::vector<double>{0.0, 1.0, 448.0, -448.0}));

  const auto i2 = read_npy(fixture("i2_1d.npy"), Dtype::fp16);
  EXPECT_EQ(i2.source_dtype, "<i2");
  EXPECT_EQ(i2.values.to_doubles(), (std::vector<double>{1.0, -2.0, 4448.0}));
  const auto v2 = read_npy(fixture("v2_1d.npy"), Dtype::bf16);
  EXPECT_EQ(v2.source_dtype, "|V2");
  EXPECT_EQ(v2.values.to_doubles(), (std::vector<double>{1.0, -3.0, HUGE_VAL}));

  EXPECT_EQ(read_npy(fixture("empty.npy"), std::nullopt).values.size(), 0u);
  for (const char* name : {"f4_v2.npy", "f4_v3.npy"})
    EXPECT_EQ(read_npy(fixture(name), std::nullopt).values.as<float>(), (std::vector<float>{1.5f, -0.25f})) << name;
}

TEST(NumpyWrittenFiles, ThatUlpscopeRefusesGiveOneLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"f4_fortran.npy", "Fortran-ordered"},
      {"i4.npy", "unsupported dtype '<i4'"},
      {"f4_big_endian.npy", "unsupported dtype '>f4'"},
      {"f4_3d.npy", "a 3-D array of shape (2, 2, 2)"},
      {"f4_scalar.npy", "a 0-D array of shape ()"},
  };
  for (const auto& [name, phrase] : cases) {
    try {
      read_npy(fixture(name), std::nullopt);
      ADD_FAILURE() << name << ": no error";
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(fixture(name) + ": ", 0), 0u) << msg;
      EXPECT_NE(msg.find(phrase), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace ulpscope
