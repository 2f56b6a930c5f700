// A series from JSON: a Hugging Face Trainer's trainer_state.json (the rows of its log_history that hold the column,
// at their steps; its max_steps is the run's length), JSON lines (an object per row, as a custom loop logs them) or
// an array of records (pandas' to_json(orient="records")). Rows without the column are other metrics' (evaluations,
// the closing summary) and are passed over. series_file.cpp reads a file as JSON where its first character, blanks
// aside, is '{' or '['.
#pragma once

#include <string>

#include "lrkit/schedules/series_file.hpp"

namespace lrkit::schedules {

// Throws SeriesFileError naming the file and the line (and column, or log_history's entry) of what is wrong.
Series read_json_series(const std::string& path, const std::string& values_name, const std::string& steps_name);

}  // namespace lrkit::schedules
