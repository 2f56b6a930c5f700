#include "one_gpu_per_worker.hpp"

#include <map>

#include "store_verdict.hpp"

namespace lrkit::distributed {

namespace {

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
  // A UUID holds no line break: the first one ends it.
  return store_verdict(store, "nccl_gpu", rank, world_size, gpu.uuid + "\n" + gpu.where, [](const std::vector<std::string>& values) {
    std::vector<PhysicalGpu> gpus;
    for (const std::string& value : values) {
      const auto cut = value.find('\n');
      gpus.push_back({value.substr(0, cut), value.substr(cut + 1)});
    }
    return shared_gpu_refusal(gpus);
  });
}

}  // namespace lrkit::distributed
