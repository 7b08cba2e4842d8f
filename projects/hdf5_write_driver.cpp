// The write driver of hdf5_write_driver.hpp: open/read/write/truncate/close on a file descriptor,
// with the same features (metadata aggregation, sieve buffer) as sec2 so that the file's layout is
// the one libhdf5's default driver gives.
#include "projects/hdf5_write_driver.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>

#include "projects/hdf5_support.hpp"

namespace labpose::projects::hdf5 {
namespace {

// The largest address, as sec2 has it (a signed off_t).
constexpr haddr_t kMaxAddress = (static_cast<haddr_t>(1) << (8 * sizeof(off_t) - 1)) - 1;

struct DriverInfo {
  WriteStatus* status = nullptr;
};

struct File {
  H5FD_t base;  // first: libhdf5 hands our callbacks a pointer to it
  int fd = -1;
  haddr_t end_of_address = 0;  // what libhdf5 has allocated
  haddr_t end_of_file = 0;     // what is on disk
  dev_t device = 0;
  ino_t inode = 0;
  WriteStatus* status = nullptr;
};

File* of(H5FD_t* file) {
  return reinterpret_cast<File*>(file);
}
const File* of(const H5FD_t* file) {
  return reinterpret_cast<const File*>(file);
}

void remember(File* file, int error_number) {
  if (file->status != nullptr && file->status->error_number == 0)
    file->status->error_number = error_number;
}

bool failed(const File* file) {
  return file->status != nullptr && file->status->error_number != 0;
}

H5FD_t* open_file(const char* name, unsigned flags, hid_t access, haddr_t max_address) {
  if (name == nullptr || *name == '\0' || max_address == 0 ||
      (max_address != HADDR_UNDEF && max_address > kMaxAddress)) {
    return nullptr;
  }
  int open_flags = O_CLOEXEC | ((flags & H5F_ACC_RDWR) != 0 ? O_RDWR : O_RDONLY);
  if ((flags & H5F_ACC_TRUNC) != 0) open_flags |= O_TRUNC;
  if ((flags & H5F_ACC_CREAT) != 0) open_flags |= O_CREAT;
  if ((flags & H5F_ACC_EXCL) != 0) open_flags |= O_EXCL;
  const int fd = ::open(name, open_flags, 0666);
  if (fd < 0) return nullptr;  // libhdf5 first tries without O_CREAT: not a write failure
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    ::close(fd);
    return nullptr;
  }
  auto* file = new (std::nothrow) File();
  if (file == nullptr) {
    ::close(fd);
    return nullptr;
  }
  file->fd = fd;
  file->end_of_file = static_cast<haddr_t>(info.st_size);
  file->device = info.st_dev;
  file->inode = info.st_ino;
  const auto* driver_info = static_cast<const DriverInfo*>(H5Pget_driver_info(access));
  file->status = driver_info != nullptr ? driver_info->status : nullptr;
  return &file->base;
}

herr_t close_file(H5FD_t* handle) {
  File* file = of(handle);
  if (::close(file->fd) != 0) remember(file, errno);  // NFS reports a full disk here
  delete file;
  return 0;
}

int compare(const H5FD_t* first, const H5FD_t* second) {
  const File* a = of(first);
  const File* b = of(second);
  if (a->device != b->device) return a->device < b->device ? -1 : 1;
  if (a->inode != b->inode) return a->inode < b->inode ? -1 : 1;
  return 0;
}

herr_t query(const H5FD_t*, unsigned long* flags) {
  if (flags != nullptr) {
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
             H5FD_FEAT_AGGREGATE_SMALLDATA | H5FD_FEAT_POSIX_COMPAT_HANDLE;
  }
  return 0;
}

haddr_t get_end_of_address(const H5FD_t* file, H5FD_mem_t) {
  return of(file)->end_of_address;
}

herr_t set_end_of_address(H5FD_t* file, H5FD_mem_t, haddr_t address) {
  of(file)->end_of_address = address;
  return 0;
}

haddr_t get_end_of_file(const H5FD_t* file, H5FD_mem_t) {
  return of(file)->end_of_file;
}

herr_t get_handle(H5FD_t* file, hid_t, void** handle) {
  if (handle == nullptr) return -1;
  *handle = &of(file)->fd;
  return 0;
}

herr_t read(H5FD_t* handle, H5FD_mem_t, hid_t, haddr_t address, std::size_t size, void* buffer) {
  File* file = of(handle);
  if (address == HADDR_UNDEF || address > kMaxAddress || size > kMaxAddress - address) return -1;
  auto* out = static_cast<unsigned char*>(buffer);
  while (size > 0) {
    const ssize_t got = ::pread(file->fd, out, size, static_cast<off_t>(address));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return -1;
    if (got == 0) break;  // past the end of the file: zeros, as sec2 gives
    out += got;
    address += static_cast<haddr_t>(got);
    size -= static_cast<std::size_t>(got);
  }
  std::fill_n(out, size, static_cast<unsigned char>(0));
  return 0;
}

herr_t write(H5FD_t* handle, H5FD_mem_t, hid_t, haddr_t address, std::size_t size,
             const void* buffer) {
  File* file = of(handle);
  if (address == HADDR_UNDEF || address > kMaxAddress || size > kMaxAddress - address) return -1;
  // After the first failure the file is lost anyway: report success so that libhdf5 finishes and
  // closes it normally; the writer reads the failure from the status and throws.
  if (failed(file)) return 0;
  const auto* in = static_cast<const unsigned char*>(buffer);
  while (size > 0) {
    const ssize_t put = ::pwrite(file->fd, in, size, static_cast<off_t>(address));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      remember(file, put < 0 ? errno : EIO);
      return 0;
    }
    in += put;
    address += static_cast<haddr_t>(put);
    size -= static_cast<std::size_t>(put);
  }
  file->end_of_file = std::max(file->end_of_file, address);
  return 0;
}

herr_t truncate(H5FD_t* handle, hid_t, hbool_t) {
  File* file = of(handle);
  if (failed(file) || file->end_of_address == file->end_of_file) return 0;
  if (::ftruncate(file->fd, static_cast<off_t>(file->end_of_address)) != 0) {
    remember(file, errno);
    return 0;
  }
  file->end_of_file = file->end_of_address;
  return 0;
}

herr_t terminate();

hid_t g_driver = -1;  // registered once per libhdf5 session (H5close ends a session)

herr_t terminate() {
  g_driver = -1;
  return 0;
}

H5FD_class_t driver_class() {
  H5FD_class_t driver{};
#ifdef H5FD_CLASS_VERSION
  driver.version = H5FD_CLASS_VERSION;
#endif
  driver.name = "labpose_write";
  driver.maxaddr = kMaxAddress;
  driver.fc_degree = H5F_CLOSE_WEAK;
  driver.terminate = terminate;
  driver.fapl_size = sizeof(DriverInfo);
  driver.open = open_file;
  driver.close = close_file;
  driver.cmp = compare;
  driver.query = query;
  driver.get_eoa = get_end_of_address;
  driver.set_eoa = set_end_of_address;
  driver.get_eof = get_end_of_file;
  driver.get_handle = get_handle;
  driver.read = read;
  driver.write = write;
  driver.truncate = truncate;
  const H5FD_mem_t map[H5FD_MEM_NTYPES] = H5FD_FLMAP_DICHOTOMY;
  std::copy(std::begin(map), std::end(map), std::begin(driver.fl_map));
  return driver;
}

}  // namespace

hid_t write_access(WriteStatus* status) {
  static const H5FD_class_t driver = driver_class();
  if (g_driver < 0 || H5Iis_valid(g_driver) <= 0) g_driver = H5FDregister(&driver);
  if (g_driver < 0) return -1;
  Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!access.valid()) return -1;
  const DriverInfo info{status};
  if (H5Pset_driver(access.get(), g_driver, &info) < 0) return -1;
  return access.release();
}

}  // namespace labpose::projects::hdf5
