#include "store_verdict.hpp"

namespace lrkit::distributed {

namespace {

// A published verdict is never empty (an empty value could not be told from none): "-" where nothing is wrong, else
// "!" and the judge's line.
const std::string kNothingWrong = "-";
const char kSomethingWrong = '!';

std::vector<uint8_t> bytes(const std::string& text) { return {text.begin(), text.end()}; }
std::string text(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

}  // namespace

std::string store_verdict(c10d::Store& store, const std::string& topic, int rank, int world_size, const std::string& value,
                          const StoreJudge& judge) {
  const std::string prefix = "lrkit/" + topic + "/";
  store.set(prefix + std::to_string(rank), bytes(value));
  if (store.add(prefix + "arrived", 1) == world_size) {  // the last to arrive: every rank's value is in the store
    std::vector<std::string> values;
    values.reserve(static_cast<std::size_t>(world_size));
    for (int r = 0; r < world_size; ++r) values.push_back(text(store.get(prefix + std::to_string(r))));
    const std::string found = judge(values);
    store.set(prefix + "verdict", bytes(found.empty() ? kNothingWrong : kSomethingWrong + found));
  }
  const std::string verdict = text(store.get(prefix + "verdict"));
  return verdict == kNothingWrong ? "" : verdict.substr(1);
}

}  // namespace lrkit::distributed
