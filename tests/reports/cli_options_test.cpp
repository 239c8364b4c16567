#include "reports/cli_options.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ulpscope
