#include "one_gpu_per_worker.hpp"

#include <map>

namespace lrkit::distributed {

namespace {

const std::string kPrefix = "lrkit/nccl_gpu/";
const std::string kNoneShared = "ok";  // a refusal reads "ranks ...", and a verdict is never an empty value

std::vector<uint8_t> bytes(const std::string& text) { return {text.begin(), text.end()}; }
std::string text(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

std::string listed(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += i + 1 == ranks.size() ? " and " : ", ";
    out += std::to_string(ranks[i]);
  }
  return out;
}

}  // namespace

std::string shared_gpu_refusal(const std::vector<std::string>& gpus) {
  std::map<std::string, std::vector<int>> ranks_on;
  for (std::size_t r = 0; r < gpus.size(); ++r) ranks_on[gpus[r]].push_back(static_cast<int>(r));
  const std::vector<int>* first = nullptr;  // the shared GPU whose lowest rank is lowest
  for (const auto& [gpu, ranks] : ranks_on)
    if (ranks.size() > 1 && (first == nullptr || ranks.front() < first->front())) first = &ranks;
  if (first == nullptr) return "";
  return "ranks " + listed(*first) + " train on one GPU (" + gpus[static_cast<std::size_t>(first->front())] +
         "): NCCL needs a GPU of its own per worker; give each worker one (srun --gpus-per-task=1, or no more "
         "workers per node than GPUs) or set dist.backend=gloo to share GPUs";
}

std::string shared_gpu_verdict(c10d::Store& store, int rank, int world_size, const std::string& gpu) {
  store.set(kPrefix + std::to_string(rank), bytes(gpu));
  if (store.add(kPrefix + "arrived", 1) == world_size) {  // the last to arrive: every rank's GPU is in the store
    std::vector<std::string> gpus;
    for (int r = 0; r < world_size; ++r) gpus.push_back(text(store.get(kPrefix + std::to_string(r))));
    const std::string refusal = shared_gpu_refusal(gpus);
    store.set(kPrefix + "verdict", bytes(refusal.empty() ? kNoneShared : refusal));
  }
  const std::string verdict = text(store.get(kPrefix + "verdict"));
  return verdict == kNoneShared ? "" : verdict;
}

}  // namespace lrkit::distributed
