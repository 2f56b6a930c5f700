#include "lrkit/h5/handle.hpp"

#include <utility>

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

QuietErrors::QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &saved_func_, &saved_data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, saved_func_, saved_data_); }

}  // namespace lrkit::h5
