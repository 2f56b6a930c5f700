// options/whole_number_option.hpp: whole-number options read as config files' whole-number keys are.
#include "lrkit/options/whole_number_option.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace lrkit::options {
namespace {

namespace po = boost::program_options;

struct Parsed {
  int64_t steps = 7;
  std::optional<int64_t> at;
};

Parsed parse(const std::vector<std::string>& args) {
  Parsed p;
  po::options_description options;
  options.add_options()("steps", whole_number(&p.steps), "steps")("at", whole_number(&p.at), "at");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  po::notify(vm);
  return p;
}

std::string refusal(const std::vector<std::string>& args) {
  try {
    parse(args);
  } catch (const po::error& e) {
    return e.what();
  }
  return "no error";
}

TEST(WholeNumberOption, TakesDigitsAndExactlyWholeDecimals) {
  EXPECT_EQ(parse({"--steps", "1e4"}).steps, 10000);
  EXPECT_EQ(parse({"--steps=2.5e4"}).steps, 25000);
  EXPECT_EQ(parse({"--steps", "-3"}).steps, -3);  // the command's own rule decides the range
  EXPECT_EQ(parse({"--at", "5e3"}).at, 5000);
  EXPECT_EQ(refusal({"--steps", "1.5"}), "the argument ('1.5') for option '--steps' is invalid");
  EXPECT_EQ(refusal({"--at", "1e-3"}), "the argument ('1e-3') for option '--at' is invalid");
  EXPECT_EQ(refusal({"--steps", "ten"}), "the argument ('ten') for option '--steps' is invalid");
  EXPECT_EQ(refusal({"--steps", "1", "--steps", "2"}), "option '--steps' cannot be specified more than once");
}

TEST(WholeNumberOption, AnAbsentOptionKeepsItsDefaultAndShowsIt) {
  const Parsed p = parse({});
  EXPECT_EQ(p.steps, 7);
  EXPECT_FALSE(p.at);
  int64_t steps = 12;
  po::options_description options;
  options.add_options()("steps", whole_number(&steps), "steps");
  std::ostringstream help;
  help << options;
  EXPECT_NE(help.str().find("--steps arg (=12)"), std::string::npos) << help.str();
}

}  // namespace
}  // namespace lrkit::options
