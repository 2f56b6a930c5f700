#include "lrkit/h5/file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <fstream>
#include <vector>

#include "lrkit/common/file_status.hpp"
#include "lrkit/common/output_file.hpp"

namespace lrkit::h5 {

namespace {

std::string where(const std::string& path, const std::string& object) {
  return "'" + path + "' (" + object + ")";
}

}  // namespace

namespace {

// Variable-length UTF-8: h5py reads these as str (fixed-length strings come back as bytes).
void write_variable_strings(hid_t object, const std::string& name, const std::vector<std::string>& values, bool scalar,
                            const std::string& where) {
  QuietErrors quiet;
  if (H5Aexists(object, name.c_str()) > 0) H5Adelete(object, name.c_str());
  Handle type = datatype_handle(H5Tcopy(H5T_C_S1), "H5Tcopy failed");
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  const hsize_t count = values.size();
  Handle space = dataspace_handle(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr), "H5Screate failed");
  Handle attr = attribute_handle(H5Acreate2(object, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                                 "cannot create attribute '" + name + "' on " + where);
  std::vector<const char*> pointers;
  for (const auto& v : values) pointers.push_back(v.c_str());
  if (H5Awrite(attr.get(), type.get(), pointers.data()) < 0) throw Error("cannot write attribute '" + name + "' on " + where);
}

}  // namespace

namespace {

// A SWMR reader retries a metadata read whose checksum fails (a writer may be
// mid-flush) 100 times by default, backing off each time: on a damaged file
// that is minutes of waiting. A few attempts still ride out a live writer.
constexpr unsigned kMetadataReadAttempts = 5;

hid_t open_swmr_reader(const std::string& path) {
  Handle fapl = plist_handle(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate failed");
  H5Pset_metadata_read_attempts(fapl.get(), kMetadataReadAttempts);
  return H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl.get());
}

}  // namespace

// Fixed-length: the text lives in the object header, which carries a checksum, so a damaged
// run log is an error when read; variable-length strings live in the global heap, which has
// none, and HDF5 1.10 reads a damaged heap length unchecked (a crash, found by the CLI fuzz run).
void write_string_attribute(hid_t object, const std::string& name, const std::string& value, const std::string& where) {
  QuietErrors quiet;
  if (H5Aexists(object, name.c_str()) > 0) H5Adelete(object, name.c_str());
  Handle type = datatype_handle(H5Tcopy(H5T_C_S1), "H5Tcopy failed");
  H5Tset_size(type.get(), value.empty() ? 1 : value.size());
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  Handle space = dataspace_handle(H5Screate(H5S_SCALAR), "H5Screate failed");
  Handle attr = attribute_handle(H5Acreate2(object, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                                 "cannot create attribute '" + name + "' on " + where);
  if (H5Awrite(attr.get(), type.get(), value.c_str()) < 0) throw Error("cannot write attribute '" + name + "' on " + where);
}

namespace {
// A file with HDF5's signature that HDF5 cannot open: most often a log cut short by a full disk or a copy.
std::string cannot_open(const std::string& path) { return "cannot open HDF5 file '" + path + "' (damaged or truncated?)"; }
}  // namespace

bool is_hdf5_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  QuietErrors quiet;
  return H5Fis_hdf5(path.c_str()) > 0;
}

namespace {

// Superblock versions 2 and 3 at the file's start: signature (8 bytes), version, size of offsets, size of lengths,
// flags, then the base address, the superblock extension's address and the end-of-file address, 8 bytes each.
constexpr char kSignature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
constexpr size_t kEndOfFileAddressAt = 28;

uint64_t little_endian(const unsigned char* bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = value << 8 | bytes[i];
  return value;
}

}  // namespace

uint64_t bytes_short_of_allocated_end(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char head[kEndOfFileAddressAt + 8] = {};
  if (!in.read(reinterpret_cast<char*>(head), sizeof head)) return 0;
  if (!std::equal(std::begin(kSignature), std::end(kSignature), reinterpret_cast<const char*>(head))) return 0;
  if ((head[8] != 2 && head[8] != 3) || head[9] != 8) return 0;
  const uint64_t allocated_end = little_endian(head + 12) + little_endian(head + kEndOfFileAddressAt);
  const auto size = file_size_of(path);
  if (!size || allocated_end <= *size) return 0;
  return allocated_end - *size;
}

void extend_to_allocated_end(const std::string& path) {
  const uint64_t missing = bytes_short_of_allocated_end(path);
  if (missing == 0) return;
  const auto size = file_size_of(path);
  if (!size || ::truncate(path.c_str(), static_cast<off_t>(*size + missing)) != 0)
    throw Error("cannot extend '" + path + "' to its allocated end: " + std::strerror(errno));
}

bool has_dataset(const std::string& path, const std::string& dataset) {
  QuietErrors quiet;
  if (!is_hdf5_file(path)) return false;
  Handle file = file_handle(open_swmr_reader(path),
                            cannot_open(path));
  return H5Lexists(file.get(), dataset.c_str(), H5P_DEFAULT) > 0;
}

bool has_writer_mark(const std::string& path) {
  QuietErrors quiet;
  if (!is_hdf5_file(path)) throw Error("'" + path + "' is not an HDF5 file (or is truncated)");
  const hid_t plain = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (plain >= 0) {
    H5Fclose(plain);
    return false;
  }
  Handle swmr = file_handle(open_swmr_reader(path),
                            "cannot open HDF5 file '" + path + "' even for SWMR reading");
  return true;
}

void clear_writer_mark(const std::string& path) {
  QuietErrors quiet;
  Handle fapl = plist_handle(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate failed");
  H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  hbool_t clear = true;
  if (H5Pexist(fapl.get(), "clear_status_flags") <= 0 || H5Pset(fapl.get(), "clear_status_flags", &clear) < 0)
    throw Error("this HDF5 library cannot clear a writer's mark (use h5clear -s '" + path + "')");
  Handle file = file_handle(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get()), "cannot open '" + path + "' to clear its writer's mark");
}

void truncate_rows(const std::string& path, const std::map<std::string, int64_t>& rows) {
  QuietErrors quiet;
  Handle file = file_handle(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), "cannot open '" + path + "' for writing");
  for (const auto& [dataset, keep] : rows) {
    Handle d = dataset_handle(H5Dopen2(file.get(), dataset.c_str(), H5P_DEFAULT), "cannot open " + where(path, dataset));
    Handle space = dataspace_handle(H5Dget_space(d.get()), "H5Dget_space failed");
    const int rank = H5Sget_simple_extent_ndims(space.get());
    std::vector<hsize_t> dims(static_cast<size_t>(std::max(rank, 0)));
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    if (dims.empty() || keep < 0 || static_cast<hsize_t>(keep) > dims[0])
      throw Error("cannot keep " + std::to_string(keep) + " rows of " + where(path, dataset));
    dims[0] = static_cast<hsize_t>(keep);
    if (H5Dset_extent(d.get(), dims.data()) < 0) throw Error("cannot shrink " + where(path, dataset));
  }
  if (H5Fflush(file.get(), H5F_SCOPE_GLOBAL) < 0) throw Error("cannot flush '" + path + "'");
}

std::vector<DatasetShape> list_datasets(const std::string& path) {
  QuietErrors quiet;
  Handle file = file_handle(open_swmr_reader(path),
                            cannot_open(path));
  struct Visit {
    hid_t file;
    std::vector<DatasetShape> out;
  } visit{file.get(), {}};
  const auto callback = [](hid_t, const char* name, const H5O_info_t* info, void* data) -> herr_t {
    auto* v = static_cast<Visit*>(data);
    if (info->type != H5O_TYPE_DATASET) return 0;
    const std::string object = std::string("/") + name;
    Handle dataset = dataset_handle(H5Dopen2(v->file, object.c_str(), H5P_DEFAULT), "cannot open " + object);
    Handle space = dataspace_handle(H5Dget_space(dataset.get()), "H5Dget_space failed");
    const int rank = H5Sget_simple_extent_ndims(space.get());
    std::vector<hsize_t> dims(static_cast<size_t>(std::max(rank, 0)));
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    v->out.push_back({object, std::vector<int64_t>(dims.begin(), dims.end())});
    return 0;
  };
  if (H5Ovisit(file.get(), H5_INDEX_NAME, H5_ITER_INC, callback, &visit) < 0)
    throw Error("cannot list the datasets of '" + path + "' (damaged file?)");
  return visit.out;
}

namespace {

// Reads a numeric dataset of rank `rank` as doubles; `dims` receives its shape.
std::vector<double> read_numeric(const std::string& path, const std::string& dataset, int rank, hsize_t* dims) {
  QuietErrors quiet;
  if (!std::ifstream(path)) throw Error("cannot open HDF5 file '" + path + "': no such file");
  if (H5Fis_hdf5(path.c_str()) <= 0) throw Error("'" + path + "' is not an HDF5 file (or is truncated)");
  Handle file = file_handle(open_swmr_reader(path),
                            cannot_open(path));
  if (H5Lexists(file.get(), dataset.c_str(), H5P_DEFAULT) <= 0)
    throw Error("HDF5 file '" + path + "' has no dataset '" + dataset + "'");
  Handle data = dataset_handle(H5Dopen2(file.get(), dataset.c_str(), H5P_DEFAULT),
                               "cannot open dataset " + where(path, dataset));
  Handle type = datatype_handle(H5Dget_type(data.get()), "cannot read type of " + where(path, dataset));
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_INTEGER && cls != H5T_FLOAT) throw Error("dataset " + where(path, dataset) + " is not numeric");
  Handle space = dataspace_handle(H5Dget_space(data.get()), "cannot read shape of " + where(path, dataset));
  if (H5Sget_simple_extent_ndims(space.get()) != rank)
    throw Error("dataset " + where(path, dataset) + " is not " + std::to_string(rank) + "-dimensional");
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  hsize_t count = 1;
  for (int i = 0; i < rank; ++i) count *= dims[i];
  std::vector<double> values(static_cast<size_t>(count));
  if (count > 0 && H5Dread(data.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
    throw Error("cannot read dataset " + where(path, dataset) + " (file truncated?)");
  return values;
}

}  // namespace

std::vector<double> read_series(const std::string& path, const std::string& dataset) {
  hsize_t n = 0;
  return read_numeric(path, dataset, 1, &n);
}

std::map<std::string, std::string> read_string_attributes(const std::string& path, const std::string& object) {
  QuietErrors quiet;
  if (!std::ifstream(path)) throw Error("cannot open HDF5 file '" + path + "': no such file");
  if (H5Fis_hdf5(path.c_str()) <= 0) throw Error("'" + path + "' is not an HDF5 file (or is truncated)");
  Handle file = file_handle(open_swmr_reader(path),
                            cannot_open(path));
  if (object != "/" && H5Lexists(file.get(), object.c_str(), H5P_DEFAULT) <= 0)
    throw Error("HDF5 file '" + path + "' has no object '" + object + "'");
  Handle obj(H5Oopen(file.get(), object.c_str(), H5P_DEFAULT), H5Oclose);
  if (!obj) throw Error("cannot open " + where(path, object));
  std::map<std::string, std::string> out;
  std::vector<std::string> names;
  const auto collect = [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
    static_cast<std::vector<std::string>*>(data)->push_back(name);
    return 0;
  };
  if (H5Aiterate2(obj.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &names) < 0)
    throw Error("cannot list the attributes of " + where(path, object));
  for (const auto& name : names) {
    Handle attr = attribute_handle(H5Aopen(obj.get(), name.c_str(), H5P_DEFAULT), "cannot open attribute '" + name + "' of " + where(path, object));
    Handle type = datatype_handle(H5Aget_type(attr.get()), "cannot read attribute type of " + where(path, object));
    if (H5Tget_class(type.get()) != H5T_STRING) continue;
    std::string value;
    if (H5Tis_variable_str(type.get()) > 0) {
      char* text = nullptr;
      Handle memtype = datatype_handle(H5Tget_native_type(type.get(), H5T_DIR_ASCEND), "cannot read attribute " + name);
      if (H5Aread(attr.get(), memtype.get(), &text) < 0) throw Error("cannot read attribute '" + name + "' of " + where(path, object));
      value = text ? text : "";
      H5free_memory(text);
    } else {
      std::string buffer(H5Tget_size(type.get()), '\0');
      if (H5Aread(attr.get(), type.get(), buffer.data()) < 0) throw Error("cannot read attribute '" + name + "' of " + where(path, object));
      value = buffer.substr(0, buffer.find('\0'));
    }
    out[name] = value;
  }
  return out;
}

std::vector<std::map<std::string, std::string>> read_numbered_attributes(const std::string& path, const std::string& group) {
  std::vector<std::map<std::string, std::string>> found;
  for (std::string object = group + "/0"; has_dataset(path, object); object = group + "/" + std::to_string(found.size()))
    found.push_back(read_string_attributes(path, object));
  return found;
}

Matrix read_matrix(const std::string& path, const std::string& dataset) {
  hsize_t dims[2] = {0, 0};
  Matrix m;
  m.values = read_numeric(path, dataset, 2, dims);
  m.rows = static_cast<int64_t>(dims[0]);
  m.columns = static_cast<int64_t>(dims[1]);
  return m;
}

Writer::Writer(const std::string& path) : path_(path) {
  QuietErrors quiet;
  file_ = created_file(path, H5P_DEFAULT, "cannot create HDF5 file");
}

void Writer::write_raw(const std::string& dataset, hid_t mem_type, const void* data, hsize_t n) {
  QuietErrors quiet;
  Handle lcpl = plist_handle(H5Pcreate(H5P_LINK_CREATE), "H5Pcreate failed");
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  Handle space = dataspace_handle(H5Screate_simple(1, &n, nullptr), "H5Screate_simple failed");
  Handle set = dataset_handle(
      H5Dcreate2(file_.get(), dataset.c_str(), mem_type, space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
      "cannot create dataset " + where(path_, dataset));
  errno = 0;
  if (n > 0 && H5Dwrite(set.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    throw WriteError("cannot write dataset " + where(path_, dataset) + ": " + write_failure_reason(errno));
}

void Writer::write_series(const std::string& dataset, const std::vector<double>& values) {
  write_raw(dataset, H5T_NATIVE_DOUBLE, values.data(), values.size());
}

void Writer::write_series(const std::string& dataset, const std::vector<int64_t>& values) {
  write_raw(dataset, H5T_NATIVE_INT64, values.data(), values.size());
}

Handle Writer::open_object(const std::string& object) {
  return Handle(H5Oopen(file_.get(), object.c_str(), H5P_DEFAULT), H5Oclose);
}

void Writer::set_attribute_raw(const std::string& object, const std::string& name, hid_t type,
                               const void* data) {
  QuietErrors quiet;
  Handle obj = open_object(object);
  if (!obj) throw Error("no object " + where(path_, object) + " to attach attribute '" + name + "' to");
  if (H5Aexists(obj.get(), name.c_str()) > 0) H5Adelete(obj.get(), name.c_str());
  Handle space = dataspace_handle(H5Screate(H5S_SCALAR), "H5Screate failed");
  Handle attr = attribute_handle(H5Acreate2(obj.get(), name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                                 "cannot create attribute '" + name + "' on " + where(path_, object));
  if (H5Awrite(attr.get(), type, data) < 0)
    throw Error("cannot write attribute '" + name + "' on " + where(path_, object));
}

void Writer::set_attribute(const std::string& object, const std::string& name, const std::string& value) {
  QuietErrors quiet;
  Handle obj = open_object(object);
  if (!obj) throw Error("no object " + where(path_, object) + " to attach attribute '" + name + "' to");
  write_variable_strings(obj.get(), name, {value}, true, where(path_, object));
}

void Writer::set_attribute(const std::string& object, const std::string& name, const std::vector<std::string>& values) {
  QuietErrors quiet;
  Handle obj = open_object(object);
  if (!obj) throw Error("no object " + where(path_, object) + " to attach attribute '" + name + "' to");
  write_variable_strings(obj.get(), name, values, false, where(path_, object));
}

void Writer::set_attribute(const std::string& object, const std::string& name, double value) {
  set_attribute_raw(object, name, H5T_NATIVE_DOUBLE, &value);
}

void Writer::set_attribute(const std::string& object, const std::string& name, int64_t value) {
  set_attribute_raw(object, name, H5T_NATIVE_INT64, &value);
}

Writer::~Writer() {
  QuietErrors quiet;  // close() reported what failed; an unclosed writer is one whose writing already failed
  file_.reset();
}

void Writer::close() {
  QuietErrors quiet;
  errno = 0;
  const bool flushed = H5Fflush(file_.get(), H5F_SCOPE_GLOBAL) >= 0;
  const int reason = errno;
  file_.reset();  // after a failed flush the close fails the same way: the flush's reason is the one to give
  if (!flushed) throw WriteError("cannot write '" + path_ + "': " + write_failure_reason(reason));
}

void write_file_atomically(const std::string& path, const std::function<void(Writer&)>& fill) {
  try {
    write_whole(path, [&](const std::filesystem::path& temporary) {
      // An error names the file asked for, not the temporary one that is removed ("cannot write '.x.h5.7-0.tmp'").
      const auto named = [&](const std::string& message) {
        std::string out = message;
        const std::string quoted = "'" + temporary.string() + "'";
        for (auto at = out.find(quoted); at != std::string::npos; at = out.find(quoted, at + path.size() + 2))
          out.replace(at, quoted.size(), "'" + path + "'");
        return out;
      };
      try {
        Writer writer(temporary.string());
        fill(writer);
        writer.close();
      } catch (const WriteError& e) {
        throw WriteError(named(e.what()));
      } catch (const Error& e) {
        throw Error(named(e.what()));
      }
    });
  } catch (const WholeWriteError& e) {  // a path refused is bad input; a rename that failed, a failed write
    if (e.refused()) throw Error(e.what());
    throw WriteError(e.what());
  }
}

}  // namespace lrkit::h5
