// Internal to the HDF5 table code (table_hdf5_*.cpp, hdf5_write_driver.cpp): RAII for HDF5
// identifiers, silencing libhdf5's own error printing, and the lock that every use of libhdf5 in
// labpose holds. Not a general HDF5 wrapper and not part of the projects API.
#pragma once

#include <hdf5.h>

#include <mutex>

namespace labpose::projects::hdf5 {

/// Owns an HDF5 identifier and closes it with the matching H5?close.
class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = other.id_;
      close_ = other.close_;
      other.id_ = -1;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  /// Gives up ownership (the caller closes it).
  hid_t release() {
    const hid_t id = id_;
    id_ = -1;
    return id;
  }
  void reset() {
    if (id_ >= 0 && close_ != nullptr) close_(id_);
    id_ = -1;
  }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

/// Silences libhdf5's printing of its error stack (this thread) while we turn failures into Errors.
class QuietErrors {
 public:
  QuietErrors() {
    H5Eget_auto2(H5E_DEFAULT, &function_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, function_, data_); }
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t function_ = nullptr;
  void* data_ = nullptr;
};

/// Held by every use of libhdf5 in labpose. read_table_hdf5 forks a child that reads with
/// libhdf5; if another thread were inside libhdf5 at that moment, the child would inherit
/// libhdf5's internal lock held (Debian builds it thread-safe) and half-updated state. Holding
/// this lock across the fork rules that out.
std::mutex& library_mutex();

}  // namespace labpose::projects::hdf5
