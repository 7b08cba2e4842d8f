// labpose bench: frames/s of a pose network's inference plan (or images/s of a training step) on
// one device, for one or several batch sizes, as the median over timed repeats after warm-up, with
// the achieved GFLOP/s and peak memory (host, and the GPU's pool on cuda). A benchmark program,
// never a test: compare figures taken in one run (the machine may be shared).
#include <omp.h>
#include <sys/resource.h>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <limits>

#include "core/console.hpp"
#include "core/error.hpp"
#include "devices/devices.hpp"
#include "nets/calibration.hpp"
#include "nets/cpu/depthwise.hpp"
#include "nets/cpu/winograd.hpp"
#include "nets/fused_graph.hpp"
#include "nets/generic_plan.hpp"
#include "nets/models/models.hpp"
#include "nets/random.hpp"
#include "tools/labpose/bench_pipeline.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/decode_option.hpp"
#include "tools/labpose/size_option.hpp"

namespace labpose::tools {
namespace {

struct BenchOptions {
  std::string architecture = "resnet_50", size = "640x480", device = "cpu", precision = "fp32";
  std::string batches = "1";  // "8" or a list "1,8,32,64"
  std::string video;          // --pipeline on a video's frames
  int bodyparts = 4, repeats = 10, warmup = 2, slots = 0;
  int limbs = 0, identity = 0;  // a multi-animal network's PAF limbs and identity channels
  bool train = false, json = false, pipeline = false;
  bool decode_on_gpu = false;  // --decode gpu
};

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double peak_memory_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

// Multiply-adds x 2 of the convolutions of one image's forward pass.
double forward_gflop(const nets::FusedGraph& graph, const nets::Shape& input) {
  const auto shapes = nets::fused_shapes(graph, input);
  double flop = 0.0;
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    const nets::FusedOp& op = graph.ops[i];
    const nets::Shape& w = op.weight_shape;
    if (op.kind == nets::FusedOp::Kind::conv) {
      flop +=
          2.0 * static_cast<double>(shapes[i].elements()) * static_cast<double>(w[1] * w[2] * w[3]);
    } else if (op.kind == nets::FusedOp::Kind::conv_transpose) {
      const nets::Shape& in = op.input < 0 ? input : shapes[static_cast<std::size_t>(op.input)];
      flop += 2.0 * static_cast<double>(in.elements()) * static_cast<double>(w[1] * w[2] * w[3]);
    }
  }
  return flop / 1e9 / static_cast<double>(input.n());
}

std::vector<float> random_vector(std::int64_t count, std::uint64_t seed, double low, double high) {
  nets::Random random(seed);
  std::vector<float> values(static_cast<std::size_t>(count));
  for (float& v : values) v = static_cast<float>(low + (high - low) * random.uniform());
  return values;
}

std::vector<int> parse_batches(const std::string& text) {
  std::vector<int> batches;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    int batch = 0;
    const char* first = text.data() + start;
    const auto [rest, error] = std::from_chars(first, text.data() + end, batch);
    if (error != std::errc() || rest != text.data() + end || batch < 1) {
      throw UsageError(
          fmt::format("--batch must be a batch size or a list such as 1,8,32 (got \"{}\")", text));
    }
    batches.push_back(batch);
    start = end + 1;
  }
  return batches;
}

// Times one batch size on a network already built on `backend`.
void measure(const BenchOptions& options, nets::Backend& backend, nets::Net& net, int batch,
             int width, int height) {
  const nets::Shape input{batch, 3, height, width};
  nets::Tensor x = backend.allocate(input);
  const auto pixels = random_vector(input.elements(), 2, 0.0, 255.0);
  backend.copy_from_host(pixels.data(), x);
  if (!options.train && backend.plan_precision() == nets::PlanPrecision::int8) {
    // The random weights calibrated on the random input itself, in fp32.
    const auto fp32 = devices::make_backend("cpu");
    nets::Tensor calibration_input = fp32->allocate(input);
    fp32->copy_from_host(pixels.data(), calibration_input);
    nets::RangeObserver observer(*fp32, net.fuse(true));
    observer.observe(calibration_input);
    net.set_activation_ranges(observer.ranges());
  }
  const nets::FusedGraph graph = net.fuse(true);
  const double gflop_per_image = forward_gflop(graph, input);

  std::function<void()> step;
  std::unique_ptr<nets::InferencePlan> plan;
  std::vector<nets::Tensor> targets, weights, gradients;
  nets::Tensor velocity;
  // labpose's own CPU kernels the plan takes (oneDNN's verbose output lists only oneDNN's).
  const std::int64_t winograd_before = nets::cpu::winograd_convolutions_made();
  const std::int64_t depthwise_before = nets::cpu::depthwise_convolutions_made();
  if (!options.train) {
    plan = backend.compile(graph, input);
    step = [&] {
      plan->run(x);
      backend.synchronize();
    };
  } else {
    // One DeepLabCut training step: sigmoid cross-entropy on the score maps, 0.05 x Huber on the
    // location refinement, backward, SGD with momentum.
    const auto shapes = net.output_shapes(input);
    for (std::size_t k = 0; k < shapes.size(); ++k) {
      targets.push_back(backend.allocate(shapes[k]));
      weights.push_back(backend.allocate(shapes[k]));
      gradients.push_back(backend.allocate(shapes[k]));
      const auto values = random_vector(shapes[k].elements(), 3 + k, k == 0 ? 0.0 : -1.0, 1.0);
      backend.copy_from_host(values.data(), targets[k]);
      backend.fill(weights[k], 1.0F);
    }
    velocity = backend.allocate_flat(net.trainable_count());
    backend.fill(velocity, 0.0F);
    const float score_scale = 1.0F / static_cast<float>(shapes[0].elements());
    const float locref_scale = 0.05F / static_cast<float>(shapes[1].elements());
    step = [&, score_scale, locref_scale] {
      const auto& outputs = net.forward(x, true);
      backend.sigmoid_cross_entropy_forward(outputs[0], targets[0], weights[0]);
      backend.huber_forward(outputs[1], targets[1], weights[1], 1.0F);
      backend.sigmoid_cross_entropy_backward(outputs[0], targets[0], weights[0], score_scale,
                                             gradients[0]);
      backend.huber_backward(outputs[1], targets[1], weights[1], 1.0F, locref_scale, gradients[1]);
      if (outputs.size() > 2) {  // 0.1 x squared error on a multi-animal network's PAFs
        constexpr float kNoDelta = std::numeric_limits<float>::max();
        backend.huber_forward(outputs[2], targets[2], weights[2], kNoDelta);
        backend.huber_backward(outputs[2], targets[2], weights[2], kNoDelta,
                               0.2F / static_cast<float>(outputs[2].elements()), gradients[2]);
      }
      net.backward(gradients);
      backend.sgd_step(net.trainable_values(), net.trainable_gradients(), velocity,
                       {1e-4F, 0.9F, 0.0F});
      backend.synchronize();
    };
  }
  for (int i = 0; i < options.warmup; ++i) step();
  std::vector<double> times;
  for (int i = 0; i < options.repeats; ++i) {
    const double start = now_seconds();
    step();
    times.push_back(now_seconds() - start);
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  const double per_second = batch / median;
  const double gflops = per_second * gflop_per_image * (options.train ? 3.0 : 1.0);
  const int threads = omp_get_max_threads();
  // The CPU runs a batch whose activations outgrow its cache in smaller passes (nets/cpu/plan.cpp).
  const std::int64_t frames_per_pass = plan ? plan->frames_per_pass() : batch;
  const std::string passes =
      frames_per_pass < batch ? fmt::format(" (in passes of {})", frames_per_pass) : std::string();
  if (options.json) {
    std::printf(
        "%s\n",
        fmt::format(
            R"({{"arch": "{}", "mode": "{}", "width": {}, "height": {}, "batch": {}, "device": "{}", )"
            R"("backend": "{}", "threads": {}, "repeats": {}, "median_s": {:.6f}, "min_s": {:.6f}, )"
            R"("max_s": {:.6f}, "gflop_per_image": {:.3f}, "gflops": {:.2f}, "peak_memory_mib": {:.1f}, )"
            R"("device_memory_mib": {:.1f}, "precision": "{}", "frames_per_pass": {}, )"
            R"("own_kernels": {{"winograd": {}, "depthwise": {}}}, "fps": {:.4f}}})",
            options.architecture, options.train ? "train" : "infer", width, height, batch,
            backend.name(), backend.description(), threads, options.repeats, median, times.front(),
            times.back(), gflop_per_image, gflops, peak_memory_mib(),
            static_cast<double>(backend.peak_memory_bytes()) / (1024.0 * 1024.0),
            nets::precision_name(options.train ? backend.training_precision()
                                               : backend.plan_precision()),
            frames_per_pass, nets::cpu::winograd_convolutions_made() - winograd_before,
            nets::cpu::depthwise_convolutions_made() - depthwise_before, per_second)
            .c_str());
  } else {
    std::printf(
        "%s\n",
        fmt::format(
            "{} {}x{} batch {}{} on {} ({}, {} threads): {} {:.3f} {}/s ({:.1f} ms per batch, "
            "median of {}; fastest {:.1f} ms), {:.1f} GFLOP/s ({:.2f} GFLOP per image forward{}), "
            "peak memory {:.0f} MiB{}",
            options.architecture, width, height, batch, passes, backend.name(),
            backend.description(), threads, options.train ? "training" : "inference", per_second,
            options.train ? "images" : "frames", 1e3 * median, options.repeats, 1e3 * times.front(),
            gflops, gflop_per_image, options.train ? ", x3 for a training step" : "",
            peak_memory_mib(),
            backend.name().rfind("cuda", 0) == 0
                ? fmt::format(", GPU memory {:.0f} MiB",
                              static_cast<double>(backend.peak_memory_bytes()) / (1024.0 * 1024.0))
                : std::string())
            .c_str());
  }
}

int run_bench(const BenchOptions& options) {
  const auto [width, height] = parse_size_option(options.size, "--size", 16);
  const std::vector<int> batches = parse_batches(options.batches);
  if (options.repeats < 1 || options.warmup < 0) {
    throw UsageError("--repeats must be at least 1 and --warmup at least 0");
  }
  // --precision is the arithmetic of inference plans, and of training steps where the backend
  // trains in mixed precision (the CPU in bf16); other training steps are fp32.
  auto backend =
      devices::make_backend(options.device, devices::parse_plan_precision(options.precision));
  if (!options.video.empty() && !options.pipeline) {
    throw UsageError("--video goes with --pipeline", "labpose bench --pipeline --video VIDEO");
  }
  if (options.decode_on_gpu && options.video.empty()) {
    throw UsageError("--decode gpu decodes a video: it goes with --pipeline --video",
                     "labpose bench --pipeline --video VIDEO --decode gpu");
  }
  if (options.pipeline) {
    if (options.train) throw UsageError("--pipeline times analysis; it does not go with --train");
    for (const int batch : batches) {
      measure_pipeline(
          {options.architecture, options.bodyparts, batch, width, height, options.slots,
           options.video, options.repeats, options.warmup, options.json, options.decode_on_gpu},
          *backend);
    }
    return 0;
  }
  auto net = nets::build_pose_net(*backend, {options.architecture, options.bodyparts, true},
                                  {options.identity, options.limbs});
  nets::initialize_pose_net(*net, 1);
  for (const int batch : batches) measure(options, *backend, *net, batch, width, height);
  return 0;
}

}  // namespace

Command bench_command() {
  Command command;
  command.name = "bench";
  command.summary = "measure network speed on this machine (frames/s, GFLOP/s, memory)";
  command.define = [](CLI::App& app) -> std::function<int()> {
    auto options = std::make_shared<BenchOptions>();
    app.add_option("--arch", options->architecture,
                   fmt::format("{}", fmt::join(nets::pose_architectures(), ", ")));
    app.add_option("--size", options->size, "image size WIDTHxHEIGHT (default 640x480)");
    app.add_option("--batch", options->batches,
                   "images per batch, or a list such as 1,8,32,64 (default 1)");
    app.add_option("--device", options->device, "cpu, cuda, cuda:N, auto or ref (default cpu)");
    app.add_option(
        "--precision", options->precision,
        "arithmetic: fp32 (default), bf16 (a GPU's tensor cores, or a CPU with bf16 units, where "
        "--train steps are mixed precision), int8 (a CPU with VNNI; inference, calibrated on the "
        "random input), fp16 (GPUs), tf32 (fp32 with TF32 convolutions on a GPU of compute "
        "capability 8.0+, in plans and --train steps), or auto (bf16 on a CPU with bf16 units, "
        "else fp32)");
    app.add_option("--bodyparts", options->bodyparts, "bodyparts J of the head (default 4)");
    app.add_option("--limbs", options->limbs,
                   "a multi-animal network: PAF limbs (2 channels each, trained by --train with "
                   "DeepLabCut's 0.1 x squared error; default 0)");
    app.add_option("--identity", options->identity,
                   "a multi-animal network: identity channels after the score maps (default 0)");
    app.add_option("--repeats", options->repeats,
                   "timed repeats; the median is reported (default 10)");
    app.add_option("--warmup", options->warmup, "untimed runs first (default 2)");
    app.add_flag("--train", options->train,
                 "time a training step (forward, loss, backward, SGD) instead");
    app.add_flag("--pipeline", options->pipeline,
                 "time analysis's whole path instead of the plan alone: synthetic 8-bit frames "
                 "through the slots' threads, uploaded, run, peaks found on the device and "
                 "decoded (--repeats batches after --warmup)");
    app.add_option("--slots", options->slots,
                   "with --pipeline: batches on the device at once (default: as analyze, 3 on a "
                   "GPU and 1 on the CPU)")
        ->check(CLI::Range(1, 8));
    app.add_option("--video", options->video,
                   "with --pipeline: the frames of this video instead of synthetic ones, decoded "
                   "as analyze decodes them (--size is the video's), timed beside decoding alone");
    add_decode_option(app, &options->decode_on_gpu);
    app.add_flag("--json", options->json, "print one JSON object with \"fps\"");
    app.footer(
        "Threads: OMP_NUM_THREADS (default: all cores). Compare figures from one run: the machine "
        "may be busy.");
    return [options]() { return run_bench(*options); };
  };
  return command;
}

}  // namespace labpose::tools
