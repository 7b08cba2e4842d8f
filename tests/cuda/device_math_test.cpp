// The CUDA backend's device arithmetic, run on the CPU: the __host__ __device__ functions its
// kernels call per element (layout_math.hpp, op_math.hpp) and the padding split of its cuDNN
// convolutions (conv_geometry.hpp), each emulated over whole tensors on the host and compared with
// the reference backend (and with the CPU backend's own NHWC layout). No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>

#include "core/error.hpp"
#include "cuda/conv_geometry.hpp"
#include "cuda/cudnn_conv.hpp"
#include "cuda/layout_math.hpp"
#include "cuda/op_math.hpp"
#include "cuda/state.hpp"
#include "nets/cpu/backend.hpp"
#include "nets/ref/backend.hpp"
#include "tests/cuda/layout_support.hpp"
#include "tests/nets/nets_test_support.hpp"

namespace labpose::cuda {
namespace {

using nets::ConvGeometry;
using nets::PoolGeometry;
using nets::Shape;
using nets::Tensor;
using nets::testing::close;
using nets::testing::download;
using nets::testing::random_values;
using nets::testing::upload;
using nets::testing::upload_flat;
using testing::to_nchw;
using testing::to_nhwc;

// The window_copy kernel on NCHW host values (through the NHWC layout it works in).
std::vector<float> window_copy(const std::vector<float>& nchw, const Shape& from, const Shape& to,
                               const WindowCopy& g) {
  const std::vector<float> source = to_nhwc(nchw, from);
  std::vector<float> out(static_cast<std::size_t>(to.elements()));
  for (std::int64_t i = 0; i < to.elements(); ++i) {
    const std::int64_t k = window_source_index(i, g);
    out[static_cast<std::size_t>(i)] = k < 0 ? 0.0F : source[static_cast<std::size_t>(k)];
  }
  return to_nchw(out, to);
}

TEST(CudaLayout, NhwcIndexingIsTheCpuBackendsNhwcLayout) {
  nets::cpu::CpuBackend cpu;
  for (const Shape& s : {Shape{2, 3, 4, 5}, Shape{1, 1, 1, 7}, Shape{3, 17, 2, 1}}) {
    const auto values = random_values(s.elements(), 3);
    const Tensor t = upload(cpu, s, values);  // stored NHWC by oneDNN's conventions
    const std::vector<float> stored(t.data(), t.data() + s.elements());
    EXPECT_EQ(to_nhwc(values, s), stored) << s.text();
    EXPECT_EQ(to_nchw(stored, s), values) << s.text();
  }
}

TEST(CudaLayout, FiltersReorderToKrsc) {
  // PyTorch (K, C/g, R, S) -> cuDNN's NHWC filter (K, R, S, C/g): the same function with N = K.
  const std::int64_t K = 4, C = 3, R = 2, S = 5;
  std::vector<float> kcrs(static_cast<std::size_t>(K * C * R * S));
  for (std::size_t i = 0; i < kcrs.size(); ++i) kcrs[i] = static_cast<float>(i);
  const std::vector<float> krsc = to_nhwc(kcrs, Shape{K, C, R, S});
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t c = 0; c < C; ++c) {
      for (std::int64_t r = 0; r < R; ++r) {
        for (std::int64_t s = 0; s < S; ++s) {
          EXPECT_EQ(krsc[static_cast<std::size_t>(((k * R + r) * S + s) * C + c)],
                    kcrs[static_cast<std::size_t>(((k * C + c) * R + r) * S + s)]);
        }
      }
    }
  }
}

TEST(CudaLayout, WindowCopyPadsWithZerosAndCropsBack) {
  const Shape small{2, 3, 4, 5}, big{2, 3, 7, 6};
  const auto values = random_values(small.elements(), 4);
  // 1 row on top, 2 below, 0 columns left, 1 right.
  const WindowCopy pad{3, 4, 5, 7, 6, -1, 0};
  const auto padded = window_copy(values, small, big, pad);
  EXPECT_EQ(padded[static_cast<std::size_t>(((1 * 3 + 2) * 7 + 0) * 6 + 3)], 0.0F) << "top row";
  EXPECT_EQ(padded[static_cast<std::size_t>(((1 * 3 + 2) * 7 + 2) * 6 + 5)], 0.0F) << "right";
  EXPECT_EQ(padded[static_cast<std::size_t>(((1 * 3 + 2) * 7 + 3) * 6 + 4)],
            values[static_cast<std::size_t>(((1 * 3 + 2) * 4 + 2) * 5 + 4)]);
  const WindowCopy crop{3, 7, 6, 4, 5, 1, 0};
  EXPECT_EQ(window_copy(padded, big, small, crop), values);
}

// ---- the padding split around cuDNN, checked with the reference backend ------------------------
struct AsymmetricCase {
  const char* name;
  Shape x, w;
  ConvGeometry geometry;
};

ConvGeometry padded(int stride, int top, int left, int bottom, int right, int dilation = 1,
                    int groups = 1) {
  ConvGeometry g = ConvGeometry::symmetric(stride, 0, dilation, groups);
  g.pad_top = top;
  g.pad_left = left;
  g.pad_bottom = bottom;
  g.pad_right = right;
  return g;
}

TEST(CudaConvGeometry, ExplicitPaddingPlusSymmetricCudnnPaddingIsTheAsymmetricConvolution) {
  nets::ref::RefBackend ref;
  for (const AsymmetricCase& c : {AsymmetricCase{"TF same, stride 2", Shape{2, 4, 8, 7},
                                                 Shape{6, 4, 3, 3}, padded(2, 1, 0, 2, 1)},
                                  AsymmetricCase{"grouped dilated", Shape{1, 6, 9, 8},
                                                 Shape{6, 2, 3, 3}, padded(1, 3, 1, 2, 2, 2, 3)},
                                  AsymmetricCase{"symmetric needs no copy", Shape{1, 3, 5, 5},
                                                 Shape{2, 3, 3, 3}, padded(1, 1, 1, 1, 1)}}) {
    SCOPED_TRACE(c.name);
    const Shape ys = nets::conv2d_output_shape(c.x, c.w, c.geometry);
    const CudnnConvGeometry g = cudnn_conv_geometry(c.x, ys, c.w, c.geometry);
    EXPECT_EQ(g.symmetric.pad_top, g.symmetric.pad_bottom);
    EXPECT_EQ(g.symmetric.pad_left, g.symmetric.pad_right);
    EXPECT_EQ(nets::conv2d_output_shape(g.padded_in, c.w, g.symmetric), ys);
    EXPECT_EQ(g.explicit_padding(), std::string(c.name) != "symmetric needs no copy");

    const auto x = random_values(c.x.elements(), 1), w = random_values(c.w.elements(), 2);
    const auto dy = random_values(ys.elements(), 3);
    const Tensor tw = upload_flat(ref, c.w, w), tdy = upload(ref, ys, dy);
    const Tensor tx = upload(ref, c.x, x);
    const Tensor tx_padded = upload(ref, g.padded_in, window_copy(x, c.x, g.padded_in, g.pad()));
    Tensor expected = ref.allocate(ys), actual = ref.allocate(ys), none;
    // Forward: conv(pad(x)) with symmetric padding.
    ref.conv2d_forward(tx, tw, none, expected, c.geometry);
    ref.conv2d_forward(tx_padded, tw, none, actual, g.symmetric);
    EXPECT_TRUE(close(download(ref, actual), download(ref, expected), 1e-6, 1e-6)) << "forward";
    // Backward data: crop(conv^T(dy)) into the padded shape.
    Tensor dx = ref.allocate(c.x), dx_padded = ref.allocate(g.padded_in);
    ref.conv2d_backward_data(tdy, tw, dx, c.geometry);
    ref.conv2d_backward_data(tdy, tw, dx_padded, g.symmetric);
    EXPECT_TRUE(close(window_copy(download(ref, dx_padded), g.padded_in, c.x, g.crop()),
                      download(ref, dx), 1e-6, 1e-6))
        << "backward data";
    // Backward weights: from pad(x).
    Tensor dw = nets::testing::allocate_flat(ref, c.w),
           dw_padded = nets::testing::allocate_flat(ref, c.w);
    ref.conv2d_backward_weights(tx, tdy, dw, none, c.geometry);
    ref.conv2d_backward_weights(tx_padded, tdy, dw_padded, none, g.symmetric);
    EXPECT_TRUE(close(download(ref, dw_padded), download(ref, dw), 1e-6, 1e-6))
        << "backward weights";
  }
}

TEST(CudaConvGeometry, TransposedConvolutionsCropTheirOutputAndPadTheirGradient) {
  nets::ref::RefBackend ref;
  ConvGeometry same = padded(2, 0, 1, 1, 0);  // TensorFlow's "same" transposed conv, stride 2
  same.output_pad_h = 1;
  ConvGeometry head = padded(2, 1, 1, 1, 1);  // DeepLabCut's head: symmetric, output padding
  head.output_pad_h = head.output_pad_w = 1;
  for (const auto& [name, x_shape, w_shape, geometry] :
       {std::tuple{"asymmetric", Shape{2, 4, 5, 6}, Shape{4, 3, 3, 3}, same},
        std::tuple{"pose head", Shape{1, 6, 4, 5}, Shape{6, 2, 3, 3}, head},
        std::tuple{"grouped asymmetric", Shape{1, 4, 3, 4}, Shape{4, 3, 3, 3},
                   padded(1, 2, 0, 1, 1, 1, 2)}}) {
    SCOPED_TRACE(name);
    const Shape ys = nets::conv_transpose2d_output_shape(x_shape, w_shape, geometry);
    // The forward convolution of a transposed one maps y (conv_in) to x (conv_out).
    const CudnnConvGeometry g = cudnn_conv_geometry(ys, x_shape, w_shape, geometry);
    EXPECT_EQ(nets::conv2d_output_shape(g.padded_in, w_shape, g.symmetric), x_shape);
    EXPECT_EQ(nets::conv_transpose2d_output_shape(x_shape, w_shape, g.symmetric), g.padded_in);

    const auto x = random_values(x_shape.elements(), 5), w = random_values(w_shape.elements(), 6);
    const auto dy = random_values(ys.elements(), 7);
    const Tensor tx = upload(ref, x_shape, x), tw = upload_flat(ref, w_shape, w),
                 tdy = upload(ref, ys, dy);
    const Tensor tdy_padded = upload(ref, g.padded_in, window_copy(dy, ys, g.padded_in, g.pad()));
    Tensor none;
    // Forward: crop(convT with symmetric padding).
    Tensor y = ref.allocate(ys), y_padded = ref.allocate(g.padded_in);
    ref.conv_transpose2d_forward(tx, tw, none, y, geometry);
    ref.conv_transpose2d_forward(tx, tw, none, y_padded, g.symmetric);
    EXPECT_TRUE(close(window_copy(download(ref, y_padded), g.padded_in, ys, g.crop()),
                      download(ref, y), 1e-6, 1e-6))
        << "forward";
    // Backward data: from pad(dy).
    Tensor dx = ref.allocate(x_shape), dx_from_padded = ref.allocate(x_shape);
    ref.conv_transpose2d_backward_data(tdy, tw, dx, geometry);
    ref.conv_transpose2d_backward_data(tdy_padded, tw, dx_from_padded, g.symmetric);
    EXPECT_TRUE(close(download(ref, dx_from_padded), download(ref, dx), 1e-6, 1e-6))
        << "backward data";
    // Backward weights: from pad(dy).
    Tensor dw = nets::testing::allocate_flat(ref, w_shape),
           dw_padded = nets::testing::allocate_flat(ref, w_shape);
    ref.conv_transpose2d_backward_weights(tx, tdy, dw, none, geometry);
    ref.conv_transpose2d_backward_weights(tx, tdy_padded, dw_padded, none, g.symmetric);
    EXPECT_TRUE(close(download(ref, dw_padded), download(ref, dw), 1e-6, 1e-6))
        << "backward weights";
  }
}

// ---- cuDNN's math types (descriptors need no GPU) -------------------------------------------
cudnnMathType_t math_of(const ConvolutionDescriptor& descriptor) {
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  EXPECT_EQ(cudnn().GetConvolutionMathType(descriptor.get(), &math), CUDNN_STATUS_SUCCESS);
  return math;
}

TEST(CudnnConvMath, StrictFp32ForbidsTensorCoresAndTf32AllowsThem) {
  const ConvGeometry g = ConvGeometry::symmetric(1, 1, 2, 4);
  // Strict fp32 (analysis, --precision fp32): FMA only, so results match the reference to float
  // rounding; TF32 (training's default on compute capability 8.0+): cuDNN's default math, which
  // lets it pick TF32 tensor-core kernels. Half types always ask for tensor cores.
  EXPECT_EQ(math_of(make_convolution_descriptor(g, DataType::f32, Fp32Math::strict, "test")),
            CUDNN_FMA_MATH);
  EXPECT_EQ(math_of(make_convolution_descriptor(g, DataType::f32, Fp32Math::tf32, "test")),
            CUDNN_DEFAULT_MATH);
  for (const DataType half : {DataType::f16, DataType::bf16}) {
    for (const Fp32Math math : {Fp32Math::strict, Fp32Math::tf32}) {
      EXPECT_EQ(math_of(make_convolution_descriptor(g, half, math, "test")), CUDNN_TENSOR_OP_MATH)
          << name_of(half);
    }
  }
  // Which of cuDNN's ranked algorithms each may take.
  for (const cudnnMathType_t tensor_cores :
       {CUDNN_TENSOR_OP_MATH, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION}) {
    EXPECT_FALSE(
        algorithm_usable(DataType::f32, Fp32Math::strict, CUDNN_STATUS_SUCCESS, tensor_cores, 0));
    EXPECT_TRUE(
        algorithm_usable(DataType::f32, Fp32Math::tf32, CUDNN_STATUS_SUCCESS, tensor_cores, 0));
    EXPECT_TRUE(
        algorithm_usable(DataType::f16, Fp32Math::strict, CUDNN_STATUS_SUCCESS, tensor_cores, 0));
  }
  EXPECT_TRUE(algorithm_usable(DataType::f32, Fp32Math::strict, CUDNN_STATUS_SUCCESS,
                               CUDNN_FMA_MATH, std::size_t{1} << 20));
  EXPECT_FALSE(algorithm_usable(DataType::f32, Fp32Math::tf32, CUDNN_STATUS_NOT_SUPPORTED,
                                CUDNN_DEFAULT_MATH, 0));
  EXPECT_FALSE(algorithm_usable(DataType::f32, Fp32Math::tf32, CUDNN_STATUS_SUCCESS,
                                CUDNN_DEFAULT_MATH, std::size_t{4} << 30))
      << "workspaces over the limit are skipped";
}

TEST(CudnnConvMath, AlgorithmsAreMeasuredUnlessTheEnvironmentAsksForHeuristics) {
  const char* before = std::getenv("LABPOSE_CUDNN_FIND");
  const std::string saved = before != nullptr ? before : "";
  unsetenv("LABPOSE_CUDNN_FIND");
  EXPECT_EQ(algorithm_choice_from_environment(), AlgorithmChoice::measured);
  setenv("LABPOSE_CUDNN_FIND", "0", 1);
  EXPECT_EQ(algorithm_choice_from_environment(), AlgorithmChoice::heuristics);
  setenv("LABPOSE_CUDNN_FIND", "1", 1);
  EXPECT_EQ(algorithm_choice_from_environment(), AlgorithmChoice::measured);
  if (before != nullptr) {
    setenv("LABPOSE_CUDNN_FIND", saved.c_str(), 1);
  } else {
    unsetenv("LABPOSE_CUDNN_FIND");
  }
}

// The first usable algorithm cuDNN ranked is taken; the usable ones after it are its fallbacks,
// tried in turn when it cannot run; strict fp32 never falls back to tensor-core math, and a
// workspace cuDNN does not confirm or one over the limit rules an algorithm out.
TEST(CudnnConvMath, TheFirstUsableAlgorithmIsTakenAndTheRestAreItsFallbacks) {
  const std::size_t over_limit = std::size_t{1} << 31;
  const std::vector<RankedAlgorithm> ranked = {
      {7, CUDNN_STATUS_NOT_SUPPORTED, CUDNN_FMA_MATH, 0},
      {1, CUDNN_STATUS_SUCCESS, CUDNN_TENSOR_OP_MATH, 0},
      {2, CUDNN_STATUS_SUCCESS, CUDNN_FMA_MATH, 100},
      {3, CUDNN_STATUS_SUCCESS, CUDNN_FMA_MATH, over_limit},
      {4, CUDNN_STATUS_SUCCESS, CUDNN_FMA_MATH, 50},
      {5, CUDNN_STATUS_SUCCESS, CUDNN_DEFAULT_MATH, 10}};
  std::vector<cudnnMathType_t> maths;  // as set before each query
  const WorkspaceSize workspace_size = [&maths](int algorithm, cudnnMathType_t math,
                                                std::size_t* bytes) {
    maths.push_back(math);
    *bytes = static_cast<std::size_t>(algorithm) * 1000;
    return algorithm == 4 ? CUDNN_STATUS_NOT_SUPPORTED : CUDNN_STATUS_SUCCESS;
  };
  CudnnConv strict;
  take_ranked(strict, ranked, workspace_size, "a test convolution");
  EXPECT_EQ(strict.algorithm, 2);
  EXPECT_EQ(strict.workspace_bytes, 2000U);
  ASSERT_EQ(strict.fallbacks.size(), 1U);
  EXPECT_EQ(strict.fallbacks[0].algorithm, 5);
  EXPECT_EQ(strict.fallbacks[0].workspace_bytes, 5000U) << "the size cuDNN confirmed";
  EXPECT_EQ(maths.back(), CUDNN_FMA_MATH) << "the descriptor ends with the chosen math";

  CudnnConv tf32;
  tf32.math = Fp32Math::tf32;
  take_ranked(tf32, ranked, workspace_size, "a test convolution");
  EXPECT_EQ(tf32.algorithm, 1);
  std::vector<int> fallbacks;
  for (const RankedAlgorithm& next : tf32.fallbacks) fallbacks.push_back(next.algorithm);
  EXPECT_EQ(fallbacks, (std::vector<int>{2, 5}));
  EXPECT_EQ(maths.back(), CUDNN_TENSOR_OP_MATH);

  CudnnConv none;
  try {
    take_ranked(none, {ranked[0], ranked[3]}, workspace_size, "a test convolution");
    ADD_FAILURE() << "no usable algorithm";
  } catch (const Error& error) {
    EXPECT_TRUE(std::string(error.what())
                    .find("cuDNN has no fp32 algorithm for a test "
                          "convolution") != std::string::npos)
        << error.what();
  }
  EXPECT_TRUE(falls_back(CUDNN_STATUS_NOT_SUPPORTED));
  EXPECT_TRUE(falls_back(CUDNN_STATUS_EXECUTION_FAILED));
  EXPECT_FALSE(falls_back(CUDNN_STATUS_ALLOC_FAILED)) << "the GPU's memory, not the algorithm";
}

// ---- elementwise ops -------------------------------------------------------------------------
struct HostLoad {
  const std::vector<float>* values;
  float operator()(std::int64_t i) const { return (*values)[static_cast<std::size_t>(i)]; }
};

// ---- score-map peaks ---------------------------------------------------------------------------
// peaks.cu's block on the host: each of `threads` threads scans its strided cells, then the tree
// reduction of its shared memory, then the NaN-first-cell rule.
std::int64_t peak_like_the_kernel(const std::vector<float>& map, int threads) {
  const HostLoad load{&map};
  std::vector<PeakCandidate> shared(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t)
    shared[static_cast<std::size_t>(t)] =
        thread_peak(load, static_cast<std::int64_t>(map.size()), t, threads);
  for (int stride = threads / 2; stride > 0; stride /= 2) {
    for (int t = 0; t < stride; ++t) {
      const PeakCandidate challenger = shared[static_cast<std::size_t>(t + stride)];
      if (peak_replaces(challenger, shared[static_cast<std::size_t>(t)]))
        shared[static_cast<std::size_t>(t)] = challenger;
    }
  }
  return peak_cell(shared[0], map[0]);
}

TEST(CudaPeaks, TheKernelsReductionFindsTheFirstMaximumAsTheSequentialLoop) {
  std::mt19937 generator(5);
  std::uniform_int_distribution<int> level(0, 6);  // few distinct values: many ties
  std::uniform_int_distribution<int> coin(0, 19);
  for (const std::int64_t cells : {1, 2, 7, 255, 256, 257, 1000, 4800}) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<float> map(static_cast<std::size_t>(cells));
      for (float& v : map)
        v = coin(generator) == 0 ? std::nanf("") : static_cast<float>(level(generator));
      if (trial == 0) map[0] = std::nanf("");  // a NaN first cell stays the peak
      // The reference's rule (nets/peaks.cpp, pipeline/pose/decode.cpp): strictly greater replaces.
      std::int64_t expected = 0;
      for (std::int64_t i = 1; i < cells; ++i) {
        if (map[static_cast<std::size_t>(i)] > map[static_cast<std::size_t>(expected)])
          expected = i;
      }
      for (const int threads : {256, 32, 1})
        EXPECT_EQ(peak_like_the_kernel(map, threads), expected)
            << cells << " cells, trial " << trial << ", " << threads << " threads";
    }
  }
}

TEST(CudaOps, MaxPoolingMatchesTheReferenceIncludingTiesAndAsymmetricPadding) {
  nets::ref::RefBackend ref;
  for (const auto& [shape, g, integers] :
       {std::tuple{Shape{2, 3, 9, 7}, PoolGeometry{}, false},
        std::tuple{Shape{1, 5, 8, 8}, PoolGeometry{2, 2, 2, 2, 0, 0, 0, 0}, false},
        std::tuple{Shape{3, 4, 6, 5}, PoolGeometry{3, 3, 2, 2, 1, 0, 2, 1}, true},
        std::tuple{Shape{2, 2, 7, 7}, PoolGeometry{3, 2, 1, 2, 1, 1, 1, 1}, true}}) {
    SCOPED_TRACE(shape.text());
    const Shape ys = nets::max_pool_output_shape(shape, g);
    auto x = random_values(shape.elements(), 9), dy = random_values(ys.elements(), 10);
    if (integers) {
      for (float& v : x) v = std::round(2.0F * v);  // many ties: the first maximum must win
    }
    Tensor y = ref.allocate(ys), dx = ref.allocate(shape);
    ref.max_pool_forward(upload(ref, shape, x), y, g);
    ref.max_pool_backward(upload(ref, ys, dy), upload(ref, shape, x), dx, g);

    const PoolShape s = make_pool_shape(shape, ys, g);
    const std::vector<float> x_nhwc = to_nhwc(x, shape), dy_nhwc = to_nhwc(dy, ys);
    std::vector<float> y_nhwc(static_cast<std::size_t>(ys.elements()));
    for (std::int64_t i = 0; i < ys.elements(); ++i) {
      const std::int64_t best = pool_output_argmax(HostLoad{&x_nhwc}, s, i);
      y_nhwc[static_cast<std::size_t>(i)] =
          best < 0 ? 0.0F : x_nhwc[static_cast<std::size_t>(best)];
    }
    std::vector<float> dx_nhwc(static_cast<std::size_t>(shape.elements()));
    for (std::int64_t i = 0; i < shape.elements(); ++i)
      dx_nhwc[static_cast<std::size_t>(i)] =
          max_pool_input_gradient(HostLoad{&dy_nhwc}, HostLoad{&x_nhwc}, s, i);
    EXPECT_EQ(to_nchw(y_nhwc, ys), download(ref, y));
    EXPECT_EQ(to_nchw(dx_nhwc, shape), download(ref, dx));
  }
}

TEST(CudaOps, PoolingWindowsCoveringAPositionAreFoundExactly) {
  for (int kernel = 1; kernel <= 4; ++kernel) {
    for (int stride = 1; stride <= 3; ++stride) {
      for (int pad = 0; pad < kernel; ++pad) {
        const std::int64_t input = 11;
        const std::int64_t outputs = nets::conv_output_size(input, kernel, stride, pad, pad, 1);
        for (std::int64_t h = 0; h < input; ++h) {
          const IndexRange range = windows_covering(h, kernel, stride, pad, outputs);
          for (std::int64_t p = 0; p < outputs; ++p) {
            const bool covers = p * stride - pad <= h && h < p * stride - pad + kernel;
            EXPECT_EQ(covers, p >= range.begin && p < range.end)
                << "kernel " << kernel << " stride " << stride << " pad " << pad << " h " << h
                << " p " << p;
          }
        }
      }
    }
  }
}

TEST(CudaOps, ReluAndTheFusedEpilogueFollowTheReferenceRules) {
  nets::ref::RefBackend ref;
  const Shape shape{1, 1, 1, 8};
  const std::vector<float> x = {-1.0F, -0.0F, 0.0F, 0.5F, 6.0F, 6.5F, 3.0F, -7.0F};
  const std::vector<float> dy = {1, 2, 3, 4, 5, 6, 7, 8};
  for (const float cap : {0.0F, 6.0F}) {
    Tensor y = ref.allocate(shape), dx = ref.allocate(shape);
    ref.relu_forward(upload(ref, shape, x), y, cap);
    ref.relu_backward(upload(ref, shape, dy), y, dx, cap);
    const auto expected_y = download(ref, y), expected_dx = download(ref, dx);
    for (std::size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(relu_value(x[i], cap), expected_y[i]) << i << " cap " << cap;
      EXPECT_EQ(relu_gradient(dy[i], expected_y[i], cap), expected_dx[i]) << i << " cap " << cap;
    }
  }
  // after(before(conv + bias) + residual), as the generic plan runs it.
  EXPECT_EQ(fused_output(-1.0F, 0.5F, true, 2.0F, 0.0F, 6.0F), 2.0F);
  EXPECT_EQ(fused_output(-1.0F, 0.5F, true, 2.0F, -1.0F, -1.0F), 1.5F);
  EXPECT_EQ(fused_output(4.0F, 3.0F, false, 100.0F, 6.0F, -1.0F), 6.0F);
  EXPECT_EQ(fused_output(4.0F, 3.0F, true, 1.0F, 6.0F, 0.0F), 7.0F);
  EXPECT_EQ(fused_output(-4.0F, 3.0F, false, 0.0F, -1.0F, 0.0F), 0.0F);
}

TEST(CudaOps, LossTermsAndGradientsMatchTheReference) {
  nets::ref::RefBackend ref;
  const Shape shape{2, 3, 4, 5};
  const auto logits = random_values(shape.elements(), 13, 6.0),
             predictions = random_values(shape.elements(), 14, 3.0);
  auto targets = random_values(shape.elements(), 15), weights = random_values(shape.elements(), 16);
  for (float& t : targets) t = t > 0 ? 1.0F : 0.0F;
  for (float& w : weights) w = std::abs(w);
  const Tensor tl = upload(ref, shape, logits), tp = upload(ref, shape, predictions),
               tt = upload(ref, shape, targets), tw = upload(ref, shape, weights);
  Tensor d1 = ref.allocate(shape), d2 = ref.allocate(shape);
  const double cross_entropy = ref.sigmoid_cross_entropy_forward(tl, tt, tw);
  const double huber = ref.huber_forward(tp, tt, tw, 1.0F);
  ref.sigmoid_cross_entropy_backward(tl, tt, tw, 0.5F, d1);
  ref.huber_backward(tp, tt, tw, 1.0F, 0.05F, d2);
  double sum1 = 0.0, sum2 = 0.0;
  std::vector<float> g1(logits.size()), g2(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i) {
    sum1 += weights[i] * sigmoid_cross_entropy_term(logits[i], targets[i]);
    sum2 += weights[i] * huber_term(double{predictions[i]} - targets[i], 1.0);
    g1[i] = sigmoid_cross_entropy_gradient(logits[i], targets[i], weights[i], 0.5F);
    g2[i] = huber_gradient(predictions[i] - targets[i], weights[i], 1.0F, 0.05F);
  }
  EXPECT_NEAR(sum1, cross_entropy, 1e-9 * std::abs(cross_entropy));
  EXPECT_NEAR(sum2, huber, 1e-9 * std::abs(huber));
  EXPECT_TRUE(close(g1, download(ref, d1), 1e-5, 1e-7));
  EXPECT_TRUE(close(g2, download(ref, d2), 1e-5, 1e-7));
}

TEST(CudaOps, OptimizerUpdatesMatchTheReferenceOverTwoSteps) {
  nets::ref::RefBackend ref;
  const std::int64_t count = 500;
  const Shape s{count};
  const auto p0 = random_values(count, 17), g1 = random_values(count, 18),
             g2 = random_values(count, 19);
  // SGD.
  Tensor parameters = upload(ref, s, p0), velocity = ref.allocate(s);
  ref.fill(velocity, 0.0F);
  const nets::SgdSettings sgd{0.1F, 0.9F, 1e-4F};
  ref.sgd_step(parameters, upload(ref, s, g1), velocity, sgd);
  ref.sgd_step(parameters, upload(ref, s, g2), velocity, sgd);
  std::vector<float> p = p0, v(p0.size(), 0.0F);
  for (const auto* g : {&g1, &g2}) {
    for (std::size_t i = 0; i < p.size(); ++i)
      sgd_update(p[i], v[i], (*g)[i], sgd.learning_rate, sgd.momentum, sgd.weight_decay);
  }
  EXPECT_TRUE(close(p, download(ref, parameters), 1e-5, 1e-6)) << "sgd";
  // Adam and AdamW, with the step constants the backend computes.
  for (const bool decoupled : {false, true}) {
    const nets::AdamSettings settings{1e-3F, 0.9F, 0.999F, 1e-8F, 0.01F, decoupled};
    Tensor adam = upload(ref, s, p0), m = ref.allocate(s), second = ref.allocate(s);
    ref.fill(m, 0.0F);
    ref.fill(second, 0.0F);
    ref.adam_step(adam, upload(ref, s, g1), m, second, settings, 1);
    ref.adam_step(adam, upload(ref, s, g2), m, second, settings, 2);
    std::vector<float> q = p0, first_moment(p0.size(), 0.0F), second_moment(p0.size(), 0.0F);
    int step = 0;
    for (const auto* g : {&g1, &g2}) {
      ++step;
      AdamStep constants;
      constants.step_size = static_cast<float>(settings.learning_rate /
                                               (1.0 - std::pow(double{settings.beta1}, step)));
      constants.sqrt_correction2 =
          static_cast<float>(std::sqrt(1.0 - std::pow(double{settings.beta2}, step)));
      constants.decay = decoupled ? 1.0F - settings.learning_rate * settings.weight_decay : 1.0F;
      constants.l2 = decoupled ? 0.0F : settings.weight_decay;
      for (std::size_t i = 0; i < q.size(); ++i)
        adam_update(q[i], first_moment[i], second_moment[i], (*g)[i], constants);
    }
    EXPECT_TRUE(close(q, download(ref, adam), 1e-5, 1e-6)) << "decoupled " << decoupled;
  }
}

TEST(CudaOps, FrozenBatchNormGradientAndCudnnStatisticsConversions) {
  nets::ref::RefBackend ref;
  const Shape shape{2, 4, 3, 5};
  const auto x = random_values(shape.elements(), 1, 3.0), dy = random_values(shape.elements(), 2);
  const auto gamma = random_values(4, 3), mean = random_values(4, 5);
  auto variance = random_values(4, 6);
  for (float& v : variance) v = 0.5F + std::abs(v);
  const float epsilon = 1e-5F;
  const Shape cs{4};
  Tensor dx = ref.allocate(shape), dgamma = ref.allocate(cs), dbeta = ref.allocate(cs);
  ref.batch_norm_backward(upload(ref, shape, dy), upload(ref, shape, x), upload(ref, cs, gamma),
                          upload(ref, cs, mean), upload(ref, cs, variance), epsilon, true, dx,
                          dgamma, dbeta);
  // The kernels' arithmetic: per-channel inverse std, dx elementwise, two channel sums.
  std::vector<float> expected_dx(x.size());
  std::vector<double> sum_dy(4, 0.0), sum_dy_xhat(4, 0.0);
  const std::int64_t plane = shape.h() * shape.w();
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto c = static_cast<std::size_t>((static_cast<std::int64_t>(i) / plane) % 4);
    const float inverse = inverse_std(variance[c], epsilon);
    expected_dx[i] = dy[i] * (gamma[c] * inverse);
    sum_dy[c] += dy[i];
    sum_dy_xhat[c] += static_cast<double>(dy[i]) * ((x[i] - mean[c]) * inverse);
  }
  EXPECT_TRUE(close(expected_dx, download(ref, dx), 1e-5, 1e-7));
  const auto got_dgamma = download(ref, dgamma), got_dbeta = download(ref, dbeta);
  for (std::size_t c = 0; c < 4; ++c) {
    EXPECT_NEAR(sum_dy_xhat[c], got_dgamma[c], 1e-5 * (1.0 + std::abs(got_dgamma[c])));
    EXPECT_NEAR(sum_dy[c], got_dbeta[c], 1e-5 * (1.0 + std::abs(got_dbeta[c])));
  }
  // cuDNN saves 1 / sqrt(var + eps); the backend converts it back to the biased variance.
  for (const float v : {0.0F, 1e-6F, 1e-3F, 0.25F, 1.0F, 37.5F}) {
    EXPECT_NEAR(variance_from_inverse_std(inverse_std(v, epsilon), epsilon), v,
                1e-6 * (v + epsilon))
        << v;
  }
}

// Batch norm over several ranks: the kernels' gradient from totals, and the statistics from the
// sums of x and x^2 in double.
TEST(CudaOps, BatchNormAcrossRanksMatchesTheReference) {
  nets::ref::RefBackend ref;
  const Shape shape{2, 4, 3, 5}, cs{4};
  auto x = random_values(shape.elements(), 31, 3.0);
  for (float& v : x) v += 5.0F;
  const auto dy = random_values(shape.elements(), 32), gamma = random_values(4, 33);
  const auto totals_dy_xhat = random_values(4, 34), totals_dy = random_values(4, 35);
  const float epsilon = 1e-5F;
  const std::int64_t count = 3 * shape.n() * shape.h() * shape.w();
  const Tensor tx = upload(ref, shape, x);
  Tensor mean = ref.allocate(cs), variance = ref.allocate(cs), dx = ref.allocate(shape);
  ref.batch_norm_statistics(tx, mean, variance);
  ref.batch_norm_backward_data(upload(ref, shape, dy), tx, upload(ref, cs, gamma), mean, variance,
                               epsilon, upload(ref, cs, totals_dy_xhat), upload(ref, cs, totals_dy),
                               count, dx);
  const auto m = download(ref, mean), v = download(ref, variance);
  std::vector<double> sum(4, 0.0), squares(4, 0.0);
  std::vector<float> expected_dx(x.size());
  const std::int64_t plane = shape.h() * shape.w();
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto c = static_cast<std::size_t>((static_cast<std::int64_t>(i) / plane) % 4);
    sum[c] += x[i];
    squares[c] += double{x[i]} * x[i];
    expected_dx[i] =
        batch_norm_input_gradient(dy[i], x[i], m[c], inverse_std(v[c], epsilon), gamma[c],
                                  totals_dy[c], totals_dy_xhat[c], static_cast<float>(count));
  }
  EXPECT_TRUE(close(expected_dx, download(ref, dx), 1e-5, 1e-6));
  const double rows = static_cast<double>(shape.n() * plane);
  for (std::size_t c = 0; c < 4; ++c) {
    const double kernel_mean = sum[c] / rows;
    EXPECT_NEAR(kernel_mean, m[c], 1e-6 * std::abs(m[c]));
    EXPECT_NEAR(squares[c] / rows - kernel_mean * kernel_mean, v[c], 1e-5 * v[c]);
  }
}

// Batch norm of bf16 activations (a net training in bf16) is own kernels: the statistics as above,
// PyTorch's update of the running ones, one affine map per channel forward, and backward the two
// gradient sums then the input gradient from them over this batch's count. Composed on the host,
// that is the reference's batch norm in training, in inference and backward.
TEST(CudaOps, BatchNormAsKernelsOfBf16ActivationsMatchesTheReference) {
  nets::ref::RefBackend ref;
  const Shape shape{2, 4, 3, 5}, cs{4};
  auto x = random_values(shape.elements(), 41, 3.0);
  for (float& v : x) v += 2.0F;
  const auto dy = random_values(shape.elements(), 42), gamma = random_values(4, 43),
             beta = random_values(4, 44), running_mean_0 = random_values(4, 45);
  auto running_var_0 = random_values(4, 46);
  for (float& v : running_var_0) v = 0.5F + std::abs(v);
  const float epsilon = 1e-5F, momentum = 0.1F;
  const Tensor tx = upload(ref, shape, x), tgamma = upload(ref, cs, gamma),
               tbeta = upload(ref, cs, beta);
  Tensor y = ref.allocate(shape), mean = ref.allocate(cs), variance = ref.allocate(cs);
  Tensor running_mean = upload(ref, cs, running_mean_0),
         running_var = upload(ref, cs, running_var_0);
  ref.batch_norm_forward_training(tx, tgamma, tbeta, epsilon, momentum, y, mean, variance,
                                  running_mean, running_var);
  Tensor dx = ref.allocate(shape), dgamma = ref.allocate(cs), dbeta = ref.allocate(cs);
  ref.batch_norm_backward(upload(ref, shape, dy), tx, tgamma, mean, variance, epsilon, false, dx,
                          dgamma, dbeta);
  Tensor inference = ref.allocate(shape);
  ref.batch_norm_forward_inference(tx, tgamma, tbeta, running_mean, running_var, epsilon,
                                   inference);

  const auto m = download(ref, mean), v = download(ref, variance);
  const std::int64_t plane = shape.h() * shape.w();
  const std::int64_t rows = shape.n() * plane;
  const auto channel = [&](std::size_t i) {
    return static_cast<std::size_t>((static_cast<std::int64_t>(i) / plane) % 4);
  };
  std::vector<float> expected_running_mean(4), expected_running_var(4);
  std::vector<ChannelAffine> batch(4), running(4);
  std::vector<double> sum_dy(4, 0.0), sum_dy_xhat(4, 0.0);
  for (std::size_t c = 0; c < 4; ++c) {
    expected_running_mean[c] = running_statistic(running_mean_0[c], m[c], momentum);
    expected_running_var[c] = running_statistic(
        running_var_0[c], unbiased_variance(v[c], static_cast<double>(rows)), momentum);
    batch[c] = batch_norm_affine(gamma[c], beta[c], m[c], v[c], epsilon);
    running[c] = batch_norm_affine(gamma[c], beta[c], expected_running_mean[c],
                                   expected_running_var[c], epsilon);
  }
  std::vector<float> expected_y(x.size()), expected_inference(x.size()), expected_dx(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::size_t c = channel(i);
    expected_y[i] = x[i] * batch[c].scale + batch[c].shift;
    expected_inference[i] = x[i] * running[c].scale + running[c].shift;
    sum_dy[c] += dy[i];
    sum_dy_xhat[c] += static_cast<double>(dy[i]) * ((x[i] - m[c]) * inverse_std(v[c], epsilon));
  }
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::size_t c = channel(i);
    expected_dx[i] = batch_norm_input_gradient(
        dy[i], x[i], m[c], inverse_std(v[c], epsilon), gamma[c], static_cast<float>(sum_dy[c]),
        static_cast<float>(sum_dy_xhat[c]), static_cast<float>(rows));
  }
  EXPECT_TRUE(close(expected_y, download(ref, y), 1e-5, 1e-6));
  EXPECT_TRUE(close(expected_running_mean, download(ref, running_mean), 1e-6, 1e-7));
  EXPECT_TRUE(close(expected_running_var, download(ref, running_var), 1e-6, 1e-7));
  EXPECT_TRUE(close(expected_inference, download(ref, inference), 1e-5, 1e-6));
  EXPECT_TRUE(close(expected_dx, download(ref, dx), 1e-4, 1e-6));
  const auto got_dgamma = download(ref, dgamma), got_dbeta = download(ref, dbeta);
  for (std::size_t c = 0; c < 4; ++c) {
    EXPECT_NEAR(sum_dy_xhat[c], got_dgamma[c], 1e-5 * (1.0 + std::abs(got_dgamma[c])));
    EXPECT_NEAR(sum_dy[c], got_dbeta[c], 1e-5 * (1.0 + std::abs(got_dbeta[c])));
  }
  EXPECT_EQ(unbiased_variance(0.5, 1.0), 0.5) << "a single value keeps its variance";
}

}  // namespace
}  // namespace labpose::cuda
