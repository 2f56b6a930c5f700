#include "lrkit/h5/handle.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include "lrkit/common/output_file.hpp"

namespace lrkit::h5 {

Handle::Handle(Handle&& other) noexcept
    : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = std::exchange(other.id_, H5I_INVALID_HID);
    closer_ = other.closer_;
  }
  return *this;
}

Handle::~Handle() { reset(); }

void Handle::reset() noexcept {
  if (id_ >= 0 && closer_ != nullptr) closer_(id_);
  id_ = H5I_INVALID_HID;
}

namespace {
Handle checked(hid_t id, Handle::Closer closer, const std::string& what) {
  if (id < 0) throw Error(what);
  return Handle(id, closer);
}
}  // namespace

Handle file_handle(hid_t id, const std::string& what) { return checked(id, H5Fclose, what); }
Handle group_handle(hid_t id, const std::string& what) { return checked(id, H5Gclose, what); }
Handle dataset_handle(hid_t id, const std::string& what) { return checked(id, H5Dclose, what); }
Handle dataspace_handle(hid_t id, const std::string& what) { return checked(id, H5Sclose, what); }
Handle datatype_handle(hid_t id, const std::string& what) { return checked(id, H5Tclose, what); }
Handle attribute_handle(hid_t id, const std::string& what) { return checked(id, H5Aclose, what); }
Handle plist_handle(hid_t id, const std::string& what) { return checked(id, H5Pclose, what); }

Handle created_file(const std::string& path, hid_t access, const std::string& what) {
  errno = 0;
  const hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access);
  if (id >= 0) return Handle(id, H5Fclose);
  const int reason = errno;  // the failed open(2) underneath, unless HDF5 failed before it
  const auto problem = output_file_problem(path);
  const std::string why = problem.value_or(reason != 0 ? std::strerror(reason) : "HDF5 could not create it");
  // A full disk or quota refused it: a failure at run time. A path that cannot serve is bad input.
  if (!problem && (reason == ENOSPC || reason == EDQUOT || reason == EFBIG)) throw WriteError(what + " '" + path + "': " + why);
  throw Error(what + " '" + path + "': " + why);
}

QuietErrors::QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &saved_func_, &saved_data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, saved_func_, saved_data_); }

std::string write_failure_reason(int error) { return error != 0 ? std::strerror(error) : "HDF5 failed"; }

void leave_open_files_at_exit() { H5dont_atexit(); }

}  // namespace lrkit::h5
