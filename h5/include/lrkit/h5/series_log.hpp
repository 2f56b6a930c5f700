// An append-only HDF5 log of numeric series for a running job: datasets are
// declared up front (HDF5 forbids creating objects once SWMR writing starts),
// rows are buffered in memory and written on flush(), the file is in SWMR
// mode so h5py/h5dump can read it live, and a process killed at any moment
// leaves a readable file holding every flushed row.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lrkit/h5/handle.hpp"

namespace lrkit::h5 {

class SeriesLog {
 public:
  struct Column {
    std::string path;   // e.g. "/train/loss"
    int64_t width = 1;    // values per row
    bool matrix = false;  // always [rows, width], even for width 1 (else width 1 is a 1-D series)
  };
  struct Attribute {
    std::string object, name, value;
  };

  // Creates (truncates) `path` with every dataset empty and extendible, writes
  // the string attributes (on groups created for them where no dataset made
  // one), then switches to SWMR writing.
  SeriesLog(const std::string& path, const std::vector<Column>& columns,
            const std::vector<Attribute>& attributes = std::vector<Attribute>());
  // Reopens an existing log to continue it (a resumed run): each series keeps
  // only its first `keep_rows[path]` rows (all when absent). A column the file
  // lacks (a series added after it was written) is created with keep_rows[path]
  // rows of NaN; without a keep_rows entry it is an error. `attributes` are written (replacing any of the same name) before
  // SWMR writing starts.
  struct Continue {
    std::map<std::string, int64_t> keep_rows;
    std::vector<Attribute> attributes;
  };
  SeriesLog(const std::string& path, const std::vector<Column>& columns, const Continue& how);
  SeriesLog(const SeriesLog&) = delete;
  SeriesLog& operator=(const SeriesLog&) = delete;
  ~SeriesLog();  // flushes; never throws

  // Buffers one row (width values) for `path`; throws Error for an undeclared
  // path or a row of the wrong width.
  void append(const std::string& path, const std::vector<double>& row);
  void append(const std::string& path, double value) { append(path, std::vector<double>{value}); }
  // Writes every buffered row and flushes the file to disk. A write the disk refuses throws WriteError, and the log
  // writes nothing more.
  void flush();
  const std::string& path() const { return path_; }

 private:
  struct Series {
    Handle dataset;
    int64_t width = 1;
    int rank = 1;  // dataset dimensions
    hsize_t rows_written = 0;
    std::vector<double> pending;
  };

  void create(const std::vector<Column>& columns, const std::vector<Attribute>& attributes);
  void open_to_continue(const std::vector<Column>& columns, const Continue& how);
  void start_swmr_writing();
  void close_quietly() noexcept;
  Series create_series(const Column& column);
  [[noreturn]] void fail(const std::string& what);
  void write_attributes(const std::vector<Attribute>& attributes);

  std::string path_;
  Handle file_;
  std::map<std::string, Series> series_;
  bool failed_ = false;  // a write or flush failed (a full disk): the file keeps what the last good flush wrote
};

}  // namespace lrkit::h5
