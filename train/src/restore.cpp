#include "restore.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "lrkit/common/message_text.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/distributed/device_identity.hpp"
#include "lrkit/train/checkpoint.hpp"
#include "lrkit/train/trained_schedule.hpp"

namespace lrkit::train {

namespace {

// A resumed run goes on as the run it continues: every update it trained keeps its rate (trained_schedule.hpp).
// Resumed with another train.steps, a cosine run that had decayed to 0 jumped back to a quarter of its peak
// without a word.
void require_the_trained_schedule(const std::string& path, const CheckpointInfo& info, const TrainConfig& c) {
  const auto change = first_rate_change(path, info, c.schedule, c.train.steps);
  if (!change) return;
  const std::string rates = " gives other rates from update " + std::to_string(change->step) + " on (" +
                            format_number(change->then) + " then, " + format_number(change->now) +
                            " now), so the resumed run would not be the run it continues. ";
  const std::string branch = " on purpose in a new run directory: --branch-from " + path + " --out NEW_DIR";
  const std::string trained_steps = std::to_string(info.schedule_steps > 0 ? info.schedule_steps : c.train.steps);
  if (info.schedule_spec == c.schedule)
    throw std::invalid_argument("checkpoint '" + path + "' was trained for train.steps = " + trained_steps + "; with " +
                                std::to_string(c.train.steps) + " steps its schedule '" + c.schedule + "'" + rates +
                                "Resume with --train.steps=" + trained_steps + ", or continue under the schedule of " +
                                std::to_string(c.train.steps) + " steps" + branch);
  throw std::invalid_argument("checkpoint '" + path + "' was trained with schedule '" + info.schedule_spec +
                              "' (train.steps = " + trained_steps + "); the config's '" + c.schedule + "' with " +
                              std::to_string(c.train.steps) + " steps" + rates +
                              "Resume with the schedule it was trained with, or continue under the new one" + branch);
}

}  // namespace

Restored restore(const TrainConfig& c, std::vector<Replica>& replicas, distributed::HdetEnsemble* hdet, std::ostream& progress) {
  if (!c.init_from.empty()) {
    uint32_t crc32 = 0;
    for (auto& r : replicas) crc32 = load_checkpoint(c.init_from, r.model, nullptr).crc32;
    progress << "initialized weights from " << c.init_from << " (" << format_checksum(crc32) << ")" << std::endl;
    return {{"init", c.init_from, format_checksum(crc32), 0}, false, {}};
  }
  std::optional<std::string> path;
  if (!c.resume.empty()) {
    path = c.resume == "auto" ? latest_checkpoint(c.out) : std::optional<std::string>(c.resume);
    if (!path && c.branch_from.empty()) progress << "resume: no checkpoint in " << c.out << ", starting from step 0" << std::endl;
  }
  const bool branching = !path && !c.branch_from.empty();
  if (branching) path = c.branch_from;
  if (!path) return {};
  // Plain data parallel: every rank's weights and optimizer state are rank 0's. HDET: each replica has its file,
  // replica 0's the checkpoint itself.
  const auto file_of = [&](const Replica& r) { return r.index == 0 || !hdet ? *path : replica_checkpoint_path(*path, r.index); };
  // A replica whose file is the checkpoint loads it and reads its header in one pass (each open reads the file whole
  // for its CRC); the others load after the checks.
  const auto header_reader = std::find_if(replicas.begin(), replicas.end(), [&](const Replica& r) { return file_of(r) == *path; });
  const CheckpointInfo info = header_reader == replicas.end()
                                  ? read_checkpoint_info(*path)
                                  : load_checkpoint(*path, header_reader->model, header_reader->optimizer.get());
  if (!branching) require_the_trained_schedule(*path, info, c);  // a branch changes the schedule on purpose
  if (info.step >= c.train.steps)
    throw std::invalid_argument("checkpoint '" + *path + "' is at step " + std::to_string(info.step) +
                                ", not before train.steps = " + std::to_string(c.train.steps));
  if (hdet) {
    if (info.hdet.empty())
      throw std::invalid_argument("checkpoint '" + *path + "' holds no HDET state but hdet.enabled = true (use --init-from)");
    try {
      hdet->restore(info.hdet);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("checkpoint '" + *path + "': " + e.what());
    }
  } else if (!info.hdet.empty()) {
    throw std::invalid_argument("checkpoint '" + *path + "' is from an HDET run but hdet.enabled = false (use --init-from)");
  }
  for (auto r = replicas.begin(); r != replicas.end(); ++r)
    if (r != header_reader) load_checkpoint(file_of(*r), r->model, r->optimizer.get());
  progress << (branching ? "branched from " : "resumed from ") << *path << " at step " << info.step << " ("
           << format_checksum(info.crc32) << ")" << std::endl;
  if (!branching && info.schedule_spec != c.schedule)
    progress << "schedule: now '" << c.schedule << "', whose rates over the " << info.step << " updates trained are those of '"
             << info.schedule_spec << "' it was trained with" << std::endl;
  return {{branching ? "branch" : "resume", *path, format_checksum(info.crc32), info.step}, !branching, info.loop};
}

void require_one_start(const RunStart& start, distributed::Collective& collective) {
  if (collective.world_size() == 1) return;
  const std::string point = start.kind + " " + std::to_string(start.step) + " " + start.checksum;
  const auto starts = distributed::gather_rows(collective, {distributed::identity_hash(point), start.step});
  std::vector<std::string> differing, by_rank;
  for (size_t r = 0; r < starts.size(); ++r) {
    if (starts[r][0] != starts[0][0]) differing.push_back(std::to_string(r));
    by_rank.push_back(std::to_string(starts[r][1]));
  }
  if (differing.empty()) return;
  const std::string here = start.checkpoint.empty() ? start.kind + ", no checkpoint"
                                                    : start.kind + " from " + start.checkpoint + ", " + start.checksum;
  throw std::invalid_argument(
      "the workers start from different points: " + ranks_for_message(differing) +
      (differing.size() == 1 ? " differs" : " differ") + " from rank 0 (steps by rank: " + list_for_message(by_rank) + "; rank " +
      std::to_string(collective.rank()) + " here: step " + std::to_string(start.step) + ", " + here +
      "); every worker must read the same run directory and checkpoint: put --out (and any --resume, --branch-from or "
      "--init-from file) on a filesystem that every machine mounts");
}

}  // namespace lrkit::train
