// require_usable_rates refuses the first step whose rate no optimizer can apply, and nothing else.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "lrkit/schedules/factory.hpp"
#include "lrkit/schedules/usable_rates.hpp"

namespace lrkit::schedules {
namespace {

// One bad value at one step, the peak elsewhere: the check must find that step, whatever the value's kind.
class OneBadStep final : public ScheduleNode {
 public:
  OneBadStep(int64_t total, int64_t bad_step, double bad_value) : ScheduleNode(total), bad_step_(bad_step), bad_value_(bad_value) {
    set_spec("constant(peak=1, total=" + std::to_string(total) + ")");
  }
  double at(double t) const override { return t == static_cast<double>(bad_step_) ? bad_value_ : 1.0; }
  std::vector<Phase> phases() const override { return {{0, total(), PhaseKind::Stable, false}}; }

 private:
  int64_t bad_step_;
  double bad_value_;
};

std::string refusal(const Schedule& s, int64_t steps) {
  try {
    require_usable_rates(s, steps);
  } catch (const SpecError& e) {
    return e.rule();
  }
  return "";
}

TEST(UsableRates, NameTheFirstStepThatIsNanInfiniteNegativeOrBeyondFloat32) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::string range = "; a learning rate must be a number in [0, 3.4028234663852886e+38] (float32's largest)";
  EXPECT_EQ(refusal(Schedule(std::make_shared<OneBadStep>(10, 7, nan)), 10), "it is nan at step 7 of 0..10" + range);
  EXPECT_EQ(refusal(Schedule(std::make_shared<OneBadStep>(10, 0, inf)), 10), "it is inf at step 0 of 0..10" + range);
  EXPECT_EQ(refusal(Schedule(std::make_shared<OneBadStep>(10, 10, -1e-30)), 10), "it is -1e-30 at step 10 of 0..10" + range);
  EXPECT_EQ(refusal(Schedule(std::make_shared<OneBadStep>(10, 3, 3.5e38)), 10), "it is 3.5e+38 at step 3 of 0..10" + range);
  // The bounds themselves are rates, and a step past the checked range is not looked at.
  EXPECT_EQ(refusal(Schedule(std::make_shared<OneBadStep>(10, 3, 0.0)), 10), "");
  EXPECT_EQ(refusal(Schedule(std::make_shared<OneBadStep>(10, 3, kLargestUsableRate)), 10), "");
  EXPECT_EQ(refusal(Schedule(std::make_shared<OneBadStep>(10, 5, nan)), 4), "");
}

// Checked step by step, so a run beyond kLongestCheckedRun is refused at once instead of stalling for minutes.
TEST(UsableRates, ARunLongerThanTheLongestCheckedIsRefusedWithoutEvaluatingIt) {
  const auto s = parse_schedule("constant(1e-3)", int64_t{1} << 40);
  EXPECT_EQ(refusal(s, int64_t{1} << 40), "a run of 1099511627776 steps is longer than 100000000, the most lrkit checks step "
                                          "by step (for a run without a planned end, use a schedule without one)");
}

TEST(UsableRates, AnOverflowingExponentialIsRefusedOnItsCanonicalSpecAndItsFirstCall) {
  // 1e-3 * 1.01^t passes float32's largest at t = 9611.
  const auto s = parse_schedule("exponential(1e-3, gamma=1.01)", 100000);
  EXPECT_NO_THROW(require_usable_rates(s, 9610));
  try {
    require_usable_rates(s, 100000);
    FAIL() << "an overflowing schedule passed";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.position(), 0u);
    EXPECT_EQ(e.token(), "exponential");
    EXPECT_EQ(std::string(e.what()).rfind("invalid schedule spec \"exponential(peak=0.001, gamma=1.01)\" at position 0 "
                                          "('exponential'): it is 3.409756963459282e+38 at step 9611 of 0..100000",
                                          0),
              0u)
        << e.what();
  }
}

// A zero peak stays 0 however far gamma^t grows (PyTorch's ExponentialLR and StepLR multiply their 0 step by step):
// 0 * pow(1e300, 2) was 0 * Inf = NaN, refused as "it is nan at step 2".
TEST(UsableRates, AZeroPeakTimesAnOverflowingPowerIsZero) {
  for (const char* spec : {"exponential(peak=0, gamma=1e300)", "step(peak=0, every=1, gamma=1e300)",
                           "multistep(peak=0, milestones=[1, 2, 3], gamma=1e300)"}) {
    const auto s = parse_schedule(spec, 10);
    EXPECT_EQ(refusal(s, 10), "") << spec;
    EXPECT_EQ(s(9), 0.0) << spec;
  }
}

}  // namespace
}  // namespace lrkit::schedules
