// Batch norm over the ranks of a job (BatchNorm2d with ranks): two replicas, each on half of a
// batch in a thread of its own, give what one layer gives on the whole batch: the output, the
// running statistics, dx, and gamma's and beta's gradients summed over the replicas. On every
// backend.
#include <gtest/gtest.h>

#include <barrier>
#include <mutex>
#include <thread>

#include "core/error.hpp"
#include "nets/communicator.hpp"
#include "nets/layer.hpp"
#include "tests/nets/nets_test_support.hpp"

namespace labpose::nets {
namespace {
using testing::close;
using testing::download;
using testing::random_values;
using testing::upload;

// Ranks that are threads of this process: each all_reduce waits for every rank's values. Only what
// batch norm uses is implemented.
class ThreadRanks {
 public:
  explicit ThreadRanks(int size) : size_(size), arrived_(size), left_(size, Reset{this}) {}

  class Rank final : public Communicator {
   public:
    Rank(ThreadRanks& ranks, int rank) : ranks_(ranks), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return ranks_.size_; }
    int local_rank() const override { return rank_; }
    int local_size() const override { return ranks_.size_; }
    std::string description() const override { return "threads"; }
    Memory memory() const override { return Memory::host; }
    std::unique_ptr<PendingReduction> start_mean(float*, std::size_t) override {
      throw Error("ThreadRanks: start_mean is not used by batch norm");
    }
    void broadcast(std::span<std::byte>, int) override {
      throw Error("ThreadRanks: broadcast is not used by batch norm");
    }
    void all_reduce(std::span<double> values, ReduceOp op) override {
      EXPECT_EQ(op, ReduceOp::sum);
      ranks_.add(values);
    }

   private:
    ThreadRanks& ranks_;
    int rank_;
  };

 private:
  // Every rank adds its values in, waits for all, reads the total, and waits for all to have read
  // it; the last to arrive there empties the total before any rank goes on.
  void add(std::span<double> values) {
    {
      std::lock_guard lock(mutex_);
      if (total_.empty()) total_.assign(values.size(), 0.0);
      for (std::size_t i = 0; i < values.size(); ++i) total_[i] += values[i];
    }
    arrived_.arrive_and_wait();
    std::copy(total_.begin(), total_.end(), values.begin());
    left_.arrive_and_wait();
  }

  struct Reset {
    ThreadRanks* ranks;
    void operator()() noexcept { ranks->total_.clear(); }
  };

  int size_;
  std::mutex mutex_;
  std::vector<double> total_;
  std::barrier<> arrived_;
  std::barrier<Reset> left_;
};

// One BatchNorm2d with its parameters on `backend`.
struct NormLayer {
  BatchNorm2d layer;
  std::vector<Parameter> parameters;
  Tensor output, dx;

  NormLayer(Backend& backend, const Shape& x, const std::vector<float>& gamma,
            const std::vector<float>& beta)
      : layer("bn", static_cast<int>(x.c())) {
    parameters = layer.declare_parameters();
    std::vector<Parameter*> bound;
    for (Parameter& p : parameters) {
      p.value = testing::allocate_flat(backend, p.shape);
      if (p.trainable) p.gradient = testing::allocate_flat(backend, p.shape);
      bound.push_back(&p);
    }
    backend.copy_from_host(gamma.data(), parameters[0].value);
    backend.copy_from_host(beta.data(), parameters[1].value);
    backend.fill(parameters[2].value, 0.5F);
    backend.fill(parameters[3].value, 2.0F);
    layer.bind_parameters(bound);
    layer.prepare(backend, {x});
    output = backend.allocate(x);
    dx = backend.allocate(x);
  }

  void step(Backend& backend, const Tensor& x, const Tensor& dy) {
    layer.forward(backend, {&x}, output, true);
    layer.backward(backend, {&x}, output, dy, {&dx});
  }
};

// The rows of batch items [first, first + count) of an NCHW host tensor of shape `s`.
std::vector<float> items(const std::vector<float>& values, const Shape& s, std::int64_t first,
                         std::int64_t count) {
  const std::int64_t item = s.c() * s.h() * s.w();
  return {values.begin() + first * item, values.begin() + (first + count) * item};
}

class SyncBatchNorm : public ::testing::TestWithParam<std::string> {};

TEST_P(SyncBatchNorm, TwoRanksOnHalvesAreOneLayerOnTheWholeBatch) {
  LABPOSE_SKIP_UNLESS_USABLE(GetParam());
  const Shape whole{4, 6, 5, 3}, half{2, 6, 5, 3}, cs{6};
  auto x = random_values(whole.elements(), 41, 2.0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += i < x.size() / 2 ? 3.0F : 1.0F;  // unlike
  const auto dy = random_values(whole.elements(), 42), gamma = random_values(6, 43),
             beta = random_values(6, 44);

  const auto alone_backend = devices::make_backend(GetParam());
  NormLayer alone(*alone_backend, whole, gamma, beta);
  alone.step(*alone_backend, upload(*alone_backend, whole, x), upload(*alone_backend, whole, dy));

  ThreadRanks ranks(2);
  std::vector<std::vector<float>> results[2];  // by rank: running mean, var, dgamma, dbeta
  std::vector<std::vector<float>> halves[2];   // by rank: output, dx
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      const auto backend = devices::make_backend(GetParam());
      ThreadRanks::Rank rank(ranks, r);
      NormLayer replica(*backend, half, gamma, beta);
      replica.layer.set_ranks(&rank);
      replica.step(*backend, upload(*backend, half, items(x, whole, 2 * r, 2)),
                   upload(*backend, half, items(dy, whole, 2 * r, 2)));
      halves[r] = {download(*backend, replica.output), download(*backend, replica.dx)};
      results[r] = {download(*backend, replica.parameters[2].value),
                    download(*backend, replica.parameters[3].value),
                    download(*backend, replica.parameters[0].gradient),
                    download(*backend, replica.parameters[1].gradient)};
    });
  }
  for (std::thread& t : threads) t.join();

  // Batch items are the outermost axis of the host order: the halves, one after the other.
  const auto joined = [&](std::size_t k) {
    std::vector<float> values = halves[0][k];
    values.insert(values.end(), halves[1][k].begin(), halves[1][k].end());
    return values;
  };
  EXPECT_TRUE(close(joined(0), download(*alone_backend, alone.output), 1e-4, 1e-5)) << "output";
  EXPECT_TRUE(close(joined(1), download(*alone_backend, alone.dx), 1e-4, 1e-5)) << "dx";
  const std::vector<float> expected[] = {download(*alone_backend, alone.parameters[2].value),
                                         download(*alone_backend, alone.parameters[3].value)};
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(close(results[r][0], expected[0], 1e-5, 1e-6)) << "running mean, rank " << r;
    EXPECT_TRUE(close(results[r][1], expected[1], 1e-5, 1e-6)) << "running variance, rank " << r;
  }
  for (std::size_t k : {2u, 3u}) {
    std::vector<float> summed(6);
    for (std::size_t c = 0; c < 6; ++c) summed[c] = results[0][k][c] + results[1][k][c];
    const Parameter& p = alone.parameters[k - 2];
    EXPECT_TRUE(close(summed, download(*alone_backend, p.gradient), 1e-4, 1e-5)) << p.name;
  }
}

std::vector<std::string> every_backend() {
  std::vector<std::string> names{"ref"};
  for (const std::string& name : testing::backends_under_test()) names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Backends, SyncBatchNorm, ::testing::ValuesIn(every_backend()),
                         testing::backend_test_name);

}  // namespace
}  // namespace labpose::nets
