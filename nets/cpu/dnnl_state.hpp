// oneDNN engine, stream and the per-shape primitive cache of the CPU backend, plus helpers that map
// labpose tensors to oneDNN memory descriptions. Internal to nets/cpu (includes the heavy
// dnnl.hpp).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "nets/cpu/backend.hpp"
#include "nets/cpu/dnnl_versions.hpp"

namespace labpose::nets::cpu {

/// Something a cached op keeps between calls (a primitive, its memories, scratch buffers).
struct CacheEntry {
  virtual ~CacheEntry() = default;
};

struct CpuBackend::State {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::map<std::string, std::unique_ptr<CacheEntry>> cache;

  /// The entry under `key`, made by `make` on first use.
  template <typename Entry>
  Entry& cached(const std::string& key, const std::function<std::unique_ptr<Entry>()>& make) {
    auto found = cache.find(key);
    if (found == cache.end()) found = cache.emplace(key, make()).first;
    return static_cast<Entry&>(*found->second);
  }
};

using dnnl::memory;

/// oneDNN dims of a shape.
memory::dims dims_of(const Shape& shape);
/// The description of a tensor as it is stored: NHWC for images, plain for the rest, with its own
/// element type; or the same layout with elements of `type` (a bf16 copy of an fp32 tensor).
memory::desc desc_of(const Tensor& tensor);
memory::desc desc_of(const Tensor& tensor, memory::data_type type);
/// oneDNN's name of an element type.
memory::data_type data_type_of(Element element);
/// The element types of tensors, for the keys of the primitive cache ("f32 bf16").
std::string elements_key(std::initializer_list<const Tensor*> tensors);
memory::desc desc_of(const Shape& shape, Layout layout,
                     memory::data_type type = memory::data_type::f32);
/// Weights of a (grouped) convolution in PyTorch's layout (K, C/g, R, S) as oneDNN sees them.
memory::desc conv_weights_desc(const Shape& w, int groups, memory::format_tag tag_if_plain);
/// The same for PyTorch ConvTranspose2d weights (C, K/g, R, S).
memory::desc conv_transpose_weights_desc(const Shape& w, int groups);
/// Binds a memory object to a tensor's data (of either element type) for one execution.
void bind(memory& m, const Tensor& tensor);

/// Runs `body` and turns oneDNN's exceptions into labpose errors naming the op and its shapes.
void with_dnnl_errors(const char* op, const std::string& shapes, const std::function<void()>& body);

/// Key text for a geometry (for the primitive cache).
std::string geometry_key(const ConvGeometry& g);

/// The window of a convolution as oneDNN takes it (dilation counted from 0).
DnnlWindow conv_window(const ConvGeometry& g);
/// The window of a transposed convolution from input x to output y with weights w: the right
/// padding absorbs PyTorch's output padding (it is whatever makes the sizes agree).
DnnlWindow transpose_window(const ConvGeometry& g, const Shape& x, const Shape& w, const Shape& y);
/// The window of a max pooling.
PoolWindow pool_window(const PoolGeometry& g);

}  // namespace labpose::nets::cpu
