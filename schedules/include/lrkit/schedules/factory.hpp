// Builds schedules from spec strings, the single way to make one:
//   parse_schedule("wsd(peak=3e-4, warmup=2%, decay=20%, shape=1-sqrt)", 10000)
// `total` is the run's number of updates T; families that need it and get
// neither it nor a total= key throw SpecError, as does every invalid spec, and
// so does a `total` that ends before the schedule's own last checkpoint (WSD-S).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lrkit/schedules/schedule.hpp"
#include "lrkit/schedules/spec_error.hpp"

namespace lrkit::schedules {

Schedule parse_schedule(const std::string& spec, std::optional<int64_t> total = std::nullopt);

// Checks the part of a spec that needs no values and no files: its syntax, and every call's family and keys
// (throws SpecError as parse_schedule does). For a spec that cannot be built yet, such as a refinement of a
// run log still to be written; parse_schedule checks everything once it can.
void check_spec_form(const std::string& spec);

struct FamilyInfo {
  std::string name;
  std::vector<std::string> keys;  // positional order
  bool takes_schedules;
  std::string description;
};
// Every family the spec grammar knows, for help texts and docs.
std::vector<FamilyInfo> schedule_families();

}  // namespace lrkit::schedules
