#include "one_gpu_per_worker.hpp"

#include <map>

#include "lrkit/common/message_text.hpp"
#include "store_verdict.hpp"

namespace lrkit::distributed {

std::string shared_gpu_refusal(const std::vector<PhysicalGpu>& gpus) {
  std::map<std::string, std::vector<std::size_t>> ranks_on;  // by UUID
  for (std::size_t r = 0; r < gpus.size(); ++r) ranks_on[gpus[r].uuid].push_back(r);
  const std::vector<std::size_t>* first = nullptr;  // the shared GPU whose lowest rank is lowest
  for (const auto& [uuid, ranks] : ranks_on)
    if (ranks.size() > 1 && (first == nullptr || ranks.front() < first->front())) first = &ranks;
  if (first == nullptr) return "";
  std::vector<std::string> names;
  for (const std::size_t r : *first) names.push_back(std::to_string(r));
  return ranks_for_message(names) + " train on one GPU (" + gpus[first->front()].where +
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
