#include "lrkit/schedules/spec.hpp"

#include <gtest/gtest.h>

#include "lrkit/schedules/factory.hpp"

namespace lrkit::schedules {
namespace {

SpecError error_of(const std::string& spec, std::optional<int64_t> total = 100) {
  try {
    parse_schedule(spec, total);
  } catch (const SpecError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << spec;
  return SpecError(spec, 0, "", "none");
}

TEST(SpecParser, ParsesCallsKeysListsPercentsAndNesting) {
  const SpecCall call = parse_spec("join(linear(0, 1e-3, 200), cosine(peak=1e-3), at=[20%, 300])");
  EXPECT_EQ(call.name, "join");
  ASSERT_EQ(call.args.size(), 3u);
  EXPECT_EQ(call.args[0].value.kind, SpecValue::Kind::Call);
  EXPECT_EQ(call.args[0].value.call->name, "linear");
  EXPECT_DOUBLE_EQ(call.args[0].value.call->args[1].value.number, 1e-3);
  EXPECT_EQ(call.args[2].key, "at");
  ASSERT_EQ(call.args[2].value.items.size(), 2u);
  EXPECT_TRUE(call.args[2].value.items[0].percent);
  EXPECT_DOUBLE_EQ(call.args[2].value.items[0].number, 20.0);
  EXPECT_EQ(call.args[2].value.items[1].position, 55u);
}

TEST(SpecParser, WordsThatStartWithDigitsStayWords) {
  const SpecCall call = parse_spec("wsd(shape=1-sqrt, norms=\"my run.h5\")");
  EXPECT_EQ(call.args[0].value.kind, SpecValue::Kind::Word);
  EXPECT_EQ(call.args[0].value.text, "1-sqrt");
  EXPECT_EQ(call.args[1].value.text, "my run.h5");
}

TEST(SpecParser, ANumberMayCarryALeadingPlus) {
  const SpecCall call = parse_spec("cosine(peak=+1e-3, warmup=+5%)");
  EXPECT_EQ(call.args[0].value.kind, SpecValue::Kind::Number);
  EXPECT_DOUBLE_EQ(call.args[0].value.number, 1e-3);
  EXPECT_TRUE(call.args[1].value.percent);
  EXPECT_DOUBLE_EQ(call.args[1].value.number, 5.0);
  EXPECT_EQ(parse_spec("cosine(peak=+-1)").args[0].value.kind, SpecValue::Kind::Word);  // not a number: refused as such
  EXPECT_EQ(parse_spec("cosine(peak=+)").args[0].value.kind, SpecValue::Kind::Word);
}

TEST(SpecParser, SyntaxErrorsNamePositionTokenAndRule) {
  auto e = error_of("cosine(peak=1e-3");
  EXPECT_EQ(e.position(), 16u);
  EXPECT_NE(std::string(e.what()).find("expected ')'"), std::string::npos);

  e = error_of("cosine(peak=1e-3))");
  EXPECT_EQ(e.position(), 17u);
  e = error_of("cosine(peak==1)");
  EXPECT_EQ(e.position(), 12u);
  e = error_of("cosine(peak=nan)");
  EXPECT_EQ(e.token(), "nan");
  EXPECT_NE(e.rule().find("finite"), std::string::npos);
  e = error_of("cosine(peak=1e400)");
  EXPECT_NE(e.rule().find("out of range"), std::string::npos);
  e = error_of("cosine(peak=\"1)");
  EXPECT_NE(e.rule().find("unterminated"), std::string::npos);
  e = error_of("");
  EXPECT_NE(e.rule().find("starts with a schedule name"), std::string::npos);
  e = error_of("cosine(peak=abc%)");
  EXPECT_NE(e.rule().find("'%' must follow a number"), std::string::npos);
  e = error_of(std::string(40, '[') + "]");
  EXPECT_EQ(e.position(), 0u);
}

TEST(SpecParser, DeepNestingIsRefusedNotRecursedForever) {
  std::string spec;
  for (int i = 0; i < 200; ++i) spec += "scale(";
  const auto e = error_of(spec + "constant(1)" + std::string(200, ')'));
  EXPECT_NE(e.rule().find("nest at most"), std::string::npos);
}

TEST(SpecErrors, BuildErrorsNameKeyValueAndRule) {
  auto e = error_of("uba(pek=1e-3, phi=1)");
  EXPECT_EQ(e.position(), 4u);
  EXPECT_EQ(e.token(), "pek");
  EXPECT_NE(e.rule().find("expected one of: peak, phi"), std::string::npos);

  e = error_of("uba(peak=1e-3, phi=0)");
  EXPECT_EQ(e.token(), "0");
  EXPECT_NE(e.rule().find("'phi' must be > 0 (got 0)"), std::string::npos);

  e = error_of("cosine(peak=-1)");
  EXPECT_NE(e.rule().find(">= 0 (got -1)"), std::string::npos);
  e = error_of("cosine(peak=1e-3, warmup=100)");
  EXPECT_NE(e.rule().find("must be shorter than the run (100 steps)"), std::string::npos);
  e = error_of("wsd(peak=1e-3, decay=20%)", 2);
  EXPECT_EQ(e.token(), "20%");
  EXPECT_NE(e.rule().find("wsd needs a decay of at least 1 step (got 0 of the run's 2 steps)"), std::string::npos);
  e = error_of("warmup(cosine(1e-3), length=200)");
  EXPECT_EQ(e.token(), "200");  // the combinator's length, not the call
  EXPECT_NE(e.rule().find("must be shorter than the run (100 steps)"), std::string::npos);
  e = error_of("cyclic(peak=1e-3, budgets=[100, 50])");
  EXPECT_EQ(e.token(), "50");
  EXPECT_NE(e.rule().find("budgets must be positive and increasing (entry 2 = 50)"), std::string::npos);
  e = error_of("cyclic(peak=1e-3, budgets=[])");
  EXPECT_NE(e.rule().find("cyclic needs at least one budget"), std::string::npos);
  e = error_of("onecycle(peak=1, div_factor=1e-320)");
  EXPECT_EQ(e.token(), "1e-320");
  EXPECT_NE(e.rule().find("peak / div_factor overflows"), std::string::npos);
  e = error_of("wsd(peak=1e-3, warmup=50, decay=60)");
  EXPECT_NE(e.rule().find("exceed the run"), std::string::npos);
  e = error_of("cosine(peak=1e-3, floor=2e-3)");
  EXPECT_NE(e.rule().find("must not exceed the peak"), std::string::npos);
  e = error_of("wsd(peak=1e-3, shape=round)");
  EXPECT_NE(e.rule().find("1-sqrt"), std::string::npos);
  e = error_of("wsd(peak=1e-3, shape=inverse)");
  EXPECT_NE(e.rule().find("floor > 0"), std::string::npos);
  e = error_of("cosine(peak=1e-3, peak=2e-3)");
  EXPECT_NE(e.rule().find("given twice"), std::string::npos);
  e = error_of("cosine(peak=1e-3, 1e-5)");
  EXPECT_NE(e.rule().find("positional argument after keyword"), std::string::npos);
  e = error_of("cosine(1, 0, 10, 0, 0, linear, 0.5, 7)");
  EXPECT_NE(e.rule().find("at most 7 positional"), std::string::npos);
  e = error_of("cosine(warmup=10.5, peak=1)");
  EXPECT_EQ(e.rule(), "'warmup' in steps must be a whole number (got 10.5)");
  e = error_of("wsd(peak=1, decay=0.2)");
  EXPECT_EQ(e.rule(), "'decay' in steps must be a whole number (got 0.2); a fraction of the run is a percentage: 20%");
  e = error_of("cosine(peak=1, warmup=0.07)");
  EXPECT_EQ(e.rule(), "'warmup' in steps must be a whole number (got 0.07); a fraction of the run is a percentage: 7%");
  e = error_of("cosine(peak=1)", std::nullopt);
  EXPECT_NE(e.rule().find("needs the total number of steps"), std::string::npos);
  e = error_of("nosuch(peak=1)");
  EXPECT_EQ(e.rule().find("unknown schedule family; known: constant, linear, cosine"), 0u) << e.rule();
  e = error_of("cosin(peak=1)");
  EXPECT_EQ(e.rule().find("unknown schedule family (did you mean 'cosine'?); known: "), 0u) << e.rule();
  e = error_of("cosine(peak=1, warmpu=3)");
  EXPECT_EQ(e.rule(), "unknown key for cosine (did you mean 'warmup'?); expected one of: peak, floor, total, warmup, "
                      "warmup_init, warmup_shape, cycles");
  e = error_of("cosine(peak=constant(1))");
  EXPECT_NE(e.rule().find("takes a value, not a schedule"), std::string::npos);
  e = error_of("join(constant(1), constant(2), at=[50, 60])");
  EXPECT_NE(e.rule().find("needs 1 boundaries, got 2"), std::string::npos);
  e = error_of("onecycle(peak=1, pct_start=0.01)", 50);
  EXPECT_NE(e.rule().find("empty phase"), std::string::npos);
}

TEST(SpecErrors, MessageQuotesTheWholeSpecOnOneLine) {
  const auto e = error_of("uba(peak=1e-3, phi=-1)");
  EXPECT_STREQ(e.what(), "invalid schedule spec \"uba(peak=1e-3, phi=-1)\" at position 19 ('-1'): 'phi' must be > 0 (got -1)");
}

// The message counted bytes: after a "caf\u00e9" it pointed one character past the token. position() stays the byte
// offset into the spec, for code that cuts the spec there.
TEST(SpecErrors, TheMessageCountsThePositionInCharacters) {
  const std::string spec = "table(file=caf\xc3\xa9.csv, colour=x)";
  const auto e = error_of(spec);
  EXPECT_NE(std::string(e.what()).find("\" at position 21 ('colour')"), std::string::npos) << e.what();
  EXPECT_EQ(e.position(), 22u);
  EXPECT_EQ(spec.substr(e.position(), 6), "colour");
  EXPECT_EQ(e.spec(), spec);
}

// A generated spec of thousands of characters was printed whole in every error (100 kB for a bracket run).
TEST(SpecErrors, ALongSpecIsQuotedAroundTheErrorAndControlBytesAreEscaped) {
  std::string spec = "join(constant(1e-3), linear(1e-3, 0), at=[";
  for (int i = 1; i <= 300; ++i) spec += std::to_string(i) + ", ";
  spec += "x])";
  const auto e = error_of(spec, 1000);
  const std::string what = e.what();
  EXPECT_LT(what.size(), 300u) << what;
  EXPECT_EQ(what.rfind("invalid schedule spec of " + std::to_string(spec.size()) + " characters \"...", 0), 0u) << what;
  EXPECT_NE(what.find("299, 300, x])\" (characters " + std::to_string(spec.size() - 120) + " to " +
                      std::to_string(spec.size() - 1) + ") at position " + std::to_string(spec.size() - 3)),
            std::string::npos)
      << what;
  EXPECT_EQ(e.position(), spec.size() - 3) << "the position still counts in the whole spec";

  const auto escaped = error_of("uba(peak=1e-3, phi=\x1b[2J)");
  EXPECT_NE(std::string(escaped.what()).find("phi=\\x1b[2J"), std::string::npos) << escaped.what();
}

// What a sweep checks of a spec whose file is not written yet: syntax, families and keys, nested ones too,
// with parse_schedule's messages; values and files are left to parse_schedule.
TEST(SpecForm, ChecksSyntaxFamiliesAndKeysButNotValuesOrFiles) {
  EXPECT_NO_THROW(check_spec_form("refined(norms=/not/yet/written.h5, peak=1e-3, norm=l1)"));
  EXPECT_NO_THROW(check_spec_form("join(refined(norms=later.h5, peak=1), linear(1, 0), at=[10])"));
  EXPECT_NO_THROW(check_spec_form("cosine(peak=-1)")) << "values are parse_schedule's";
  for (const auto& [spec, rule] : std::vector<std::pair<std::string, std::string>>{
           {"refined(norms=x.h5, nrm=l1)", "unknown key for refined"},
           {"join(refind(norms=x.h5), linear(1, 0), at=[10])", "unknown schedule family"},
           {"constant(1, 100, 5, 0, linear, 7)", "takes at most 5 positional arguments"},
           {"cosine(peak=1", "expected"},
       }) {
    try {
      check_spec_form(spec);
      ADD_FAILURE() << "no error for " << spec;
    } catch (const SpecError& e) {
      EXPECT_NE(e.rule().find(rule), std::string::npos) << spec << ": " << e.what();
      EXPECT_EQ(e.rule(), error_of(spec).rule()) << "the same message as parse_schedule's";
    }
  }
}

TEST(FormatWord, QuotesWhatWouldNotLexBackAsOneWord) {
  EXPECT_EQ(format_word("1-sqrt"), "1-sqrt");
  EXPECT_EQ(format_word("a b"), "\"a b\"");
  EXPECT_EQ(format_word("12"), "\"12\"");
  EXPECT_EQ(format_word("+12"), "\"+12\"");  // unquoted, it would read back as the number 12
}

TEST(ToSpec, RoundTripsAndCanonicalizes) {
  const auto s = parse_schedule("cosine(1e-3, 1e-5, warmup=2%)", 1000);
  EXPECT_EQ(s.to_spec(), "cosine(peak=0.001, floor=1e-05, warmup=2%)");
  const auto j = parse_schedule("join( linear(0,1e-3,200) , cosine(1e-3,1e-5) , at=[200])", 1000);
  EXPECT_EQ(j.to_spec(), "join(linear(peak=0, floor=0.001, total=200), cosine(peak=0.001, floor=1e-05), at=[200])");
  const auto again = parse_schedule(j.to_spec(), 1000);
  EXPECT_EQ(again.to_spec(), j.to_spec());
  for (int64_t t = 0; t <= 1000; ++t) ASSERT_EQ(again(t), j(t));
}

}  // namespace
}  // namespace lrkit::schedules
