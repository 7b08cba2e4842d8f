// The table of functions the MPI plugin (devices/mpi/, liblabpose-mpi.so) gives labpose: plain C
// calls over MPI_COMM_WORLD, so that labpose itself links no MPI library and runs without one.
// Every call but rank queries is made from one thread, the one that called init (MPI's
// "funneled" threading). The calls return 0 on success, else write a message into `error`
// (at most `error_size` bytes, NUL-terminated) and return MPI's error code. Not the communicator
// (devices/mpi_communicator.hpp), which adds the thread, the time limits and labpose's errors.
#pragma once

#include <cstddef>

extern "C" {

/// Bumped when the table changes, so a stale plugin is refused instead of misread.
inline constexpr int kLabposeMpiApiVersion = 2;

/// What a collective returns when it waited longer than the time limit for the other ranks; its
/// `error` then names the ranks that did not answer the roll call or had not reached it.
inline constexpr int kLabposeMpiTimedOut = -1;

enum LabposeMpiOp { labpose_mpi_sum = 0, labpose_mpi_min = 1, labpose_mpi_max = 2 };

struct LabposeMpiApi {
  int version;  // kLabposeMpiApiVersion of the plugin's build
  /// MPI_Init_thread (funneled); then rank, size and the ranks sharing this machine. Collectives
  /// wait at most `timeout_seconds` for the other ranks, answering their roll calls meanwhile.
  int (*init)(int* rank, int* size, int* local_rank, int* local_size, double timeout_seconds,
              char* error, std::size_t error_size);
  /// MPI_Get_library_version's text, first line.
  int (*library_version)(char* text, std::size_t text_size);
  /// In-place sums of floats (gradients) and element-wise ops of doubles.
  int (*all_reduce_floats)(float* data, std::size_t count, char* error, std::size_t error_size);
  int (*all_reduce_doubles)(double* data, std::size_t count, int op, char* error,
                            std::size_t error_size);
  int (*broadcast)(void* data, std::size_t bytes, int root, char* error, std::size_t error_size);
  /// Answers the roll calls of ranks that timed out (this rank's count of collectives entered);
  /// called while the thread has nothing else to do. A no-op before init and after finalize.
  int (*answer_roll_calls)(char* error, std::size_t error_size);
  int (*finalize)(char* error, std::size_t error_size);
  /// MPI_Abort: ends every rank of the job with `code`.
  void (*abort)(int code);
};

/// The plugin's one exported symbol.
using LabposeMpiApiFunction = const LabposeMpiApi* (*)();
inline constexpr const char* kLabposeMpiApiSymbol = "labpose_mpi_api";
}
