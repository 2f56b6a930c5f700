// The scalar series of one tag of TensorBoard event files (lrkit/common/tfevents.hpp), as TensorBoard shows it.
#pragma once

#include <string>
#include <vector>

#include "lrkit/schedules/series_file.hpp"

namespace lrkit::schedules {

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
