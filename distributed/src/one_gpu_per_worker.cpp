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

std::string shared_gpu_refusal(const std::vector<PhysicalGpu>& gpus) {
  std::map<std::string, std::vector<int>> ranks_on;  // by UUID
  for (std::size_t r = 0; r < gpus.size(); ++r) ranks_on[gpus[r].uuid].push_back(static_cast<int>(r));
  const std::vector<int>* first = nullptr;  // the shared GPU whose lowest rank is lowest
  for (const auto& [uuid, ranks] : ranks_on)
    if (ranks.size() > 1 && (first == nullptr || ranks.front() < first->front())) first = &ranks;
  if (first == nullptr) return "";
  return "ranks " + listed(*first) + " train on one GPU (" + gpus[static_cast<std::size_t>(first->front())].where +
         "): NCCL needs a GPU of its own per worker; give each worker one (srun --gpus-per-task=1, or no more "
         "workers per node than GPUs) or set dist.backend=gloo to share GPUs";
}

std::string shared_gpu_verdict(c10d::Store& store, int rank, int world_size, const PhysicalGpu& gpu) {
  store.set(kPrefix + std::to_string(rank) + "/uuid", bytes(gpu.uuid));
  store.set(kPrefix + std::to_string(rank) + "/where", bytes(gpu.where));
  if (store.add(kPrefix + "arrived", 1) == world_size) {  // the last to arrive: every rank's GPU is in the store
    std::vector<PhysicalGpu> gpus;
    for (int r = 0; r < world_size; ++r)
      gpus.push_back({text(store.get(kPrefix + std::to_string(r) + "/uuid")), text(store.get(kPrefix + std::to_string(r) + "/where"))});
    const std::string refusal = shared_gpu_refusal(gpus);
    store.set(kPrefix + "verdict", bytes(refusal.empty() ? kNoneShared : refusal));
  }
  const std::string verdict = text(store.get(kPrefix + "verdict"));
  return verdict == kNoneShared ? "" : verdict;
}

}  // namespace lrkit::distributed
