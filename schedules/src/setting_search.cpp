#include "setting_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "crossing_search.hpp"
#include "length_search.hpp"
#include "lrkit/schedules/factory.hpp"
#include "lrkit/schedules/series_match.hpp"
#include "lrkit/schedules/spec.hpp"

namespace lrkit::schedules::detail {

namespace {

// Values of a setting from its own / kLargestMistakenFactor to kLargestMistakenFactor times it.
constexpr double kFactor = static_cast<double>(kLargestMistakenFactor);

const FamilyInfo* family_named(const std::string& name) {
  static const std::vector<FamilyInfo> families = schedule_families();
  for (const FamilyInfo& f : families)
    if (f.name == name) return &f;
  return nullptr;
}

bool written_whole(const std::string& text) { return text.find_first_of(".eE%") == std::string::npos; }

void collect(const std::string& spec, const SpecCall& call, std::vector<SpecNumber>& out) {
  const FamilyInfo* family = family_named(call.name);
  size_t positional = 0;  // positional arguments that are no schedule, which name the family's keys in order
  std::vector<const SpecCall*> inner;
  for (const SpecArg& arg : call.args) {
    const SpecValue& v = arg.value;
    if (v.kind == SpecValue::Kind::Call) {
      inner.push_back(v.call.get());
      continue;
    }
    std::string name = arg.key;
    if (name.empty()) {
      name = family && positional < family->keys.size() ? family->keys[positional]
                                                         : call.name + " argument " + std::to_string(positional + 1);
      ++positional;
    }
    if (v.kind == SpecValue::Kind::Number) {
      out.push_back({name, v.position, v.text.size(), v.number, v.percent, written_whole(v.text)});
    } else if (v.kind == SpecValue::Kind::List && !v.items.empty() &&
               std::all_of(v.items.begin(), v.items.end(),
                           [](const SpecValue& item) { return item.kind == SpecValue::Kind::Number; })) {
      const SpecValue& last = v.items.back();
      const size_t close = spec.find(']', last.position + last.text.size());
      if (close == std::string::npos) continue;
      for (const SpecValue& item : v.items)
        out.push_back({name, item.position, item.text.size(), item.number, item.percent, written_whole(item.text),
                       v.position, close + 1 - v.position});
    }
  }
  for (const SpecCall* c : inner) collect(spec, *c, out);
}

// x > 0 to 4 significant digits, rounded up or down, so that a span's ends as printed lie within it.
double rounded_inward(double x, bool up) {
  const double unit = std::pow(10.0, std::floor(std::log10(x)) - 3);
  const double r = (up ? std::ceil(x / unit) : std::floor(x / unit)) * unit;
  return rounded(r, 4);
}

// From `value`, which fits, the farthest value towards `limit` up to which every value fits (the values that fit are
// taken to be a span): `limit` itself where it fits, else found by halving, to whole numbers where `whole`, else to
// 1e-4 of `value`.
template <class Fits>
double farthest_fitting(double value, double limit, bool whole, Fits fits) {
  if (fits(limit)) return limit;
  double good = value, bad = limit;
  while (whole ? std::fabs(bad - good) > 1.0 : std::fabs(bad - good) > 1e-4 * value) {
    double middle = good + (bad - good) / 2.0;
    if (whole) middle = good < bad ? std::floor(middle) : std::ceil(middle);
    if (middle == good || middle == bad) break;
    (fits(middle) ? good : bad) = middle;
  }
  return good;
}

}  // namespace

std::vector<SpecNumber> spec_numbers(const std::string& spec, int64_t total) {
  const SpecCall root = parse_spec(spec);
  std::vector<SpecNumber> out;
  collect(spec, root, out);
  if (out.size() > kMostSpecNumbers) out.resize(kMostSpecNumbers);
  for (SpecNumber& n : out) n.low = n.value / kFactor, n.high = n.value * kFactor;
  // Keys the outermost call leaves at their defaults that loops often set otherwise: a warmup, a floor (in percent of
  // the peak, and in the peak's units beside a peak written as a number).
  const FamilyInfo* family = family_named(root.name);
  const size_t close = spec.rfind(')');
  if (!family || close == std::string::npos) return out;
  const auto has = [&](const char* key) {
    return std::find(family->keys.begin(), family->keys.end(), key) != family->keys.end() &&
           std::none_of(out.begin(), out.end(), [&](const SpecNumber& n) { return n.name == key; });
  };
  const auto peak = std::find_if(out.begin(), out.end(), [](const SpecNumber& n) { return n.name == "peak"; });
  const double peak_value = peak != out.end() && !peak->percent ? peak->value : 0.0;
  if (has("warmup") && total > 1)
    out.push_back({"warmup", close, 0, 0.0, false, true, 0, 0, 1.0, static_cast<double>(total - 1)});
  if (has("floor")) {
    out.push_back({"floor", close, 0, 0.0, true, false, 0, 0, 1e-4, 100.0});
    if (peak_value > 0) out.push_back({"floor", close, 0, 0.0, false, false, 0, 0, 1e-6 * peak_value, peak_value});
  }
  return out;
}

std::string with_number(const std::string& spec, const SpecNumber& number, double value) {
  const std::string text = format_number(value) + (number.percent ? "%" : "");
  if (number.length == 0)
    return spec.substr(0, number.position) + ", " + number.name + "=" + text + spec.substr(number.position);
  return spec.substr(0, number.position) + text + spec.substr(number.position + number.length);
}

std::optional<SettingFound> setting_explaining(const Schedule& schedule, const std::vector<int64_t>& steps,
                                               const std::vector<double>& values, double tolerance,
                                               const std::vector<size_t>& probes) {
  if (!rebuildable_from_spec(schedule)) return std::nullopt;
  const std::string spec = schedule.to_spec();
  const int64_t total = schedule.total();
  const auto build = [&](const SpecNumber& number, double value) -> std::optional<Schedule> {
    try {
      return parse_schedule(with_number(spec, number, value), total);
    } catch (const SpecError&) {  // a value the setting cannot take
      return std::nullopt;
    }
  };
  const auto fits_every_row = [&](const std::optional<Schedule>& s) {
    return s && first_row_off(*s, steps, values, tolerance) == steps.size();
  };
  // The value of `number` that makes every row follow, where one does.
  const auto search = [&](const SpecNumber& number) -> std::optional<SettingFound> {
    const double low = number.low, high = number.high;
    if (!(low > 0) || !(high >= low)) return std::nullopt;  // a number <= 0, whose values are not looked for
    const auto written = [&](double x) { return format_number(x) + (number.percent ? "%" : ""); };
    // A list entry is shown in its list: [50, 130] for the second of milestones=[50, 120].
    const auto shown = [&](double x) {
      if (number.list_length == 0) return written(x);
      const std::string changed = with_number(spec, number, x);
      return changed.substr(number.list_position, number.list_length + written(x).size() - number.length);
    };
    // `value` fits every row: the span of values around it that fit too, and the plainest value of that span with
    // the spec it makes.
    const auto found = [&](double value) -> std::optional<SettingFound> {
      const bool whole = number.whole && value == std::round(value);
      const auto fits = [&](double x) { return fits_every_row(build(number, x)); };
      const double lowest = farthest_fitting(value, whole ? std::max(1.0, std::ceil(low)) : low, whole, fits);
      const double highest = farthest_fitting(value, high, whole, fits);
      double named = value;
      SettingFound result;
      result.number = number;
      if (number.length > 0)
        result.given = number.list_length > 0 ? spec.substr(number.list_position, number.list_length)
                                              : spec.substr(number.position, number.length);
      // A span narrower than 1e-3 of the value is the value, as written.
      if (whole ? lowest < highest : highest - lowest > 1e-3 * value) {
        const double first = whole ? lowest : std::min(value, rounded_inward(lowest, true));
        const double last = whole ? highest : std::max(value, rounded_inward(highest, false));
        named = plainest_between(first, last, value);
        result.lowest = written(first);
        result.highest = written(last);
        result.highest_is_last = highest == high;
      } else {
        result.lowest = result.highest = written(value);
      }
      // `value` fits (the caller checked); a plainer value of its span is checked once more.
      const auto followed = build(number, named);
      if (!followed || (named != value && !fits_every_row(followed))) return std::nullopt;
      result.value = shown(named);
      result.spec = followed->to_spec();
      return result;
    };
    std::vector<double> tried;
    for (const size_t row : probes) {
      const auto side = [&](double x) {
        const auto s = build(number, x);
        return side_of(s ? std::optional<double>((*s)(steps[row])) : std::nullopt, values[row], tolerance);
      };
      std::vector<double> candidates;
      for (const bool whole : {true, false}) {
        if (whole && !(number.whole && high >= 1)) continue;
        const auto crossing = values_crossing(side, whole ? std::max(1.0, std::ceil(low)) : low, high, whole, 8);
        candidates.insert(candidates.end(), crossing.begin(), crossing.end());
      }
      for (const double x : candidates) {
        if (x == number.value || std::find(tried.begin(), tried.end(), x) != tried.end()) continue;
        tried.push_back(x);
        // The plainest value that every row allows: fewest significant digits first.
        for (int digits = 1; digits <= 17; ++digits) {
          const double plain = rounded(x, digits);
          if (plain == number.value) continue;
          if (fits_every_row(build(number, plain))) {
            if (auto result = found(plain)) return result;
            break;
          }
          if (plain == x) break;
        }
      }
    }
    return std::nullopt;
  };
  const std::vector<SpecNumber> numbers = spec_numbers(spec, total);
  for (size_t i = 0; i < numbers.size(); ++i) {
    auto result = search(numbers[i]);
    if (!result) continue;
    // An inserted key's other forms (a floor in percent and in the peak's units): the plainer value is named.
    for (size_t j = i + 1; j < numbers.size() && numbers[i].length == 0; ++j) {
      if (numbers[j].name != numbers[i].name || numbers[j].length != 0) continue;
      if (auto other = search(numbers[j]); other && other->value.size() < result->value.size()) result = other;
    }
    return result;
  }
  return std::nullopt;
}

}  // namespace lrkit::schedules::detail
