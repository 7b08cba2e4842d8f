// An HDF5 file driver for writing a new file: POSIX I/O laid out like libhdf5's default driver
// (sec2), except that a failed write (full disk, quota, file size limit, I/O error) is remembered
// and every later write is dropped, so libhdf5 itself never sees an I/O error. libhdf5 1.10 cannot
// close a file whose flush failed: the identifier stays half-freed and its shutdown at exit
// crashed labpose (exit status 139 after "disk full"). Not for reading; no locking, no SWMR.
#pragma once

#include <hdf5.h>

namespace labpose::projects::hdf5 {

/// The first error of the file written through write_access(); 0 while every write succeeded.
struct WriteStatus {
  int error_number = 0;  // errno of the failed write, truncate or close
};

/// A new file access property list (the caller closes it with H5Pclose) whose files are written
/// through this driver, their failures recorded in `*status` (which must outlive the file).
/// Call with library_mutex() held.
hid_t write_access(WriteStatus* status);

}  // namespace labpose::projects::hdf5
