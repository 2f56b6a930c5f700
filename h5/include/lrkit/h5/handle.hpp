// RAII ownership of HDF5 C handles (hid_t), gathered in one place so no other
// file calls H5?close by hand. Also: the error type every HDF5 helper throws.
#pragma once

#include <hdf5.h>

#include <stdexcept>
#include <string>

namespace lrkit::h5 {

// Thrown for any HDF5 failure; the message names the file and the object.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A write the file system refused (a full disk, a file size limit): a failure at run time, not a bad file.
class WriteError : public Error {
 public:
  using Error::Error;
};

// Why HDF5 failed to write: the system call's reason beneath it (`error`, errno cleared before the HDF5 call), or
// "HDF5 failed" where none set one.
std::string write_failure_reason(int error);

// Owns one hid_t and closes it with the function matching its type.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);

  Handle() = default;
  Handle(hid_t id, Closer closer) noexcept : id_(id), closer_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept;
  Handle& operator=(Handle&& other) noexcept;
  ~Handle();

  hid_t get() const noexcept { return id_; }
  explicit operator bool() const noexcept { return id_ >= 0; }
  void reset() noexcept;

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// Wraps a freshly returned id; a negative id becomes an Error with `what`.
Handle file_handle(hid_t id, const std::string& what);
Handle group_handle(hid_t id, const std::string& what);
Handle dataset_handle(hid_t id, const std::string& what);
Handle dataspace_handle(hid_t id, const std::string& what);
Handle datatype_handle(hid_t id, const std::string& what);
Handle attribute_handle(hid_t id, const std::string& what);
Handle plist_handle(hid_t id, const std::string& what);

// Creates (or truncates) the file at `path` with the file-access list `access`; a failure is an Error
// "<what> '<path>': <reason>", the reason as the file system gives it (a directory, a missing
// directory, permission denied, ...): HDF5's own error stack is silenced.
Handle created_file(const std::string& path, hid_t access, const std::string& what);

// Turns off HDF5's own stderr error stack printing while alive: lrkit reports
// one clear line instead.
class QuietErrors {
 public:
  QuietErrors();
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;
  ~QuietErrors();

 private:
  H5E_auto2_t saved_func_ = nullptr;
  void* saved_data_ = nullptr;
};

// For a program's main(), before any other HDF5 call: HDF5's shutdown at exit does not try to close files left
// open. A run log whose disk filled cannot be closed (closing writes its cached rows again), and that shutdown then
// prints "infinite loop closing library"; left open, the file is what a killed writer leaves: every flushed row.
void leave_open_files_at_exit();

}  // namespace lrkit::h5
