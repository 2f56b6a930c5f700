// Reads a numeric series (values, with optional steps) from an HDF5 dataset or
// a CSV/TSV text file: the input of table(...) and refined(...) schedules. A run
// directory stands for its log (DIR/log.h5).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace lrkit::schedules {

struct Series {
  std::vector<double> steps;  // 0, 1, 2, ... when the file has none
  std::vector<double> values;
};

class SeriesFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// HDF5 files: `values_name` and `steps_name` are dataset paths (steps are
// optional). Text files: comma- or tab-separated, '#' starts a comment; with a
// header row the columns are picked by name (the last component of the
// dataset path: /train/lr -> lr; a lone column is taken whatever its name),
// without one a single column is
// the values and two columns are step,value. Throws SeriesFileError naming the
// file, and the line for bad text.
Series read_series_file(const std::string& name, const std::string& values_name, const std::string& steps_name);

}  // namespace lrkit::schedules
