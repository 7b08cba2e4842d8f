// liblabpose-mpi.so: MPI_COMM_WORLD behind the C table of devices/mpi_api.hpp. Built where CMake
// finds an MPI (Debian's libopenmpi-dev); labpose loads it only when a launcher started it. Errors
// are returned, never fatal: MPI_ERRORS_RETURN on the world communicator. MPI's C API only: the
// C++ bindings of some MPI headers would need a library of their own.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

#include "devices/mpi_api.hpp"

namespace {

// MPI's text for `code` after `what`, into `error`; returns `code`.
int report(int code, const char* what, char* error, std::size_t error_size) {
  if (code == MPI_SUCCESS) return 0;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
    std::snprintf(text, sizeof text, "MPI error %d", code);
  }
  if (error != nullptr && error_size > 0) std::snprintf(error, error_size, "%s: %s", what, text);
  return code;
}

int init(int* rank, int* size, int* local_rank, int* local_size, char* error,
         std::size_t error_size) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized == 0) {
    int provided = 0;
    const int code = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    if (code != MPI_SUCCESS) return report(code, "MPI_Init_thread", error, error_size);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int code = MPI_Comm_rank(MPI_COMM_WORLD, rank);
  if (code == MPI_SUCCESS) code = MPI_Comm_size(MPI_COMM_WORLD, size);
  if (code != MPI_SUCCESS) return report(code, "MPI_Comm_rank", error, error_size);
  MPI_Comm local = MPI_COMM_NULL;
  code = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL, &local);
  if (code != MPI_SUCCESS) return report(code, "MPI_Comm_split_type", error, error_size);
  MPI_Comm_rank(local, local_rank);
  MPI_Comm_size(local, local_size);
  MPI_Comm_free(&local);
  return 0;
}

int library_version(char* text, std::size_t text_size) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  const char* end = std::strpbrk(version, ",\n");
  const std::size_t first_line =
      end != nullptr ? static_cast<std::size_t>(end - version) : std::strlen(version);
  std::snprintf(text, text_size, "%.*s", static_cast<int>(first_line), version);
  return 0;
}

// MPI counts are ints: `call(offset, piece)` runs on pieces of at most kMaxCount elements of
// `count`; the first failure is reported as `what`'s.
constexpr std::size_t kMaxCount = INT_MAX / 2;

template <typename Call>
int in_pieces(std::size_t count, const char* what, char* error, std::size_t error_size, Call call) {
  for (std::size_t done = 0; done < count;) {
    const std::size_t piece = std::min(count - done, kMaxCount);
    const int code = call(done, static_cast<int>(piece));
    if (code != MPI_SUCCESS) return report(code, what, error, error_size);
    done += piece;
  }
  return 0;
}

int all_reduce_floats(float* data, std::size_t count, char* error, std::size_t error_size) {
  return in_pieces(count, "MPI_Allreduce", error, error_size, [&](std::size_t at, int piece) {
    return MPI_Allreduce(MPI_IN_PLACE, data + at, piece, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  });
}

int all_reduce_doubles(double* data, std::size_t count, int op, char* error,
                       std::size_t error_size) {
  const MPI_Op mpi_op = op == labpose_mpi_min ? MPI_MIN : op == labpose_mpi_max ? MPI_MAX : MPI_SUM;
  return in_pieces(count, "MPI_Allreduce", error, error_size, [&](std::size_t at, int piece) {
    return MPI_Allreduce(MPI_IN_PLACE, data + at, piece, MPI_DOUBLE, mpi_op, MPI_COMM_WORLD);
  });
}

int broadcast(void* data, std::size_t bytes, int root, char* error, std::size_t error_size) {
  auto* bytes_at = static_cast<char*>(data);
  return in_pieces(bytes, "MPI_Bcast", error, error_size, [&](std::size_t at, int piece) {
    return MPI_Bcast(bytes_at + at, piece, MPI_BYTE, root, MPI_COMM_WORLD);
  });
}

int finalize(char* error, std::size_t error_size) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) return 0;
  return report(MPI_Finalize(), "MPI_Finalize", error, error_size);
}

void abort_job(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
}

constexpr LabposeMpiApi kApi{kLabposeMpiApiVersion, init,      library_version, all_reduce_floats,
                             all_reduce_doubles,    broadcast, finalize,        abort_job};

}  // namespace

extern "C" __attribute__((visibility("default"))) const LabposeMpiApi* labpose_mpi_api() {
  return &kApi;
}
