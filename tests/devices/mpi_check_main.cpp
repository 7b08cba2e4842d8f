// labpose-mpi-check: run by the world tests under mpirun. Joins the world as labpose does and
// checks every collective against what the ranks' known inputs must give; prints "rank R of N
// ok" or the first mismatch. `hang` as the argument makes every rank but 0 stop answering, to
// see rank 0's time limit end the job.
#include <fmt/core.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "devices/world.hpp"

namespace {

using labpose::nets::Communicator;
using labpose::nets::ReduceOp;

// Throws with `what` unless `got` equals `want` exactly.
void expect(double got, double want, const std::string& what) {
  if (got != want) throw std::runtime_error(fmt::format("{}: got {}, want {}", what, got, want));
}

void check_broadcast(Communicator& world) {
  const int root = world.size() - 1;
  std::vector<std::byte> bytes(100003);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<std::byte>(world.rank() == root ? (i * 7 + 3) % 251 : 0);
  }
  world.broadcast(bytes, root);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    expect(static_cast<double>(bytes[i]), static_cast<double>((i * 7 + 3) % 251),
           fmt::format("broadcast byte {}", i));
  }
}

void check_all_reduce(Communicator& world) {
  const int n = world.size();
  const double r = world.rank();
  for (const ReduceOp op : {ReduceOp::sum, ReduceOp::min, ReduceOp::max}) {
    std::vector<double> values{r, -r, r * 0.5 + 1};
    world.all_reduce(values, op);
    const double ranks = n * (n - 1) / 2.0;
    const std::vector<double> want =
        op == ReduceOp::sum   ? std::vector<double>{ranks, -ranks, ranks * 0.5 + n}
        : op == ReduceOp::min ? std::vector<double>{0, -(n - 1.0), 1}
                              : std::vector<double>{n - 1.0, 0, (n - 1) * 0.5 + 1};
    for (std::size_t i = 0; i < values.size(); ++i) {
      expect(values[i], want[i], fmt::format("all_reduce op {} value {}", static_cast<int>(op), i));
    }
  }
}

void check_range(Communicator& world) {
  const double r = world.rank(), last = world.size() - 1;
  const std::vector<double> values{r, -2 * r, 7};
  const auto range = labpose::nets::range_over_ranks(world, values);
  const std::vector<double> low{0, -2 * last, 7}, high{last, 0, 7};
  for (std::size_t i = 0; i < values.size(); ++i) {
    expect(range.low[i], low[i], fmt::format("range_over_ranks low {}", i));
    expect(range.high[i], high[i], fmt::format("range_over_ranks high {}", i));
  }
}

// Three buckets in flight at once, of sizes around a page and one of a million floats; each
// element's mean over the ranks is known: element i of rank r is i + r (mean i + (n-1)/2).
void check_means(Communicator& world) {
  const int n = world.size();
  std::vector<std::vector<float>> buckets{std::vector<float>(1000), std::vector<float>(1 << 20),
                                          std::vector<float>(3)};
  std::vector<std::unique_ptr<labpose::nets::PendingReduction>> pending;
  for (auto& bucket : buckets) {
    for (std::size_t i = 0; i < bucket.size(); ++i) {
      bucket[i] = static_cast<float>(i % 1024) + static_cast<float>(world.rank());
    }
    pending.push_back(world.start_mean(bucket.data(), bucket.size()));
  }
  for (auto& reduction : pending) reduction->wait();
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    for (std::size_t i = 0; i < buckets[b].size(); ++i) {
      const float want = static_cast<float>(i % 1024) + static_cast<float>(n - 1) / 2.0F;
      if (std::abs(buckets[b][i] - want) > 1e-6F * std::max(1.0F, want)) {
        expect(buckets[b][i], want, fmt::format("bucket {} element {}", b, i));
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool hang = argc > 1 && std::strcmp(argv[1], "hang") == 0;
  int rank = -1;
  try {
    auto world = labpose::devices::join_world();
    rank = world->rank();
    if (hang && rank != 0) {
      for (;;) pause();  // stops answering; the launcher ends it when rank 0 fails
    }
    check_broadcast(*world);
    check_all_reduce(*world);
    check_range(*world);
    check_means(*world);
    fmt::print("rank {} of {} ok ({}; local rank {} of {})\n", rank, world->size(),
               world->description(), world->local_rank(), world->local_size());
    return 0;
  } catch (const labpose::Error& error) {
    fmt::print(stderr, "error: {}\nhint: {}\n", error.what(), error.hint());
  } catch (const std::exception& error) {
    fmt::print(stderr, "rank {}: check failed: {}\n", rank, error.what());
  }
  std::fflush(stderr);
  return 1;
}
