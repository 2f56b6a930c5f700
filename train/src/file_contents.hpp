// What the run's data files hold, so that a resume (and a sweep) can tell the corpus it trained on from another one
// behind the same name, and the workers of one job can tell their machines' copies apart. Reading every byte of a
// corpus of gigabytes at each start would cost seconds to minutes; a sample of fixed size costs one read per block.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lrkit/train/train_config.hpp"

namespace lrkit::train {

// "4452069 bytes, sampled crc32:0123abcd": the file's size and the crc32 of its size and of 64 blocks of 4 KiB
// spread evenly over it, the first and the last included (a file of up to 256 KiB: every byte). A corpus replaced
// by another, cut short, grown, regenerated or re-tokenized differs; an edit inside the unsampled bytes of a large
// file may not. Nothing where the file cannot be read.
std::optional<std::string> file_contents(const std::string& path);
// The same for an open file (a mapped corpus's: what the run reads, whatever its path names now).
std::optional<std::string> descriptor_contents(int fd);

// The files a run reads, each under the name a message gives it, with its path: "data.path" (one corpus), or
// "data.sources NAME" per source of a mixture, then "eval.sets NAME" per evaluation set with a file of its own. A
// file is listed once, under its first name.
std::vector<std::pair<std::string, std::string>> run_files_read(const TrainConfig& config);

}  // namespace lrkit::train
