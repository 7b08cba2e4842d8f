// The one place where oneDNN 2 (Debian's 2.6) and oneDNN 3 (3.2 from PyPI: tools/install-onednn.sh)
// differ for labpose: how primitive descriptions are made (2 builds an op description first, 3
// takes its parameters directly), the scales of int8 plans (2: output scales fixed when the
// primitive is made; 3: scales per argument, given as memory when it runs), and the names of
// a few queries. Internal to nets/cpu.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <unordered_map>
#include <vector>

namespace labpose::nets::cpu {

/// oneDNN's major version labpose was built against.
inline constexpr int kDnnlMajor = DNNL_VERSION_MAJOR;

using Args = std::unordered_map<int, dnnl::memory>;

/// The window of a convolution as oneDNN takes it (dilation counted from 0).
struct DnnlWindow {
  dnnl::memory::dims strides, dilates, pad_left, pad_right;
};

/// The dimensions of a description.
dnnl::memory::dims dims_of_desc(const dnnl::memory::desc& desc);

dnnl::convolution_forward::primitive_desc convolution_forward_pd(
    const dnnl::engine& engine, dnnl::prop_kind kind, const dnnl::memory::desc& src,
    const dnnl::memory::desc& weights, const dnnl::memory::desc& bias,
    const dnnl::memory::desc& dst, const DnnlWindow& window,
    const dnnl::primitive_attr& attributes = dnnl::primitive_attr());
dnnl::deconvolution_forward::primitive_desc deconvolution_forward_pd(
    const dnnl::engine& engine, dnnl::prop_kind kind, const dnnl::memory::desc& src,
    const dnnl::memory::desc& weights, const dnnl::memory::desc& bias,
    const dnnl::memory::desc& dst, const DnnlWindow& window,
    const dnnl::primitive_attr& attributes = dnnl::primitive_attr());

dnnl::convolution_backward_data::primitive_desc convolution_backward_data_pd(
    const dnnl::engine& engine, const dnnl::memory::desc& diff_src,
    const dnnl::memory::desc& weights, const dnnl::memory::desc& diff_dst, const DnnlWindow& window,
    const dnnl::convolution_forward::primitive_desc& hint);
dnnl::deconvolution_backward_data::primitive_desc deconvolution_backward_data_pd(
    const dnnl::engine& engine, const dnnl::memory::desc& diff_src,
    const dnnl::memory::desc& weights, const dnnl::memory::desc& diff_dst, const DnnlWindow& window,
    const dnnl::deconvolution_forward::primitive_desc& hint);

dnnl::convolution_backward_weights::primitive_desc convolution_backward_weights_pd(
    const dnnl::engine& engine, const dnnl::memory::desc& src,
    const dnnl::memory::desc& diff_weights, const dnnl::memory::desc& diff_bias,
    const dnnl::memory::desc& diff_dst, const DnnlWindow& window,
    const dnnl::convolution_forward::primitive_desc& hint);
dnnl::deconvolution_backward_weights::primitive_desc deconvolution_backward_weights_pd(
    const dnnl::engine& engine, const dnnl::memory::desc& src,
    const dnnl::memory::desc& diff_weights, const dnnl::memory::desc& diff_bias,
    const dnnl::memory::desc& diff_dst, const DnnlWindow& window,
    const dnnl::deconvolution_forward::primitive_desc& hint);

/// Batch normalization of `data` in place of its own layout (source and destination alike).
dnnl::batch_normalization_forward::primitive_desc batch_norm_forward_pd(
    const dnnl::engine& engine, dnnl::prop_kind kind, const dnnl::memory::desc& data, float epsilon,
    dnnl::normalization_flags flags);
dnnl::batch_normalization_backward::primitive_desc batch_norm_backward_pd(
    const dnnl::engine& engine, const dnnl::memory::desc& data, float epsilon,
    dnnl::normalization_flags flags, const dnnl::batch_normalization_forward::primitive_desc& hint);

/// Whether the backward batch normalization with use_shift runs only with a SHIFT argument, which
/// it does not read (oneDNN 2.6), or refuses one (oneDNN 3).
inline constexpr bool kBatchNormBackwardTakesShift = DNNL_VERSION_MAJOR < 3;

/// Max pooling (no dilation).
struct PoolWindow {
  dnnl::memory::dims strides, kernel, pad_left, pad_right;
};
dnnl::pooling_forward::primitive_desc max_pool_forward_pd(const dnnl::engine& engine,
                                                          dnnl::prop_kind kind,
                                                          const dnnl::memory::desc& src,
                                                          const dnnl::memory::desc& dst,
                                                          const PoolWindow& window);
dnnl::pooling_backward::primitive_desc max_pool_backward_pd(
    const dnnl::engine& engine, const dnnl::memory::desc& diff_src,
    const dnnl::memory::desc& diff_dst, const PoolWindow& window,
    const dnnl::pooling_forward::primitive_desc& hint);

/// An elementwise post-op (ReLU, clip) at full strength.
void append_eltwise(dnnl::post_ops& ops, dnnl::algorithm algorithm, float alpha, float beta);

/// Per-output-channel scales of an int8 convolution (`grouped`: of a grouped one): its sums are
/// multiplied by `scales[k]` and the bias is added, before the post-ops. Sets them on `attributes`;
/// returns the arguments the primitive then needs when it runs (none in oneDNN 2). `bias` holds
/// the bias in output units; it is converted in place to what the primitive adds (oneDNN 2 adds
/// it before the scales, 3 after them).
Args set_output_scales(dnnl::primitive_attr& attributes, const dnnl::engine& engine, bool grouped,
                       const std::vector<float>& scales, std::vector<float>& bias);

/// A reorder that multiplies by `scales` on the way (one value, or one per index of the dims in
/// `mask`), with every argument it runs with.
struct ScaledReorder {
  dnnl::reorder run;
  Args args;
};
ScaledReorder scaled_reorder(const dnnl::memory& from, const dnnl::memory& to, int mask,
                             const std::vector<float>& scales);

}  // namespace labpose::nets::cpu
