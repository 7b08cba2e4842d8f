// oneDNN 2 and 3 behind one set of functions (dnnl_versions.hpp).
#include "nets/cpu/dnnl_versions.hpp"

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace labpose::nets::cpu {

using dnnl::algorithm;
using dnnl::memory;
using dnnl::prop_kind;

memory::dims dims_of_desc(const memory::desc& desc) {
#if DNNL_VERSION_MAJOR >= 3
  return desc.get_dims();
#else
  return desc.dims();
#endif
}

namespace {

// The three directions of a convolution, for convolution_* (algorithm::convolution_direct) and
// deconvolution_* (algorithm::deconvolution_direct) alike.
template <typename Forward>
typename Forward::primitive_desc forward(const dnnl::engine& engine, prop_kind kind,
                                         algorithm algorithm, const memory::desc& src,
                                         const memory::desc& weights, const memory::desc& bias,
                                         const memory::desc& dst, const DnnlWindow& w,
                                         const dnnl::primitive_attr& attributes) {
#if DNNL_VERSION_MAJOR >= 3
  return {engine, kind,      algorithm, src,        weights,     bias,
          dst,    w.strides, w.dilates, w.pad_left, w.pad_right, attributes};
#else
  return {typename Forward::desc(kind, algorithm, src, weights, bias, dst, w.strides, w.dilates,
                                 w.pad_left, w.pad_right),
          attributes, engine};
#endif
}

template <typename BackwardData, typename Hint>
typename BackwardData::primitive_desc backward_data(const dnnl::engine& engine, algorithm algorithm,
                                                    const memory::desc& diff_src,
                                                    const memory::desc& weights,
                                                    const memory::desc& diff_dst,
                                                    const DnnlWindow& w, const Hint& hint) {
#if DNNL_VERSION_MAJOR >= 3
  return {engine,    algorithm, diff_src,   weights,     diff_dst,
          w.strides, w.dilates, w.pad_left, w.pad_right, hint};
#else
  return {typename BackwardData::desc(algorithm, diff_src, weights, diff_dst, w.strides, w.dilates,
                                      w.pad_left, w.pad_right),
          engine, hint};
#endif
}

template <typename BackwardWeights, typename Hint>
typename BackwardWeights::primitive_desc backward_weights(
    const dnnl::engine& engine, algorithm algorithm, const memory::desc& src,
    const memory::desc& diff_weights, const memory::desc& diff_bias, const memory::desc& diff_dst,
    const DnnlWindow& w, const Hint& hint) {
#if DNNL_VERSION_MAJOR >= 3
  return {engine,    algorithm, src,        diff_weights, diff_bias, diff_dst,
          w.strides, w.dilates, w.pad_left, w.pad_right,  hint};
#else
  return {typename BackwardWeights::desc(algorithm, src, diff_weights, diff_bias, diff_dst,
                                         w.strides, w.dilates, w.pad_left, w.pad_right),
          engine, hint};
#endif
}

}  // namespace

dnnl::convolution_forward::primitive_desc convolution_forward_pd(
    const dnnl::engine& engine, prop_kind kind, const memory::desc& src,
    const memory::desc& weights, const memory::desc& bias, const memory::desc& dst,
    const DnnlWindow& w, const dnnl::primitive_attr& attributes) {
  return forward<dnnl::convolution_forward>(engine, kind, algorithm::convolution_direct, src,
                                            weights, bias, dst, w, attributes);
}

dnnl::deconvolution_forward::primitive_desc deconvolution_forward_pd(
    const dnnl::engine& engine, prop_kind kind, const memory::desc& src,
    const memory::desc& weights, const memory::desc& bias, const memory::desc& dst,
    const DnnlWindow& w, const dnnl::primitive_attr& attributes) {
  auto pd = forward<dnnl::deconvolution_forward>(engine, kind, algorithm::deconvolution_direct, src,
                                                 weights, bias, dst, w, attributes);
#if DNNL_VERSION_MAJOR >= 3
  // oneDNN 3.2's brgemm deconvolution ("brg_conv:...+brgconv_strided") computes wrong sums on a
  // Zen 5 EPYC (AVX-512, 2048 input channels, stride 2: Conformance.ConvTranspose2dAllDirections);
  // the implementations after it (a convolution's backward data, "conv:any+...") are right.
  // 2.6 has no brgemm deconvolution.
  while (std::string_view(pd.impl_info_str()).starts_with("brg_conv:") && pd.next_impl()) {
  }
#endif
  return pd;
}

dnnl::convolution_backward_data::primitive_desc convolution_backward_data_pd(
    const dnnl::engine& engine, const memory::desc& diff_src, const memory::desc& weights,
    const memory::desc& diff_dst, const DnnlWindow& w,
    const dnnl::convolution_forward::primitive_desc& hint) {
  return backward_data<dnnl::convolution_backward_data>(engine, algorithm::convolution_direct,
                                                        diff_src, weights, diff_dst, w, hint);
}

dnnl::deconvolution_backward_data::primitive_desc deconvolution_backward_data_pd(
    const dnnl::engine& engine, const memory::desc& diff_src, const memory::desc& weights,
    const memory::desc& diff_dst, const DnnlWindow& w,
    const dnnl::deconvolution_forward::primitive_desc& hint) {
  return backward_data<dnnl::deconvolution_backward_data>(engine, algorithm::deconvolution_direct,
                                                          diff_src, weights, diff_dst, w, hint);
}

dnnl::convolution_backward_weights::primitive_desc convolution_backward_weights_pd(
    const dnnl::engine& engine, const memory::desc& src, const memory::desc& diff_weights,
    const memory::desc& diff_bias, const memory::desc& diff_dst, const DnnlWindow& w,
    const dnnl::convolution_forward::primitive_desc& hint) {
  return backward_weights<dnnl::convolution_backward_weights>(
      engine, algorithm::convolution_direct, src, diff_weights, diff_bias, diff_dst, w, hint);
}

dnnl::deconvolution_backward_weights::primitive_desc deconvolution_backward_weights_pd(
    const dnnl::engine& engine, const memory::desc& src, const memory::desc& diff_weights,
    const memory::desc& diff_bias, const memory::desc& diff_dst, const DnnlWindow& w,
    const dnnl::deconvolution_forward::primitive_desc& hint) {
  return backward_weights<dnnl::deconvolution_backward_weights>(
      engine, algorithm::deconvolution_direct, src, diff_weights, diff_bias, diff_dst, w, hint);
}

dnnl::batch_normalization_forward::primitive_desc batch_norm_forward_pd(
    const dnnl::engine& engine, prop_kind kind, const memory::desc& data, float epsilon,
    dnnl::normalization_flags flags) {
#if DNNL_VERSION_MAJOR >= 3
  return {engine, kind, data, data, epsilon, flags};
#else
  return {dnnl::batch_normalization_forward::desc(kind, data, epsilon, flags), engine};
#endif
}

dnnl::batch_normalization_backward::primitive_desc batch_norm_backward_pd(
    const dnnl::engine& engine, const memory::desc& data, float epsilon,
    dnnl::normalization_flags flags,
    const dnnl::batch_normalization_forward::primitive_desc& hint) {
#if DNNL_VERSION_MAJOR >= 3
  return {engine, prop_kind::backward, data, data, data, epsilon, flags, hint};
#else
  return {dnnl::batch_normalization_backward::desc(prop_kind::backward, data, data, epsilon, flags),
          engine, hint};
#endif
}

dnnl::pooling_forward::primitive_desc max_pool_forward_pd(const dnnl::engine& engine,
                                                          prop_kind kind, const memory::desc& src,
                                                          const memory::desc& dst,
                                                          const PoolWindow& w) {
#if DNNL_VERSION_MAJOR >= 3
  const memory::dims no_dilation(w.strides.size(), 0);
  return {
      engine,     kind,       algorithm::pooling_max, src, dst, w.strides, w.kernel, no_dilation,
      w.pad_left, w.pad_right};
#else
  return {dnnl::pooling_forward::desc(kind, algorithm::pooling_max, src, dst, w.strides, w.kernel,
                                      w.pad_left, w.pad_right),
          engine};
#endif
}

dnnl::pooling_backward::primitive_desc max_pool_backward_pd(
    const dnnl::engine& engine, const memory::desc& diff_src, const memory::desc& diff_dst,
    const PoolWindow& w, const dnnl::pooling_forward::primitive_desc& hint) {
#if DNNL_VERSION_MAJOR >= 3
  const memory::dims no_dilation(w.strides.size(), 0);
  return {engine,      algorithm::pooling_max,
          diff_src,    diff_dst,
          w.strides,   w.kernel,
          no_dilation, w.pad_left,
          w.pad_right, hint};
#else
  return {dnnl::pooling_backward::desc(algorithm::pooling_max, diff_src, diff_dst, w.strides,
                                       w.kernel, w.pad_left, w.pad_right),
          engine, hint};
#endif
}

void append_eltwise(dnnl::post_ops& ops, algorithm algorithm, float alpha, float beta) {
#if DNNL_VERSION_MAJOR >= 3
  ops.append_eltwise(algorithm, alpha, beta);
#else
  ops.append_eltwise(1.0F, algorithm, alpha, beta);
#endif
}

namespace {

#if DNNL_VERSION_MAJOR >= 3
// A memory of `values` for a scales argument (oneDNN 3 reads them when the primitive runs).
memory scales_memory(const dnnl::engine& engine, const std::vector<float>& values) {
  memory scales(
      {{static_cast<memory::dim>(values.size())}, memory::data_type::f32, memory::format_tag::a},
      engine);
  std::copy(values.begin(), values.end(), static_cast<float*>(scales.get_data_handle()));
  return scales;
}
#endif

}  // namespace

Args set_output_scales(dnnl::primitive_attr& attributes, const dnnl::engine& engine, bool grouped,
                       const std::vector<float>& scales, std::vector<float>& bias) {
#if DNNL_VERSION_MAJOR >= 3
  // The weights' scales, per output channel: dim 0 of (K, C, R, S); dims 0 and 1 of grouped
  // (G, K/G, C/G, R, S). The bias is added after them, in output units as given.
  static_cast<void>(bias);
  attributes.set_scales_mask(DNNL_ARG_WEIGHTS, grouped ? 3 : 1);
  return {{DNNL_ARG_ATTR_SCALES | DNNL_ARG_WEIGHTS, scales_memory(engine, scales)}};
#else
  // Output scales over the destination's channel dimension; the bias is added before them.
  static_cast<void>(engine);
  static_cast<void>(grouped);
  attributes.set_output_scales(1 << 1, scales);
  for (std::size_t k = 0; k < bias.size(); ++k) bias[k] /= scales[k];
  return {};
#endif
}

ScaledReorder scaled_reorder(const memory& from, const memory& to, int mask,
                             const std::vector<float>& scales) {
  dnnl::primitive_attr attributes;
  Args args{{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
#if DNNL_VERSION_MAJOR >= 3
  // dst = src_scale * src: the source's scales multiply.
  attributes.set_scales_mask(DNNL_ARG_SRC, mask);
  args.emplace(DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC, scales_memory(from.get_engine(), scales));
#else
  attributes.set_output_scales(mask, scales);
#endif
  return {dnnl::reorder(dnnl::reorder::primitive_desc(from, to, attributes)), std::move(args)};
}

}  // namespace labpose::nets::cpu
