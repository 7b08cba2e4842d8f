// liblabpose-mpi.so: MPI_COMM_WORLD behind the C table of devices/mpi_api.hpp. Built where CMake
// finds an MPI (Debian's libopenmpi-dev); labpose loads it only when a launcher started it. Errors
// are returned, never fatal: MPI_ERRORS_RETURN on the world communicator. MPI's C API only: the
// C++ bindings of some MPI headers would need a library of their own.
//
// Collectives are non-blocking calls completed by a polling loop with a deadline. While it polls,
// the loop answers roll calls on a communicator of their own; a rank whose deadline passes calls
// the roll itself: every other rank answers with its count of collectives entered, so the error
// names the ranks that had not reached this one (hung outside MPI) or did not answer at all
// (stopped, or stuck in a call).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <sched.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

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

MPI_Comm g_roll = MPI_COMM_NULL;   // roll calls only
unsigned long long g_entered = 0;  // collectives this rank has entered
double g_timeout = 600.0;          // seconds a collective waits for the other ranks
constexpr int kQueryTag = 1, kAnswerTag = 2;
constexpr double kRollCallSeconds = 5.0;  // how long a roll call waits for its answers

bool live() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0 && g_roll != MPI_COMM_NULL;
}

// Answers every roll call that has arrived with this rank's count of collectives entered.
int answer_queries() {
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    int code = MPI_Iprobe(MPI_ANY_SOURCE, kQueryTag, g_roll, &arrived, &status);
    if (code != MPI_SUCCESS || arrived == 0) return code;
    unsigned long long asked = 0;
    code = MPI_Recv(&asked, 1, MPI_UNSIGNED_LONG_LONG, status.MPI_SOURCE, kQueryTag, g_roll,
                    MPI_STATUS_IGNORE);
    if (code == MPI_SUCCESS) {
      code = MPI_Send(&g_entered, 1, MPI_UNSIGNED_LONG_LONG, status.MPI_SOURCE, kAnswerTag, g_roll);
    }
    if (code != MPI_SUCCESS) return code;
  }
}

int answer_roll_calls(char* error, std::size_t error_size) {
  if (!live()) return 0;
  return report(answer_queries(), "answering a roll call", error, error_size);
}

// Calls `finished` until it returns true or `seconds` have passed, answering roll calls in
// between; returns whether it finished.
template <typename Finished>
bool poll(double seconds, const Finished& finished) {
  const double deadline = MPI_Wtime() + seconds;
  for (;;) {
    if (finished()) return true;
    answer_queries();
    if (MPI_Wtime() > deadline) return false;
    sched_yield();
  }
}

// "1, 3" from the ranks in `ranks`.
std::string listed(const std::vector<int>& ranks) {
  std::string text;
  for (const int r : ranks) text += (text.empty() ? "" : ", ") + std::to_string(r);
  return text;
}

// After `what` timed out: asks every other rank how many collectives it has entered and writes
// who is missing into `error`.
int roll_call(const char* what, char* error, std::size_t error_size) {
  int rank = 0, size = 1;
  MPI_Comm_rank(g_roll, &rank);
  MPI_Comm_size(g_roll, &size);
  std::vector<unsigned long long> counts(static_cast<std::size_t>(size), 0);
  std::vector<MPI_Request> answers(static_cast<std::size_t>(size), MPI_REQUEST_NULL);
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    MPI_Request query = MPI_REQUEST_NULL;
    MPI_Isend(&g_entered, 1, MPI_UNSIGNED_LONG_LONG, r, kQueryTag, g_roll, &query);
    MPI_Request_free(&query);
    MPI_Irecv(&counts[static_cast<std::size_t>(r)], 1, MPI_UNSIGNED_LONG_LONG, r, kAnswerTag,
              g_roll, &answers[static_cast<std::size_t>(r)]);
  }
  poll(kRollCallSeconds, [&] {
    int all = 0;
    MPI_Testall(size, answers.data(), &all, MPI_STATUSES_IGNORE);
    return all != 0;
  });
  std::vector<int> silent, behind;
  for (int r = 0; r < size; ++r) {
    MPI_Request& answer = answers[static_cast<std::size_t>(r)];
    if (answer != MPI_REQUEST_NULL) {
      silent.push_back(r);
      MPI_Cancel(&answer);
      MPI_Request_free(&answer);
    } else if (r != rank && counts[static_cast<std::size_t>(r)] < g_entered) {
      behind.push_back(r);
    }
  }
  std::string who;
  if (!behind.empty()) {
    who = (behind.size() == 1 ? "rank " : "ranks ") + listed(behind) +
          (behind.size() == 1 ? " has" : " have") + " not reached it (hung outside MPI)";
  }
  if (!silent.empty()) {
    who += (who.empty() ? "" : "; ") + std::string(silent.size() == 1 ? "rank " : "ranks ") +
           listed(silent) + " did not answer a roll call (stopped, crashed or stuck in a call)";
  }
  if (who.empty()) who = "every rank answered the roll call: the exchange itself is stuck";
  std::snprintf(error, error_size, "%s waited %g s: %s", what, g_timeout, who.c_str());
  return kLabposeMpiTimedOut;
}

// Completes `request` (a non-blocking collective), answering roll calls meanwhile; at the deadline
// calls the roll and returns kLabposeMpiTimedOut.
int complete(MPI_Request* request, const char* what, char* error, std::size_t error_size) {
  int code = MPI_SUCCESS;
  const bool finished = poll(g_timeout, [&] {
    int done = 0;
    code = MPI_Test(request, &done, MPI_STATUS_IGNORE);
    return code != MPI_SUCCESS || done != 0;
  });
  if (code != MPI_SUCCESS) return report(code, what, error, error_size);
  return finished ? 0 : roll_call(what, error, error_size);
}

int init(int* rank, int* size, int* local_rank, int* local_size, double timeout_seconds,
         char* error, std::size_t error_size) {
  g_timeout = timeout_seconds;
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
  code = MPI_Comm_dup(MPI_COMM_WORLD, &g_roll);
  if (code != MPI_SUCCESS) return report(code, "MPI_Comm_dup", error, error_size);
  MPI_Comm_set_errhandler(g_roll, MPI_ERRORS_RETURN);
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

// MPI counts are ints: `start(offset, piece, request)` starts a collective on pieces of at most
// kMaxCount elements of `count`, each completed before the next; the first failure is reported
// as `what`'s.
constexpr std::size_t kMaxCount = INT_MAX / 2;

template <typename Start>
int in_pieces(std::size_t count, const char* what, char* error, std::size_t error_size,
              Start start) {
  ++g_entered;
  std::size_t done = 0;
  do {  // once for an empty buffer too: every rank takes part
    const std::size_t piece = std::min(count - done, kMaxCount);
    MPI_Request request = MPI_REQUEST_NULL;
    const int code = start(done, static_cast<int>(piece), &request);
    if (code != MPI_SUCCESS) return report(code, what, error, error_size);
    const int completed = complete(&request, what, error, error_size);
    if (completed != 0) return completed;
    done += piece;
  } while (done < count);
  return 0;
}

int all_reduce_floats(float* data, std::size_t count, char* error, std::size_t error_size) {
  return in_pieces(count, "MPI_Iallreduce", error, error_size,
                   [&](std::size_t at, int piece, MPI_Request* request) {
                     return MPI_Iallreduce(MPI_IN_PLACE, data + at, piece, MPI_FLOAT, MPI_SUM,
                                           MPI_COMM_WORLD, request);
                   });
}

int all_reduce_doubles(double* data, std::size_t count, int op, char* error,
                       std::size_t error_size) {
  const MPI_Op mpi_op = op == labpose_mpi_min ? MPI_MIN : op == labpose_mpi_max ? MPI_MAX : MPI_SUM;
  return in_pieces(count, "MPI_Iallreduce", error, error_size,
                   [&](std::size_t at, int piece, MPI_Request* request) {
                     return MPI_Iallreduce(MPI_IN_PLACE, data + at, piece, MPI_DOUBLE, mpi_op,
                                           MPI_COMM_WORLD, request);
                   });
}

int broadcast(void* data, std::size_t bytes, int root, char* error, std::size_t error_size) {
  auto* bytes_at = static_cast<char*>(data);
  return in_pieces(
      bytes, "MPI_Ibcast", error, error_size, [&](std::size_t at, int piece, MPI_Request* request) {
        return MPI_Ibcast(bytes_at + at, piece, MPI_BYTE, root, MPI_COMM_WORLD, request);
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

constexpr LabposeMpiApi kApi{kLabposeMpiApiVersion,
                             init,
                             library_version,
                             all_reduce_floats,
                             all_reduce_doubles,
                             broadcast,
                             answer_roll_calls,
                             finalize,
                             abort_job};

}  // namespace

extern "C" __attribute__((visibility("default"))) const LabposeMpiApi* labpose_mpi_api() {
  return &kApi;
}
