// Whole-dataset reads and writes of 1-D numeric series and string/number
// attributes: what schedule tables, norm histories and summaries need.
// The streaming run log (chunked, SWMR) builds on the same handles.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lrkit/h5/handle.hpp"

namespace lrkit::h5 {

// Writes (replaces) a fixed-length UTF-8 string attribute on an open object
// (the run log's: kept in the checksummed object header, so damage is an
// error when read, never a crash); `where` names the file and object in the error.
void write_string_attribute(hid_t object, const std::string& name, const std::string& value, const std::string& where);

// True when `path` exists and carries the HDF5 signature.
bool is_hdf5_file(const std::string& path);

// True when the HDF5 file at `path` holds an object at `dataset`.
bool has_dataset(const std::string& path, const std::string& dataset);

// Reads a 1-D numeric dataset of any integer or float type as doubles.
// Throws Error naming the file and dataset when either is missing, when the
// dataset is not 1-D or not numeric.
std::vector<double> read_series(const std::string& path, const std::string& dataset);

// A writer killed in SWMR mode leaves the superblock marked "open for
// writing": SWMR readers (h5py with swmr=True, lrkit) still open the file,
// other HDF5 tools refuse it until the mark is cleared (as `h5clear -s` does).
bool has_writer_mark(const std::string& path);
// Clears the mark. Only for a file no process writes (the caller checks).
void clear_writer_mark(const std::string& path);
// How many bytes the file ends before the end its superblock records as allocated (0 when it does not, or when the
// superblock is not the version 2/3 that the run log writes). A write refused by a full disk or a file size limit
// leaves that gap, and HDF5 refuses such a file as truncated.
uint64_t bytes_short_of_allocated_end(const std::string& path);
// Extends the file with zeros to that end, so HDF5 opens it again: what the refused writes held reads as zeros, past
// the last flush that reached the disk (its metadata was written after its data). Only for a file no process writes.
void extend_to_allocated_end(const std::string& path);
// Shrinks each named extendible dataset to its first `rows[dataset]` rows (a
// series' torn tail). Only for an unmarked file no process writes.
void truncate_rows(const std::string& path, const std::map<std::string, int64_t>& rows);

// Every dataset in the file with its shape, in visiting order.
struct DatasetShape {
  std::string path;
  std::vector<int64_t> dims;
};
std::vector<DatasetShape> list_datasets(const std::string& path);

// Every string attribute of `object` ("/" or a group/dataset path), by name.
// Throws Error naming the file and object when either is missing.
std::map<std::string, std::string> read_string_attributes(const std::string& path, const std::string& object);

// The string attributes of the numbered groups GROUP/0, GROUP/1, ... up to the first that is missing (a run log's
// /sessions), in their order; none where GROUP/0 is missing.
std::vector<std::map<std::string, std::string>> read_numbered_attributes(const std::string& path, const std::string& group);

// A 2-D numeric dataset ([step, rank] and the like), row-major.
struct Matrix {
  int64_t rows = 0, columns = 0;
  std::vector<double> values;
  double at(int64_t row, int64_t column) const { return values[static_cast<size_t>(row * columns + column)]; }
};
Matrix read_matrix(const std::string& path, const std::string& dataset);

// A file created (truncated) for writing; intermediate groups are created on
// demand, so write_series("/a/b/c", ...) just works. A write the disk refuses
// throws WriteError with the reason; close() is where the last of it reaches
// the disk, and the destructor closes quietly what close() did not.
class Writer {
 public:
  explicit Writer(const std::string& path);
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer();

  void write_series(const std::string& dataset, const std::vector<double>& values);
  void write_series(const std::string& dataset, const std::vector<int64_t>& values);
  // `object` is "/" or an existing group/dataset path.
  // Strings are variable-length UTF-8 (h5py reads them as str: summaries and tables meant for
  // pandas); a vector is a 1-D array of them.
  void set_attribute(const std::string& object, const std::string& name, const std::string& value);
  void set_attribute(const std::string& object, const std::string& name, const std::vector<std::string>& values);
  void set_attribute(const std::string& object, const std::string& name, double value);
  void set_attribute(const std::string& object, const std::string& name, int64_t value);
  // Writes what HDF5 holds back and closes the file; nothing is written after it.
  void close();

 private:
  void write_raw(const std::string& dataset, hid_t mem_type, const void* data, hsize_t n);
  Handle open_object(const std::string& object);
  void set_attribute_raw(const std::string& object, const std::string& name, hid_t type,
                         const void* data);

  std::string path_;
  Handle file_;
};

// Writes `path` whole or not at all: `fill` writes into a Writer on a file of its own beside it (".NAME.PID-N.tmp",
// lrkit/common/output_file.hpp's reserve_temporary_beside), which is closed and renamed over `path`. On any failure
// (a full disk, an exception of `fill`) the temporary file is removed and `path` stays as it was, so a reader of
// `path` never finds half a file. A link at `path` stays: the file it names is the one written (through_links).
void write_file_atomically(const std::string& path, const std::function<void(Writer&)>& fill);

}  // namespace lrkit::h5
