// TensorBoard event files (events.out.tfevents.*, what PyTorch's SummaryWriter, Hugging Face's Trainer and Lightning's
// default logger write): the scalar series of one tag, as TensorBoard shows it.
#pragma once

#include <string>
#include <vector>

#include "lrkit/schedules/series_file.hpp"

namespace lrkit::schedules {

// Whether the file is an event file: it begins with a whole TFRecord header, whatever its name.
bool is_tfevents_file(const std::string& path);

// The event files directly in `directory`, sorted by name, which sorts a writer's files by the time in their names,
// as TensorBoard reads them: every events.out.tfevents.* file, and other names holding "tfevents" whose content is
// an event file's.
std::vector<std::string> tfevents_files_in(const std::string& directory);

// The subdirectories of `directory` that hold event files (TensorBoard's runs below a log directory), sorted.
std::vector<std::string> tfevents_runs_below(const std::string& directory);

// The series of scalar tag `tag` in `files`, read in order. A scalar is a Summary value's simple_value, or a tensor
// of one float32 or float64 (float_val, double_val or tensor_content). Rows a resumed session wrote again replace
// the earlier ones, as TensorBoard purges them:
// - a row of the tag at a step no later than the tag's last row drops the tag's rows from that step on;
// - a SessionLog START event at step s (SummaryWriter(purge_step=s)) drops every tag's rows from s on.
// (TensorBoard keeps two rows at one step where the step does not go back; here the later replaces the earlier, so
// the steps increase strictly.) Series::replaced counts the rows dropped. A file that ends inside a record (its
// writer killed, or still writing) ends there. Throws SeriesFileError naming the file: a damaged record or event (with
// its byte offset), a tag that is not scalar (with its step), or no such tag (listing the scalar tags there are).
Series read_tfevents_series(const std::vector<std::string>& files, const std::string& tag);

}  // namespace lrkit::schedules
