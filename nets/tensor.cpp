// Shape and Tensor basics, host storage.
#include "nets/tensor.hpp"

#include <fmt/core.h>

#include <cstdlib>
#include <new>

#include "core/error.hpp"

namespace labpose::nets {

Shape::Shape(std::initializer_list<std::int64_t> dims) : Shape(std::vector<std::int64_t>(dims)) {}

Shape::Shape(const std::vector<std::int64_t>& dims) {
  LABPOSE_ASSERT(dims.size() <= dims_.size());
  rank_ = static_cast<int>(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) {
    LABPOSE_ASSERT(dims[i] >= 0);
    dims_[i] = dims[i];
  }
}

std::int64_t Shape::elements() const {
  std::int64_t count = 1;
  for (int i = 0; i < rank_; ++i) count *= dims_[static_cast<std::size_t>(i)];
  return count;
}

bool Shape::operator==(const Shape& other) const {
  if (rank_ != other.rank_) return false;
  for (int i = 0; i < rank_; ++i) {
    if (dims_[static_cast<std::size_t>(i)] != other.dims_[static_cast<std::size_t>(i)])
      return false;
  }
  return true;
}

std::string Shape::text() const {
  std::string out = "(";
  for (int i = 0; i < rank_; ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(dims_[static_cast<std::size_t>(i)]);
  }
  return out + ")";
}

namespace {

class HostStorage final : public Storage {
 public:
  explicit HostStorage(std::size_t bytes) : bytes_(bytes) {
    constexpr std::size_t kAlignment = 4096;
    const std::size_t rounded =
        (std::max<std::size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
    data_ = static_cast<float*>(std::aligned_alloc(kAlignment, rounded));
    if (data_ == nullptr) throw std::bad_alloc();
  }
  ~HostStorage() override { std::free(data_); }
  HostStorage(const HostStorage&) = delete;
  HostStorage& operator=(const HostStorage&) = delete;
  float* data() override { return data_; }
  std::size_t bytes() const override { return bytes_; }
  Memory memory() const override { return Memory::host; }

 private:
  float* data_ = nullptr;
  std::size_t bytes_;
};

}  // namespace

std::shared_ptr<Storage> allocate_host_storage(std::size_t bytes) {
  return std::make_shared<HostStorage>(bytes);
}

std::size_t element_bytes(Element element) {
  return element == Element::bf16 ? 2 : sizeof(float);
}

Tensor::Tensor(std::shared_ptr<Storage> storage, std::size_t offset, Shape shape, Layout layout,
               Element element)
    : storage_(std::move(storage)),
      offset_(offset),
      shape_(shape),
      layout_(layout),
      element_(element) {
  LABPOSE_ASSERT(storage_ != nullptr);
  LABPOSE_ASSERT((offset_ + static_cast<std::size_t>(shape_.elements())) *
                     element_bytes(element_) <=
                 storage_->bytes());
  LABPOSE_ASSERT(layout_ == Layout::flat || shape_.rank() == 4);
}

Memory Tensor::memory() const {
  return storage_ ? storage_->memory() : Memory::host;
}

float* Tensor::data() const {
  LABPOSE_ASSERT(element_ == Element::f32);
  return storage_ ? storage_->data() + offset_ : nullptr;
}

void* Tensor::raw() const {
  if (!storage_) return nullptr;
  return reinterpret_cast<std::byte*>(storage_->data()) + offset_ * element_bytes(element_);
}

Tensor Tensor::reshaped(const Shape& shape) const {
  LABPOSE_ASSERT(shape.elements() == shape_.elements());
  LABPOSE_ASSERT(layout_ != Layout::nhwc);  // NHWC memory is not in logical order
  return Tensor(storage_, offset_, shape, Layout::flat, element_);
}

}  // namespace labpose::nets
