#include "accuracy/input_file.hpp"

#include <fmt/format.h>

#include <bit>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string_view>
#include <vector>

#include "formats/binary_format.hpp"
#include "formats/small_float.hpp"

namespace ulpscope {
namespace {

static_assert(std::endian::native == std::endian::little,
              "input files are little-endian and are read without byte swapping");

// The file, opened, with its size known before anything is allocated.
class InputFile {
 public:
  explicit InputFile(const std::string& path) : path_(path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) fail("is a directory, not a file");
    // A FIFO or a device would block open() or never end (docs/bad-inputs.md).
    const auto st = std::filesystem::status(path, ec);
    if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) fail("is not a regular file");
    in_.open(path, std::ios::binary);
    if (!in_) fail(fmt::format("cannot open: {}", std::strerror(errno)));
    in_.seekg(0, std::ios::end);
    const std::streamoff end = in_.tellg();
    if (end < 0) fail("cannot tell the file's size");
    size_ = static_cast<std::uint64_t>(end);
    in_.seekg(0);
  }
  std::uint64_t size() const { return size_; }
  void read(void* into, std::uint64_t bytes, std::uint64_t at) {
    in_.seekg(static_cast<std::streamoff>(at));
    in_.read(static_cast<char*>(into), static_cast<std::streamsize>(bytes));
    if (!in_) fail("read error");
  }
  [[noreturn]] void fail(const std::string& what) const { throw InputError(fmt::format("{}: {}", path_, what)); }

 private:
  std::string path_;
  std::ifstream in_;
  std::uint64_t size_ = 0;
};

// ---- the .npy header: a Python dict literal (numpy.lib.format) ----

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const InputFile& file) : s_(text), file_(file) {}

  NpyHeader parse() {
    NpyHeader h;
    bool seen[3] = {false, false, false};
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = string_literal();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (peek() != '\'' && peek() != '"') bad("'descr' is a structured dtype; ulpscope reads plain arrays");
        h.descr = string_literal();
        mark(seen[0], key);
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
        mark(seen[1], key);
      } else if (key == "shape") {
        h.shape = tuple();
        mark(seen[2], key);
      } else {
        bad(fmt::format("unexpected key '{}'", key));
      }
      skip_space();
      if (peek() == ',') ++pos_;
      else if (peek() != '}') bad("expected ',' or '}'");
    }
    ++pos_;
    skip_space();
    if (pos_ != s_.size()) bad("text after the closing '}'");
    if (!seen[0] || !seen[1] || !seen[2]) bad("'descr', 'fortran_order' and 'shape' are all required");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& what) const { file_.fail("bad .npy header: " + what); }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) bad(fmt::format("expected '{}'", c));
    ++pos_;
  }
  void mark(bool& seen, const std::string& key) const {
    if (seen) bad(fmt::format("'{}' given twice", key));
    seen = true;
  }
  std::string string_literal() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') bad("expected a quoted string");
    const std::size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) bad("unterminated string");
    std::string out(s_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    for (const bool value : {true, false}) {
      const std::string_view word = value ? "True" : "False";
      if (s_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    bad("'fortran_order' must be True or False");
  }
  std::vector<std::int64_t> tuple() {
    if (peek() != '(') bad("'shape' must be a tuple");
    ++pos_;
    std::vector<std::int64_t> dims;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) bad("'shape' must hold non-negative integers");
      std::int64_t d = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (d > (std::numeric_limits<std::int64_t>::max() - 9) / 10) bad("a dimension is too large");
        d = d * 10 + (s_[pos_++] - '0');
      }
      if (peek() == 'L') ++pos_;  // Python 2 long literals, in old files
      dims.push_back(d);
      skip_space();
      if (peek() == ',') ++pos_;
      else if (peek() != ')') bad("expected ',' or ')' in 'shape'");
    }
    ++pos_;
    return dims;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  const InputFile& file_;
};

std::uint32_t little_endian(const unsigned char* p, int bytes) {
  std::uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Magic "\x93NUMPY", version, header length (2 bytes in 1.0, 4 in 2.0 and
// 3.0), the header; returns it and where the data starts.
std::pair<NpyHeader, std::uint64_t> read_npy_header(InputFile& file) {
  unsigned char pre[12];
  if (file.size() < 10) file.fail("not a .npy file (too short for the magic string and version)");
  file.read(pre, 10, 0);
  if (std::memcmp(pre, "\x93NUMPY", 6) != 0) file.fail("not a .npy file (bad magic string)");
  const int major = pre[6], minor = pre[7];
  if (major < 1 || major > 3 || minor != 0)
    file.fail(fmt::format("unsupported .npy format version {}.{} (1.0, 2.0 and 3.0 are read)", major, minor));
  const int len_bytes = major == 1 ? 2 : 4;
  if (file.size() < std::uint64_t(8 + len_bytes)) file.fail("truncated .npy header");
  if (len_bytes == 4) file.read(pre + 10, 2, 10);
  const std::uint64_t header_len = little_endian(pre + 8, len_bytes);
  const std::uint64_t start = 8 + len_bytes;
  if (file.size() - start < header_len)
    file.fail(fmt::format("truncated .npy header: it claims {} bytes, the file has {} after the preamble", header_len,
                          file.size() - start));
  std::string text(header_len, '\0');
  file.read(text.data(), header_len, start);
  return {HeaderParser(text, file).parse(), start + header_len};
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

// How a descr's bytes are read: as values of a format of their own, or as
// bit patterns of a format that --dtype names.
enum class Holds : std::uint8_t { values, bits16, bits8 };

struct Descr {
  std::string_view name;  // as in the file
  int itemsize;
  std::string_view numpy;  // NumPy's name, for messages
  Holds holds;
  Dtype own = Dtype::fp32;  // Holds::values: the format of the file's values (fp64 for float64)
};
constexpr Descr kDescrs[] = {
    {"<f2", 2, "float16", Holds::values, Dtype::fp16},
    {"<f4", 4, "float32", Holds::values, Dtype::fp32},
    {"<f8", 8, "float64", Holds::values, Dtype::fp64},
    {"<f1", 1, "float8_e5m2 (ml_dtypes)", Holds::values, Dtype::fp8_e5m2},
    {"<u2", 2, "uint16", Holds::bits16},
    {"<i2", 2, "int16", Holds::bits16},
    {"<V2", 2, "2-byte void (ml_dtypes bfloat16)", Holds::bits16},
    {"|V2", 2, "2-byte void", Holds::bits16},
    {"|u1", 1, "uint8", Holds::bits8},
    {"<u1", 1, "uint8", Holds::bits8},
    {"|i1", 1, "int8", Holds::bits8},
    {"<i1", 1, "int8", Holds::bits8},
    {"<V1", 1, "1-byte void (ml_dtypes float8)", Holds::bits8},
    {"|V1", 1, "1-byte void", Holds::bits8},
};

const char* kInputDtypeList = "fp32, fp16, bf16, fp8_e4m3, fp8_e5m2";

// Rounds exact values into dtype d, refusing overflow (see read_npy).
template <class T>
std::vector<T> round_all(const std::vector<double>& wide, Dtype d, const InputFile& file) {
  std::vector<T> out(wide.size());
  for (std::size_t i = 0; i < wide.size(); ++i) {
    const double x = wide[i];
    T v;
    if constexpr (std::is_same_v<T, float>) {
      v = std::bit_cast<float>(encode<Fp32Format>(x, Saturation::nosat));
    } else {
      v = T::from_bits(encode<typename T::format>(x, Saturation::nosat));
    }
    const double r = to_double(v);
    if ((std::isfinite(x) && !std::isfinite(r)) || (std::isinf(x) && !std::isinf(r)))
      file.fail(fmt::format("value {} at index {} does not fit {} (largest finite value {})", x, i, to_string(d),
                            format_info(d).max_finite));
    out[i] = v;
  }
  return out;
}

TypedArray round_to(const std::vector<double>& wide, Dtype d, const InputFile& file) {
  switch (d) {
    case Dtype::fp32: return TypedArray(round_all<float>(wide, d, file));
    case Dtype::fp16: return TypedArray(round_all<Fp16>(wide, d, file));
    case Dtype::bf16: return TypedArray(round_all<Bf16>(wide, d, file));
    case Dtype::fp8_e4m3: return TypedArray(round_all<Fp8E4M3>(wide, d, file));
    case Dtype::fp8_e5m2: return TypedArray(round_all<Fp8E5M2>(wide, d, file));
    case Dtype::fp64: break;
  }
  file.fail("fp64 is not an input format");
}

// The file's bytes as values of their own type, then widened exactly.
template <class T>
std::vector<T> read_values(InputFile& file, std::uint64_t count, std::uint64_t at) {
  std::vector<T> v(count);
  file.read(v.data(), count * sizeof(T), at);
  return v;
}

void refuse_fp64(std::optional<Dtype> d, const InputFile& file) {
  if (d == Dtype::fp64)
    file.fail(fmt::format("fp64 is an output format; the data must be read as one of {}", kInputDtypeList));
}

}  // namespace

LoadedInput read_npy(const std::string& path, std::optional<Dtype> requested) {
  InputFile file(path);
  refuse_fp64(requested, file);
  const auto [header, data_start] = read_npy_header(file);

  const Descr* descr = nullptr;
  for (const Descr& d : kDescrs)
    if (d.name == header.descr) descr = &d;
  if (descr == nullptr)
    file.fail(fmt::format("unsupported dtype '{}' (read: little-endian float16 '<f2', float32 '<f4', float64 '<f8', "
                          "ml_dtypes float8_e5m2 '<f1'; 16-bit '<u2', '<i2', '<V2' as fp16 or bf16 bits; 8-bit "
                          "'|u1', '|i1', '<V1' as fp8 bits)",
                          header.descr));
  const std::size_t ndim = header.shape.size();
  if (ndim == 0 || ndim > 2)
    file.fail(fmt::format("a {}-D array of shape {}; ulpscope reads 1-D arrays, or 2-D [rows, cols] for row-wise ops",
                          ndim, shape_text(header.shape)));
  // For a 1-D array both orders are the same bytes.
  if (header.fortran_order && ndim == 2)
    file.fail("Fortran-ordered (column-major) array; save it in C order (numpy.ascontiguousarray)");

  const std::int64_t rows = ndim == 2 ? header.shape[0] : 1;
  const std::int64_t cols = header.shape[ndim - 1];
  if (cols != 0 && rows > std::numeric_limits<std::int64_t>::max() / 8 / cols)
    file.fail(fmt::format("shape {} is too large", shape_text(header.shape)));
  const std::uint64_t count = std::uint64_t(rows) * std::uint64_t(cols);
  const std::uint64_t bytes = count * std::uint64_t(descr->itemsize);
  const std::uint64_t present = file.size() - data_start;
  if (present < bytes)
    file.fail(fmt::format("truncated data: shape {} of {} needs {} bytes, the file has {}", shape_text(header.shape),
                          descr->numpy, bytes, present));
  if (present > bytes)
    file.fail(fmt::format("{} bytes after the data of shape {} of {}", present - bytes, shape_text(header.shape),
                          descr->numpy));

  LoadedInput out;
  out.rows = rows;
  out.cols = cols;
  out.ndim = int(ndim);
  out.source_dtype = header.descr;
  const std::string what = fmt::format("{} data ('{}')", descr->numpy, header.descr);
  switch (descr->holds) {
    case Holds::bits16:
      if (requested == Dtype::fp16) out.values = TypedArray(read_values<Fp16>(file, count, data_start));
      else if (requested == Dtype::bf16) out.values = TypedArray(read_values<Bf16>(file, count, data_start));
      else file.fail(what + " is read as fp16 or bf16 bit patterns: give --dtype fp16 or --dtype bf16");
      break;
    case Holds::bits8:
      if (requested == Dtype::fp8_e4m3) out.values = TypedArray(read_values<Fp8E4M3>(file, count, data_start));
      else if (requested == Dtype::fp8_e5m2) out.values = TypedArray(read_values<Fp8E5M2>(file, count, data_start));
      else file.fail(what + " is read as fp8 bit patterns: give --dtype fp8_e4m3 or --dtype fp8_e5m2");
      break;
    case Holds::values: {
      // float64 has no input format of its own: fp32 unless --dtype says otherwise.
      const Dtype to = requested.value_or(descr->own == Dtype::fp64 ? Dtype::fp32 : descr->own);
      std::vector<double> own;
      switch (descr->own) {
        case Dtype::fp16: out.values = TypedArray(read_values<Fp16>(file, count, data_start)); break;
        case Dtype::fp32: out.values = TypedArray(read_values<float>(file, count, data_start)); break;
        case Dtype::fp8_e5m2: out.values = TypedArray(read_values<Fp8E5M2>(file, count, data_start)); break;
        default: own = read_values<double>(file, count, data_start); break;
      }
      if (to == descr->own) break;
      if (descr->own != Dtype::fp64) own = out.values.to_doubles();
      out.values = round_to(own, to, file);
      std::size_t changed = 0;
      for (std::size_t i = 0; i < own.size(); ++i) {
        const double v = out.values.at(i);
        changed += !(v == own[i] || (std::isnan(v) && std::isnan(own[i])));
      }
      out.conversion = fmt::format("{} converted to {} ({}): {} of {} values rounded", what, to_string(to),
                                   requested ? fmt::format("--dtype {}", to_string(to))
                                             : std::string("give --dtype to choose the format"),
                                   changed, own.size());
      break;
    }
  }
  return out;
}

LoadedInput read_raw(const std::string& path, Dtype dtype, std::int64_t n) {
  InputFile file(path);
  refuse_fp64(dtype, file);
  if (n < 0) file.fail(fmt::format("a negative number of values ({})", n));
  const std::uint64_t width = std::uint64_t(format_info(dtype).bits / 8);
  if (std::uint64_t(n) > std::numeric_limits<std::uint64_t>::max() / width)
    file.fail(fmt::format("{} values is too many", n));
  const std::uint64_t bytes = std::uint64_t(n) * width;
  if (file.size() != bytes)
    file.fail(fmt::format("holds {} bytes, but {} values of {} are {} bytes", file.size(), n, to_string(dtype), bytes));
  LoadedInput out;
  out.values = TypedArray(dtype, std::size_t(n));
  std::visit([&](auto& v) { file.read(v.data(), bytes, 0); }, out.values.data());
  out.rows = 1;
  out.cols = n;
  out.ndim = 1;
  out.source_dtype = fmt::format("raw {}", to_string(dtype));
  return out;
}

void reshape(LoadedInput& input, std::int64_t rows, std::int64_t cols) {
  const std::int64_t n = std::int64_t(input.values.size());
  const bool fits = rows >= 0 && cols >= 0 && (cols == 0 ? n == 0 : n % cols == 0 && n / cols == rows);
  if (!fits)
    throw InputError(fmt::format("{} values cannot be viewed as [{}, {}]", n, rows, cols));
  input.rows = rows;
  input.cols = cols;
  input.ndim = 2;
}

void check_shape_fits(const LoadedInput& input, Op op, Axis axis) {
  const std::string what = input.ndim == 1 ? fmt::format("1-D array of {} values", input.values.size())
                                            : fmt::format("[{}, {}] array", input.rows, input.cols);
  if (axis != Axis::all && input.ndim != 2)
    throw InputError(fmt::format("{} reduced along axis {} needs a 2-D [rows, cols] array; the input is a {}",
                                 to_string(op), to_string(axis), what));
  if (is_elementwise_output(op) && axis == Axis::all && input.rows > 1)
    throw InputError(fmt::format("{} normalises rows: give --axis inner for the input, a {}", to_string(op), what));
}

}  // namespace ulpscope
