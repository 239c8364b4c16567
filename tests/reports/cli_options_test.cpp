#include "reports/cli_options.hpp"

#include "accuracy/distribution.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <sstream>
#include <string>
#include <vector>

namespace ulpscope {
namespace {

std::variant<CliOptions, CliExit> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "accuracy_report");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_cli(int(argv.size()), argv.data());
}

CliOptions ok(std::vector<std::string> args) {
  auto r = parse(std::move(args));
  if (auto* e = std::get_if<CliExit>(&r)) ADD_FAILURE() << e->message;
  return std::holds_alternative<CliOptions>(r) ? std::get<CliOptions>(r) : CliOptions{};
}

CliExit fails(std::vector<std::string> args) {
  auto r = parse(std::move(args));
  EXPECT_TRUE(std::holds_alternative<CliExit>(r));
  return std::holds_alternative<CliExit>(r) ? std::get<CliExit>(r) : CliExit{-1, ""};
}

TEST(Cli, ListsAreCommaSeparatedAndGroupsExpand) {
  const auto o = ok({"--dtype", "fp16,fp8", "--op", "sum,norm2", "--n", "1024,2^20+3,1e6", "--seed", "1,2"});
  EXPECT_EQ(o.dtypes, (std::vector<Dtype>{Dtype::fp16, Dtype::fp8_e4m3, Dtype::fp8_e5m2}));
  EXPECT_EQ(o.ops, (std::vector<Op>{Op::sum, Op::norm2}));
  EXPECT_EQ(o.sizes, (std::vector<std::int64_t>{1024, (1 << 20) + 3, 1000000}));
  EXPECT_EQ(o.seeds, (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(ok({"--dtype", "all"}).dtypes.size(), 5u);
}

TEST(Cli, GalleryKernelsAreShapesWhenNamed) {
  const auto o = ok({"--shape", "tree,v3_first_add,atomic_element"});
  EXPECT_EQ(o.shapes, (std::vector<Shape>{Shape::tree, Shape::v3_first_add, Shape::atomic_element}));
  // An unknown name lists the gallery's kernels too.
  EXPECT_NE(fails({"--shape", "v9"}).message.find("two_stage"), std::string::npos);
}

TEST(Cli, UnknownValueNamesTheAcceptedOnesAndExits2) {
  for (const auto& [flag, bad, accepted] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--dtype", "fp33", "fp8_e5m2, fp8, all"},
           {"--op", "summ", "logsumexp"},
           {"--accumulator", "kahn", "kahan"},
           {"--shape", "trie", "cub_deterministic"},
           {"--backend", "gpu", "auto, cuda, cpu"},
           {"--format", "xml", "table, json, csv, md"},
           {"--out-dtype", "fp128", "fp64"}}) {
    const CliExit e = fails({flag, bad});
    EXPECT_EQ(e.status, 2) << flag;
    EXPECT_NE(e.message.find(bad), std::string::npos) << e.message;
    EXPECT_NE(e.message.find(accepted), std::string::npos) << e.message;
    EXPECT_EQ(e.message.find('\n'), std::string::npos) << "one line: " << e.message;
  }
}

TEST(Cli, BadSizesAndFlagsExit2) {
  EXPECT_EQ(fails({"--n", "-5"}).status, 2);
  EXPECT_EQ(fails({"--n", "2^41"}).status, 2);
  EXPECT_EQ(fails({"--n", "12abc"}).status, 2);
  EXPECT_EQ(fails({"--seed", "x"}).status, 2);
  EXPECT_EQ(fails({"--no-such-flag"}).status, 2);
  EXPECT_EQ(fails({"--gate"}).status, 2);  // needs --baseline
  EXPECT_EQ(fails({"--recommend", "max"}).status, 2);
}

TEST(Cli, HelpAndVersionExit0) {
  const CliExit help = fails({"--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.message.find("--dtype"), std::string::npos);
  const CliExit version = fails({"--version"});
  EXPECT_EQ(version.status, 0);
  EXPECT_NE(version.message.find("ulpscope"), std::string::npos);
}

TEST(Cli, ParseSize) {
  EXPECT_EQ(parse_size("0"), 0);
  EXPECT_EQ(parse_size("2^31+5"), (std::int64_t(1) << 31) + 5);
  EXPECT_EQ(parse_size("2^20-1"), (1 << 20) - 1);
  EXPECT_EQ(parse_size("3e3"), 3000);
  EXPECT_FALSE(parse_size(""));
  EXPECT_FALSE(parse_size("2^"));
  EXPECT_FALSE(parse_size("1.5"));
}

// --gallery runs its own matrix, so a gate or an input beside it
// would be ignored; "--gallery --baseline b.json --gate" must not pass a CI gate.
TEST(Cli, GalleryRefusesFlagsItWouldIgnore) {
  for (const auto& extra : std::vector<std::vector<std::string>>{{"--baseline", "b.json", "--gate"},
                                                                  {"--baseline", "b.json"},
                                                                  {"--baseline", "b.json", "--current", "c.json"},
                                                                  {"--baseline", "b.json", "--gate-summary", "s.md"},
                                                                  {"--kernel-lib", "lib.so"},
                                                                  {"--input", "x.npy"},
                                                                  {"--recommend", "rmsnorm"}}) {
    std::vector<std::string> args = {"--gallery"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliExit e = fails(args);
    EXPECT_EQ(e.status, 2) << extra[0];
    EXPECT_NE(e.message.find("--gallery does not go with"), std::string::npos) << e.message;
    EXPECT_EQ(e.message.find('\n'), std::string::npos) << e.message;
  }
  EXPECT_TRUE(ok({"--gallery", "--dtype", "fp16", "--out", "g.md"}).gallery);
}

// Tolerances refused in one short line (CLI11's range check printed
// the lowest double in 310 digits), and [0, 1] for throughput as the help says.
TEST(Cli, TolerancesAreCheckedInOneShortLine) {
  for (const auto& [flag, bad] : std::vector<std::pair<std::string, std::string>>{
           {"--ulp-tolerance", "-1"}, {"--ulp-tolerance", "nan"}, {"--ulp-tolerance", "inf"},
           {"--throughput-tolerance", "-0.1"}, {"--throughput-tolerance", "1.5"}, {"--throughput-tolerance", "nan"}}) {
    const CliExit e = fails({"--baseline", "b.json", flag, bad});
    EXPECT_EQ(e.status, 2) << flag << " " << bad;
    EXPECT_LT(e.message.size(), 100u) << e.message;
    EXPECT_NE(e.message.find(flag), std::string::npos) << e.message;
  }
  EXPECT_EQ(ok({"--baseline", "b.json", "--throughput-tolerance", "1"}).throughput_tolerance, 1.0);
  EXPECT_EQ(ok({"--baseline", "b.json", "--throughput-tolerance", "0"}).throughput_tolerance, 0.0);
  EXPECT_EQ(ok({"--baseline", "b.json", "--ulp-tolerance", "0"}).ulp_tolerance, 0.0);
}

// A repeated size or seed would make the same cells twice.
TEST(Cli, RepeatedSizesAndSeedsAreDropped) {
  const auto o = ok({"--n", "1024,1e3,1024", "--n", "2^10", "--seed", "1,2,1", "--seed", "2"});
  EXPECT_EQ(o.sizes, (std::vector<std::int64_t>{1024, 1000}));
  EXPECT_EQ(o.seeds, (std::vector<std::uint64_t>{1, 2}));
}

// Issue 41, item 4: --eps, for the norms and rms; the default stated in --help.
TEST(Cli, EpsIsAFiniteNumberAboveZero) {
  EXPECT_FALSE(ok({}).eps.has_value());  // the matrix's default
  EXPECT_EQ(ok({"--eps", "1e-5"}).eps, 1e-5);
  EXPECT_EQ(ok({"--eps", "0.25"}).eps, 0.25);
  for (const std::string bad : {"-1", "0", "nan", "inf", "-inf", "1e-5x", "abc"}) {
    const CliExit e = fails({"--eps", bad});
    EXPECT_EQ(e.status, 2) << bad;
    EXPECT_NE(e.message.find("--eps"), std::string::npos) << bad << ": " << e.message;
    EXPECT_EQ(e.message.find('\n'), std::string::npos) << bad << ": " << e.message;  // one line
  }
  const CliExit help = fails({"--help"});
  const auto at = help.message.find("--eps");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(help.message.find("default 1e-06", at), std::string::npos) << help.message.substr(at, 300);
}

// --out's name picks the format, and may not contradict --format; more
// outputs of the same run with --json, --md, --html, --csv.
TEST(Cli, OutNamePicksTheFormatOrIsRefusedWhenItContradictsFormat) {
  const std::pair<const char*, const char*> picked[] = {
      {"r.json", "json"}, {"r.md", "md"}, {"r.html", "html"}, {"r.htm", "html"}, {"r.csv", "csv"}, {"r.txt", "table"},
      {"r.out", "table"}, {"report", "table"}};
  for (const auto& [path, format] : picked) EXPECT_EQ(ok({"--out", path}).format, format) << path;
  EXPECT_EQ(ok({"--out", "r.json", "--format", "json"}).format, "json");
  EXPECT_EQ(ok({"--out", "r.out", "--format", "md"}).format, "md");  // no known extension: --format says
  const CliExit e = fails({"--out", "r.json", "--format", "md"});
  EXPECT_EQ(e.status, 2);
  EXPECT_EQ(e.message, "--out r.json names a json file but --format is md (drop one of them)");
  EXPECT_EQ(fails({"--format", "table", "--out", "r.csv"}).status, 2);  // even the default, said aloud
}

TEST(Cli, ExtraOutputsAreKeptInOrderAndTheirNamesMustAgree) {
  const auto o = ok({"--md", "r.md", "--json", "r.json", "--csv", "r.data", "--html", "r.html", "--cells"});
  ASSERT_EQ(o.extra_outputs.size(), 4u);
  // In the order of the flags' table (json, md, html, csv), whatever the command line's order.
  EXPECT_EQ(o.extra_outputs[0].format, "json");
  EXPECT_EQ(o.extra_outputs[0].path, "r.json");
  EXPECT_EQ(o.extra_outputs[1].format, "md");
  EXPECT_EQ(o.extra_outputs[2].format, "html");
  EXPECT_EQ(o.extra_outputs[3].format, "csv");
  EXPECT_EQ(o.extra_outputs[3].path, "r.data");
  EXPECT_EQ(o.format, "table");
  EXPECT_TRUE(o.cells);
  const CliExit e = fails({"--json", "r.md"});
  EXPECT_EQ(e.status, 2);
  EXPECT_EQ(e.message, "--json r.md names a md file (give it a .json name)");
  EXPECT_EQ(fails({"--gallery", "--md", "g.md"}).status, 2);
  EXPECT_EQ(fails({"--gallery", "--cells"}).status, 2);
  EXPECT_EQ(fails({"--baseline", "b.json", "--current", "c.json", "--json", "r.json"}).status, 2);
}

// --help: the defaults, every distribution in one line, the exit statuses,
// examples that parse.
TEST(Cli, HelpShowsDefaultsDistributionsExitStatusesAndExamples) {
  const CliExit help = fails({"--help"});
  ASSERT_EQ(help.status, 0);
  const std::string& h = help.message;
  for (const char* text : {"(default: fp32)", "(default: 4096, 2^16+3; --full: 1, 33, 1023, 4097, 2^20+3, 2^24)", "(default: all but min, cumsum; --full: all but cumsum)",
                           "(default: 1; --full: 1, 2, 3)", "(default: 3; --full: 10)",
                           "all, with ill_conditioned:1e8, ill_conditioned:1e16", "(default 2^26; 0: not measured)",
                           "(default auto)", "default: table, or what --out's name ends with",
                           "(default satfinite)", "(default 4096)", "--cells", "--json", "--md", "--html", "--csv"})
    EXPECT_NE(h.find(text), std::string::npos) << text << "\n" << h;
  for (const DistributionSummary& d : kDistributionSummaries) {
    const std::string line = fmt::format("\n  {:<19} {:<12} {}\n", to_string(d.d), to_string(d.group), d.summary);
    EXPECT_NE(h.find(line), std::string::npos) << line;
  }
  const auto exits = h.find("Exit status:\n  0  done\n  1  a cell failed, or the gate found a regression");
  EXPECT_NE(exits, std::string::npos) << h;
  EXPECT_NE(h.find("\n  2  bad usage or input", exits), std::string::npos);
  // Every example parses as it is written.
  const auto examples = h.find("Examples:\n");
  ASSERT_NE(examples, std::string::npos);
  std::istringstream in(h.substr(examples));
  int parsed = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  accuracy_report ", 0) != 0) continue;
    const std::string command = line.substr(2, line.find("   ", 2) - 2);
    std::vector<std::string> args;
    std::istringstream words(command.substr(command.find(' ') + 1));
    for (std::string w; words >> w;) args.push_back(w);
    ok(args);
    ++parsed;
  }
  EXPECT_GE(parsed, 5);
}

}  // namespace
}  // namespace ulpscope
