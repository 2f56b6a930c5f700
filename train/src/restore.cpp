#include "restore.hpp"

#include <optional>
#include <stdexcept>
#include <string>

#include "lrkit/train/checkpoint.hpp"

namespace lrkit::train {

Restored restore(const TrainConfig& c, std::vector<Replica>& replicas, distributed::HdetEnsemble* hdet, std::ostream& progress) {
  if (!c.init_from.empty()) {
    uint32_t crc32 = 0;
    for (auto& r : replicas) crc32 = load_checkpoint(c.init_from, r.model, nullptr).crc32;
    progress << "initialized weights from " << c.init_from << " (" << format_checksum(crc32) << ")" << std::endl;
    return {{"init", c.init_from, format_checksum(crc32), 0}, false};
  }
  std::optional<std::string> path;
  if (!c.resume.empty()) {
    path = c.resume == "auto" ? latest_checkpoint(c.out) : std::optional<std::string>(c.resume);
    if (!path && c.branch_from.empty()) progress << "resume: no checkpoint in " << c.out << ", starting from step 0" << std::endl;
  }
  const bool branching = !path && !c.branch_from.empty();
  if (branching) path = c.branch_from;
  if (!path) return {};
  const CheckpointInfo info = read_checkpoint_info(*path);
  // A branch changes the schedule on purpose; a resumed run must not.
  if (!branching && info.schedule_spec != c.schedule)
    throw std::invalid_argument("checkpoint '" + *path + "' was trained with schedule '" + info.schedule_spec +
                                "' but the config says '" + c.schedule + "'");
  if (info.step >= c.train.steps)
    throw std::invalid_argument("checkpoint '" + *path + "' is at step " + std::to_string(info.step) +
                                ", not before train.steps = " + std::to_string(c.train.steps));
  if (hdet) {
    if (info.hdet.empty())
      throw std::invalid_argument("checkpoint '" + *path + "' holds no HDET state but hdet.enabled = true (use --init-from)");
    hdet->restore(info.hdet);
  } else if (!info.hdet.empty()) {
    throw std::invalid_argument("checkpoint '" + *path + "' is from an HDET run but hdet.enabled = false (use --init-from)");
  }
  // Plain data parallel: every rank's weights and optimizer state equal rank 0's. HDET: each replica has its file.
  for (auto& r : replicas)
    load_checkpoint(r.index == 0 || !hdet ? *path : replica_checkpoint_path(*path, r.index), r.model, r.optimizer.get());
  progress << (branching ? "branched from " : "resumed from ") << *path << " at step " << info.step << " ("
           << format_checksum(info.crc32) << ")" << std::endl;
  return {{branching ? "branch" : "resume", *path, format_checksum(info.crc32), info.step}, !branching, info.skipped_in_a_row};
}

}  // namespace lrkit::train
