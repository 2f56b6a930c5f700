#include "lrkit/h5/series_log.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <limits>

#include "lrkit/h5/file.hpp"

namespace lrkit::h5 {

namespace {

// Rows per chunk: 256, fewer for a wide series so that a chunk stays near 1 MiB. HDF5 writes a chunk whole: a run of
// 1,024 workers wrote 2 GiB for the first row of its pairwise cosines (1024^2 columns), one of 1,500 could not create
// that series (a chunk holds at most 4 GiB), and 10^5 histogram bins made a 4-step run's log 205 MB.
hsize_t chunk_rows(int64_t width) {
  constexpr hsize_t kMostRows = 256;
  constexpr hsize_t kTargetBytes = hsize_t{1} << 20;
  const hsize_t row_bytes = static_cast<hsize_t>(width) * sizeof(double);
  return std::clamp<hsize_t>(kTargetBytes / row_bytes, 1, kMostRows);
}

}  // namespace

SeriesLog::SeriesLog(const std::string& path, const std::vector<Column>& columns,
                     const std::vector<Attribute>& attributes)
    : path_(path) {
  try {
    create(columns, attributes);
  } catch (...) {
    close_quietly();
    throw;
  }
}

void SeriesLog::create(const std::vector<Column>& columns, const std::vector<Attribute>& attributes) {
  QuietErrors quiet;
  Handle fapl = plist_handle(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate failed");
  H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);  // required for SWMR
  file_ = created_file(path_, fapl.get(), "cannot create run log");
  for (const Column& column : columns) series_.emplace(column.path, create_series(column));
  write_attributes(attributes);
  start_swmr_writing();
}

// Starting SWMR writes out everything created so far: the first write that a full disk can refuse.
void SeriesLog::start_swmr_writing() {
  errno = 0;
  if (H5Fstart_swmr_write(file_.get()) >= 0) return;
  const int reason = errno;
  if (reason != 0) throw WriteError("cannot start SWMR writing on run log '" + path_ + "': " + write_failure_reason(reason));
  throw Error("cannot start SWMR writing on run log '" + path_ + "'");
}

// Handles left by a failed write or constructor: closing them writes again and fails the same way, so quietly.
void SeriesLog::close_quietly() noexcept {
  QuietErrors quiet;
  series_.clear();
  file_.reset();
}

SeriesLog::Series SeriesLog::create_series(const Column& column) {
  if (column.width < 1) throw Error("run log column '" + column.path + "' needs width >= 1");
  Handle lcpl = plist_handle(H5Pcreate(H5P_LINK_CREATE), "H5Pcreate failed");
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  const int rank = column.width == 1 && !column.matrix ? 1 : 2;
  const std::array<hsize_t, 2> dims = {0, static_cast<hsize_t>(column.width)};
  const std::array<hsize_t, 2> max_dims = {H5S_UNLIMITED, static_cast<hsize_t>(column.width)};
  const std::array<hsize_t, 2> chunk = {chunk_rows(column.width), static_cast<hsize_t>(column.width)};
  Handle space = dataspace_handle(H5Screate_simple(rank, dims.data(), max_dims.data()), "H5Screate_simple failed");
  Handle dcpl = plist_handle(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate failed");
  H5Pset_chunk(dcpl.get(), rank, chunk.data());
  Series s;
  s.width = column.width;
  s.rank = rank;
  s.dataset = dataset_handle(H5Dcreate2(file_.get(), column.path.c_str(), H5T_NATIVE_DOUBLE, space.get(), lcpl.get(),
                                        dcpl.get(), H5P_DEFAULT),
                             "cannot create dataset '" + column.path + "' in run log '" + path_ + "'");
  return s;
}

void SeriesLog::write_attributes(const std::vector<Attribute>& attributes) {
  Handle lcpl = plist_handle(H5Pcreate(H5P_LINK_CREATE), "H5Pcreate failed");
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  for (const Attribute& a : attributes) {
    if (H5Lexists(file_.get(), a.object.c_str(), H5P_DEFAULT) <= 0 && a.object != "/") {  // a group of attributes only
      Handle group(H5Gcreate2(file_.get(), a.object.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
      if (!group) throw Error("cannot create group '" + a.object + "' in run log '" + path_ + "'");
    }
    Handle obj(H5Oopen(file_.get(), a.object.c_str(), H5P_DEFAULT), H5Oclose);
    if (!obj) throw Error("run log '" + path_ + "' has no object '" + a.object + "' for attribute '" + a.name + "'");
    write_string_attribute(obj.get(), a.name, a.value, "run log '" + path_ + "' (" + a.object + ")");
  }
}

SeriesLog::SeriesLog(const std::string& path, const std::vector<Column>& columns, const Continue& how)
    : path_(path) {
  try {
    open_to_continue(columns, how);
  } catch (...) {
    close_quietly();
    throw;
  }
}

void SeriesLog::open_to_continue(const std::vector<Column>& columns, const Continue& how) {
  const std::string& path = path_;
  const auto& keep_rows = how.keep_rows;
  QuietErrors quiet;
  if (H5Fis_hdf5(path.c_str()) <= 0) throw Error("cannot continue run log '" + path + "': missing or not HDF5");
  Handle fapl = plist_handle(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate failed");
  H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  hid_t opened = H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get());
  if (opened < 0) {
    // A killed SWMR writer leaves the superblock marked "open for writing". Clear the mark as
    // h5clear -s does (the rows it flushed are consistent); a live writer still holds the OS
    // file lock, so this cannot take a file from a running process.
    hbool_t clear = true;
    if (H5Pexist(fapl.get(), "clear_status_flags") > 0 && H5Pset(fapl.get(), "clear_status_flags", &clear) >= 0)
      opened = H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get());
  }
  file_ = file_handle(opened, "cannot open run log '" + path + "' for writing (is another run writing it?)");
  for (const Column& column : columns) {
    const auto keep = keep_rows.find(column.path);
    if (H5Lexists(file_.get(), column.path.c_str(), H5P_DEFAULT) <= 0) {
      // A series this version logs and the log's writer did not: its kept rows read NaN (not measured).
      if (keep == keep_rows.end()) throw Error("run log '" + path + "' has no dataset '" + column.path + "' to continue");
      Series s = create_series(column);
      s.pending.assign(static_cast<size_t>(keep->second * column.width), std::numeric_limits<double>::quiet_NaN());
      series_.emplace(column.path, std::move(s));
      continue;
    }
    Series s;
    s.width = column.width;
    s.rank = column.width == 1 && !column.matrix ? 1 : 2;
    s.dataset = dataset_handle(H5Dopen2(file_.get(), column.path.c_str(), H5P_DEFAULT),
                               "cannot open '" + column.path + "' in run log '" + path + "'");
    Handle space = dataspace_handle(H5Dget_space(s.dataset.get()), "H5Dget_space failed");
    std::array<hsize_t, 2> dims = {0, static_cast<hsize_t>(column.width)};
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    if (keep != keep_rows.end() && static_cast<hsize_t>(keep->second) < dims[0]) {
      dims[0] = static_cast<hsize_t>(keep->second);
      if (H5Dset_extent(s.dataset.get(), dims.data()) < 0)
        throw Error("cannot truncate '" + column.path + "' in run log '" + path + "'");
    }
    s.rows_written = dims[0];
    series_.emplace(column.path, std::move(s));
  }
  write_attributes(how.attributes);
  start_swmr_writing();
}

SeriesLog::~SeriesLog() {
  if (failed_) {  // closing tries to write the cached rows once more, and fails as the flush did
    close_quietly();
    return;
  }
  try {
    flush();
  } catch (...) {
    // a destructor must not throw; the rows flushed before stay readable
  }
}

void SeriesLog::append(const std::string& path, const std::vector<double>& row) {
  const auto it = series_.find(path);
  if (it == series_.end()) throw Error("run log '" + path_ + "' has no series '" + path + "'");
  if (static_cast<int64_t>(row.size()) != it->second.width)
    throw Error("run log series '" + path + "' takes rows of " + std::to_string(it->second.width) + " values, got " +
                std::to_string(row.size()));
  it->second.pending.insert(it->second.pending.end(), row.begin(), row.end());
}

void SeriesLog::flush() {
  if (failed_) throw Error("run log '" + path_ + "' failed to write earlier; nothing more is written to it");
  QuietErrors quiet;
  for (auto& [name, s] : series_) {
    if (s.pending.empty()) continue;
    const auto width = static_cast<hsize_t>(s.width);
    const hsize_t rows = s.pending.size() / width;
    const int rank = s.rank;
    const std::array<hsize_t, 2> new_dims = {s.rows_written + rows, width};
    if (H5Dset_extent(s.dataset.get(), new_dims.data()) < 0)
      throw Error("cannot extend '" + name + "' in run log '" + path_ + "'");
    Handle file_space = dataspace_handle(H5Dget_space(s.dataset.get()), "H5Dget_space failed");
    const std::array<hsize_t, 2> start = {s.rows_written, 0};
    const std::array<hsize_t, 2> count = {rows, width};
    H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
    Handle mem_space = dataspace_handle(H5Screate_simple(rank, count.data(), nullptr), "H5Screate_simple failed");
    errno = 0;
    if (H5Dwrite(s.dataset.get(), H5T_NATIVE_DOUBLE, mem_space.get(), file_space.get(), H5P_DEFAULT,
                 s.pending.data()) < 0 ||
        H5Dflush(s.dataset.get()) < 0)
      fail("cannot write '" + name + "'");
    s.rows_written += rows;
    s.pending.clear();
  }
  errno = 0;
  if (H5Fflush(file_.get(), H5F_SCOPE_GLOBAL) < 0) fail("cannot flush");
}

// The chunk cache takes the rows; the disk refuses them only at the flush, so a flush that fails is a write that
// failed. Nothing is written after it: the file holds what the last good flush wrote.
void SeriesLog::fail(const std::string& what) {
  const int reason = errno;
  failed_ = true;
  throw WriteError(what + " in run log '" + path_ + "': " + write_failure_reason(reason) +
                   " (the rows of the last flush before it are kept)");
}

}  // namespace lrkit::h5
