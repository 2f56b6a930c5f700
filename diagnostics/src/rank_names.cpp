#include "rank_names.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace lrkit::diagnostics {

namespace {

// The number a name ends in (before any text without digits), and the text around it, where it has one.
struct NameNumber {
  std::string before, after;
  uint64_t number = 0;
  bool found = false;
};

NameNumber number_in(const std::string& name) {
  NameNumber n;
  size_t end = name.size();
  while (end > 0 && !std::isdigit(static_cast<unsigned char>(name[end - 1]))) --end;
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(name[begin - 1]))) --begin;
  if (begin == end || end - begin > 5) return n;
  n.before = name.substr(0, begin);
  n.after = name.substr(end);
  n.number = std::stoull(name.substr(begin, end - begin));
  n.found = true;
  return n;
}

}  // namespace

std::optional<std::vector<int64_t>> ranks_from_names(const std::vector<std::string>& names, const std::string& what,
                                                     std::vector<std::string>& warnings) {
  const size_t count = names.size();
  std::vector<NameNumber> numbers;
  for (const std::string& name : names) numbers.push_back(number_in(name));
  const bool named = std::all_of(numbers.begin(), numbers.end(), [&](const NameNumber& n) {
    return n.found && n.before == numbers.front().before && n.after == numbers.front().after;
  });
  std::set<uint64_t> distinct;
  for (const NameNumber& n : numbers) distinct.insert(n.number);
  if (!named || distinct.size() != count) return std::nullopt;
  const std::vector<uint64_t> sorted(distinct.begin(), distinct.end());
  std::vector<int64_t> ranks(count);
  for (size_t r = 0; r < count; ++r)
    ranks[r] = std::lower_bound(sorted.begin(), sorted.end(), numbers[r].number) - sorted.begin();
  if (sorted.front() != 0 || sorted.back() != count - 1) {
    std::string mapping;
    for (size_t k = 0; k < count && k < 8; ++k)
      mapping += (k ? ", rank " : "rank ") + std::to_string(k) + " = " + numbers.front().before +
                 std::to_string(sorted[k]) + numbers.front().after;
    warnings.push_back(what + " number them " + std::to_string(sorted.front()) + " to " +
                       std::to_string(sorted.back()) + ": ranked in that order, " + mapping +
                       (count > 8 ? ", ..." : ""));
  }
  return ranks;
}

}  // namespace lrkit::diagnostics
