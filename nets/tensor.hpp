// Tensors of the network library: float32 at the interface (bf16 only for the values between a
// net's layers that a backend keeps narrower, Backend::allocate_activation), a logical shape (N, C,
// H, W for images), and storage owned by the backend that allocated it, in that backend's physical
// layout (NCHW for the reference backend, NHWC for cpu and cuda). Host code reads and writes them
// only through the backend (Backend::copy_to_host / copy_from_host), which converts to and from
// logical NCHW order. Not a math library: tensors have no operators; ops are Backend methods.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace labpose::nets {

/// Up to 4 dimensions; images are (N, C, H, W), parameters are in PyTorch's shapes.
class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<std::int64_t> dims);
  explicit Shape(const std::vector<std::int64_t>& dims);

  int rank() const { return rank_; }
  std::int64_t operator[](int i) const { return dims_[static_cast<std::size_t>(i)]; }
  std::int64_t elements() const;
  std::vector<std::int64_t> dims() const { return {dims_.begin(), dims_.begin() + rank_}; }
  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }
  std::string text() const;  // "(8, 3, 400, 400)"

  // Image dimensions of a rank-4 shape.
  std::int64_t n() const { return dims_[0]; }
  std::int64_t c() const { return dims_[1]; }
  std::int64_t h() const { return dims_[2]; }
  std::int64_t w() const { return dims_[3]; }

 private:
  std::array<std::int64_t, 4> dims_{};
  int rank_ = 0;
};

/// The physical order of a rank-4 tensor's elements. Lower ranks are always `flat`.
enum class Layout { flat, nchw, nhwc };

/// Where a tensor's memory lives.
enum class Memory { host, cuda };

/// What a tensor's elements are: float32, or bfloat16 (the upper half of a float32) where a
/// backend keeps the activations of a training net at half width (Backend::allocate_activation).
enum class Element { f32, bf16 };

/// Bytes per element.
std::size_t element_bytes(Element element);

/// A block of memory owned by a backend; freed (or returned to a pool) when the last tensor using
/// it goes away.
class Storage {
 public:
  virtual ~Storage() = default;
  virtual float* data() = 0;
  virtual std::size_t bytes() const = 0;
  virtual Memory memory() const = 0;
};

/// Page-aligned host memory (64-byte aligned at least, as oneDNN wants).
std::shared_ptr<Storage> allocate_host_storage(std::size_t bytes);

class Tensor {
 public:
  Tensor() = default;
  /// A tensor over `storage` starting `offset` elements in (views share the storage).
  Tensor(std::shared_ptr<Storage> storage, std::size_t offset, Shape shape, Layout layout,
         Element element = Element::f32);

  const Shape& shape() const { return shape_; }
  Layout layout() const { return layout_; }
  Memory memory() const;
  std::int64_t elements() const { return shape_.elements(); }
  Element element() const { return element_; }
  bool empty() const { return storage_ == nullptr; }

  /// The first element of an f32 tensor; a device pointer for cuda tensors. Only backends
  /// dereference it. An internal error on a bf16 tensor, which only raw() reaches.
  float* data() const;
  /// The first element's address, whatever the element type.
  void* raw() const;
  /// A tensor viewing the same memory with another shape of the same size (flat layout only).
  Tensor reshaped(const Shape& shape) const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  std::size_t offset() const { return offset_; }

 private:
  std::shared_ptr<Storage> storage_;
  std::size_t offset_ = 0;
  Shape shape_;
  Layout layout_ = Layout::flat;
  Element element_ = Element::f32;
};

}  // namespace labpose::nets
