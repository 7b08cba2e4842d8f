// CPU backend basics: construction, oneDNN descriptions of tensors, host copies (NCHW <-> NHWC).
#include "nets/cpu/dnnl_state.hpp"

#include <oneapi/dnnl/dnnl.h>

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "nets/cpu/elements.hpp"

namespace labpose::nets::cpu {

using tag = memory::format_tag;
using dt = memory::data_type;

memory::dims dims_of(const Shape& shape) {
  memory::dims dims;
  for (int i = 0; i < shape.rank(); ++i) dims.push_back(shape[i]);
  return dims;
}

memory::desc desc_of(const Shape& shape, Layout layout, dt type) {
  switch (shape.rank()) {
    case 1:
      return memory::desc(dims_of(shape), type, tag::a);
    case 2:
      return memory::desc(dims_of(shape), type, tag::ab);
    case 3:
      return memory::desc(dims_of(shape), type, tag::abc);
    default:
      break;
  }
  return memory::desc(dims_of(shape), type, layout == Layout::nhwc ? tag::nhwc : tag::nchw);
}

memory::desc desc_of(const Tensor& tensor, dt type) {
  return desc_of(tensor.shape(), tensor.layout(), type);
}

dt data_type_of(Element element) {
  return element == Element::bf16 ? dt::bf16 : dt::f32;
}

memory::desc desc_of(const Tensor& tensor) {
  return desc_of(tensor.shape(), tensor.layout(), data_type_of(tensor.element()));
}

std::string elements_key(std::initializer_list<const Tensor*> tensors) {
  std::string key;
  for (const Tensor* t : tensors) key += t->element() == Element::bf16 ? "b" : "f";
  return key;
}

memory::desc conv_weights_desc(const Shape& w, int groups, memory::format_tag tag_if_plain) {
  if (groups == 1) return memory::desc(dims_of(w), dt::f32, tag_if_plain);
  return memory::desc({groups, w[0] / groups, w[1], w[2], w[3]}, dt::f32,
                      tag_if_plain == tag::any ? tag::any : tag::goihw);
}

memory::desc conv_transpose_weights_desc(const Shape& w, int groups) {
  // PyTorch (C, K/g, R, S) is oneDNN's {K, C, R, S} in "iohw" order (grouped: giohw).
  if (groups == 1) return memory::desc({w[1], w[0], w[2], w[3]}, dt::f32, tag::iohw);
  return memory::desc({groups, w[1], w[0] / groups, w[2], w[3]}, dt::f32, tag::giohw);
}

void bind(memory& m, const Tensor& tensor) {
  m.set_data_handle(tensor.raw());
}

void with_dnnl_errors(const char* op, const std::string& shapes,
                      const std::function<void()>& body) {
  try {
    body();
  } catch (const dnnl::error& error) {
    throw Error(fmt::format("oneDNN failed in {} ({}): {}", op, shapes, error.what()),
                "this shape may not be supported on this CPU; please report it with the output of "
                "`labpose doctor`");
  }
}

std::string geometry_key(const ConvGeometry& g) {
  return fmt::format("s{}x{}p{},{},{},{}d{}x{}g{}o{}x{}", g.stride_h, g.stride_w, g.pad_top,
                     g.pad_left, g.pad_bottom, g.pad_right, g.dilation_h, g.dilation_w, g.groups,
                     g.output_pad_h, g.output_pad_w);
}

DnnlWindow conv_window(const ConvGeometry& g) {
  return {{g.stride_h, g.stride_w},
          {g.dilation_h - 1, g.dilation_w - 1},
          {g.pad_top, g.pad_left},
          {g.pad_bottom, g.pad_right}};
}

DnnlWindow transpose_window(const ConvGeometry& g, const Shape& x, const Shape& w, const Shape& y) {
  DnnlWindow window = conv_window(g);
  const auto right = [](std::int64_t in, std::int64_t out, std::int64_t k, int stride, int pad,
                        int dilation) {
    return (in - 1) * stride - pad + (k - 1) * dilation + 1 - out;
  };
  window.pad_right = {right(x.h(), y.h(), w[2], g.stride_h, g.pad_top, g.dilation_h),
                      right(x.w(), y.w(), w[3], g.stride_w, g.pad_left, g.dilation_w)};
  return window;
}

PoolWindow pool_window(const PoolGeometry& g) {
  return {{g.stride_h, g.stride_w},
          {g.kernel_h, g.kernel_w},
          {g.pad_top, g.pad_left},
          {g.pad_bottom, g.pad_right}};
}

std::string cpu_instructions() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41:
      return "SSE4.1";
    case dnnl_cpu_isa_avx:
      return "AVX";
    case dnnl_cpu_isa_avx2:
      return "AVX2";
    case dnnl_cpu_isa_avx2_vnni:
      return "AVX2 + VNNI";
    case dnnl_cpu_isa_avx512_core:
      return "AVX-512";
    case dnnl_cpu_isa_avx512_core_vnni:
      return "AVX-512 + VNNI";
    case dnnl_cpu_isa_avx512_core_bf16:
      return "AVX-512 + BF16";
#if DNNL_VERSION_MAJOR >= 3
    case dnnl_cpu_isa_avx2_vnni_2:
      return "AVX2 + VNNI-INT8 + BF16";
    case dnnl_cpu_isa_avx512_core_fp16:
      return "AVX-512 + BF16 + FP16";
    case dnnl_cpu_isa_avx512_core_amx_fp16:
      return "AVX-512 + AMX + FP16";
#endif
    case dnnl_cpu_isa_avx512_core_amx:
      return "AVX-512 + AMX";
    default:
      return "generic";
  }
}

namespace {

// Whether oneDNN runs with every instruction of `wanted`. The ISA values are nested bit sets:
// each contains the bits of those below it.
bool has_isa(dnnl_cpu_isa_t wanted) {
  const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const auto bits = static_cast<unsigned>(wanted);
  return (isa & bits) == bits;
}

}  // namespace

bool cpu_has_bf16() {
  return has_isa(dnnl_cpu_isa_avx512_core_bf16);
}

bool cpu_has_amx() {
  return has_isa(dnnl_cpu_isa_avx512_core_amx);
}

bool cpu_has_avx512() {
  return has_isa(dnnl_cpu_isa_avx512_core);
}

bool cpu_has_int8() {
  // VNNI (AVX-512 or AVX2 flavour): without it int8 sums take three instructions and gain little.
  return has_isa(dnnl_cpu_isa_avx512_core_vnni) || has_isa(dnnl_cpu_isa_avx2_vnni);
}

namespace {

// The size of the CPU's last-level data cache as Linux describes it for cpu0 (sysfs: the cache
// of the highest level, "32768K"), or 32 MiB where it says nothing. Not sysconf(): glibc's figure
// comes from cpuid, which in a virtual machine may describe the whole chip (384 MiB seen for a
// 32 MiB share).
std::size_t last_level_cache_bytes() {
  std::size_t bytes = std::size_t{32} << 20;
  int deepest = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", index);
    std::ifstream level_file(dir + "level"), type_file(dir + "type"), size_file(dir + "size");
    int level = 0;
    std::string type, size;
    if (!(level_file >> level) || !(type_file >> type) || !(size_file >> size)) continue;
    if (type == "Instruction" || level <= deepest || size.empty()) continue;
    std::size_t multiplier = 1;
    if (size.back() == 'K') multiplier = std::size_t{1} << 10;
    if (size.back() == 'M') multiplier = std::size_t{1} << 20;
    const std::size_t value = std::strtoull(size.c_str(), nullptr, 10) * multiplier;
    if (value == 0) continue;
    deepest = level;
    bytes = value;
  }
  return bytes;
}

}  // namespace

CpuBackend::CpuBackend(PlanPrecision plan_precision)
    : plan_precision_(plan_precision), cache_bytes_(last_level_cache_bytes()) {
  if (plan_precision == PlanPrecision::fp16) {
    throw UsageError("the CPU computes inference plans in fp32, bf16 or int8, not fp16",
                     "use --precision auto, fp32, bf16 or int8 (fp16 is for --device cuda)");
  }
  if (plan_precision == PlanPrecision::int8 && !cpu_has_int8()) {
    throw Error(fmt::format("this CPU has no VNNI instructions for int8 (oneDNN uses {} here)",
                            cpu_instructions()),
                "use --precision fp32 or auto: int8 without VNNI would be no faster than fp32");
  }
  if (plan_precision == PlanPrecision::bf16 && !cpu_has_bf16()) {
    throw Error(fmt::format("this CPU has no bf16 units (oneDNN uses {} here; bf16 needs AVX-512 "
                            "BF16 or AMX)",
                            cpu_instructions()),
                "use --precision fp32 or auto: bf16 is never emulated, which would be slower "
                "than fp32");
  }
  LABPOSE_ASSERT(plan_precision == PlanPrecision::fp32 || plan_precision == PlanPrecision::bf16 ||
                 plan_precision == PlanPrecision::int8);
  try {
    state_ = std::make_unique<State>();
  } catch (const dnnl::error& error) {
    throw Error(fmt::format("cannot start oneDNN on this CPU: {}", error.what()));
  }
}

CpuBackend::~CpuBackend() = default;

std::string CpuBackend::description() const {
  const dnnl_version_t* version = dnnl_version();
  return fmt::format("oneDNN {}.{}.{}, inference plans in {}", version->major, version->minor,
                     version->patch, precision_name(plan_precision_));
}

Tensor CpuBackend::allocate(const Shape& shape) {
  return Tensor(allocate_host_storage(static_cast<std::size_t>(shape.elements()) * sizeof(float)),
                0, shape, shape.rank() == 4 ? Layout::nhwc : Layout::flat);
}

Tensor CpuBackend::allocate_flat(std::int64_t count) {
  return Tensor(allocate_host_storage(static_cast<std::size_t>(count) * sizeof(float)), 0,
                Shape{count}, Layout::flat);
}

Tensor CpuBackend::allocate_activation(const Shape& shape) {
  if (training_precision() != PlanPrecision::bf16 || shape.rank() != 4) return allocate(shape);
  return Tensor(allocate_host_storage(static_cast<std::size_t>(shape.elements()) *
                                      element_bytes(Element::bf16)),
                0, shape, Layout::nhwc, Element::bf16);
}

void CpuBackend::copy_from_host(const float* host, Tensor& t) {
  if (t.layout() != Layout::nhwc && t.element() == Element::f32) {
    std::memcpy(t.data(), host, static_cast<std::size_t>(t.elements()) * sizeof(float));
    return;
  }
  const Shape& s = t.shape();
  const bool nhwc = t.layout() == Layout::nhwc;
  const std::int64_t plane = nhwc ? s.h() * s.w() : t.elements();
  const std::int64_t images = nhwc ? s.n() : 1, channels = nhwc ? s.c() : 1;
  with_elements(t, [&](auto out) {
#pragma omp parallel for collapse(2)
    for (std::int64_t n = 0; n < images; ++n) {
      for (std::int64_t i = 0; i < plane; ++i) {
        for (std::int64_t c = 0; c < channels; ++c)
          out.set((n * plane + i) * channels + c, host[(n * channels + c) * plane + i]);
      }
    }
  });
}

void CpuBackend::copy_pixels_from_host(const std::uint8_t* pixels, Tensor& t) {
  const Shape& s = t.shape();
  LABPOSE_ASSERT(s.rank() == 4 && t.layout() == Layout::nhwc);
  // Interleaved pixels are NHWC already: only widened to floats.
  const std::int64_t count = t.elements();
  float* out = t.data();
#pragma omp parallel for simd schedule(static)
  for (std::int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(pixels[i]);
}

void CpuBackend::copy_to_host(const Tensor& t, float* host) {
  if (t.layout() != Layout::nhwc && t.element() == Element::f32) {
    std::memcpy(host, t.data(), static_cast<std::size_t>(t.elements()) * sizeof(float));
    return;
  }
  const Shape& s = t.shape();
  const bool nhwc = t.layout() == Layout::nhwc;
  const std::int64_t plane = nhwc ? s.h() * s.w() : t.elements();
  const std::int64_t images = nhwc ? s.n() : 1, channels = nhwc ? s.c() : 1;
  with_elements(t, [&](auto in) {
#pragma omp parallel for collapse(2)
    for (std::int64_t n = 0; n < images; ++n) {
      for (std::int64_t c = 0; c < channels; ++c) {
        for (std::int64_t i = 0; i < plane; ++i)
          host[(n * channels + c) * plane + i] = in.get((n * plane + i) * channels + c);
      }
    }
  });
}

void CpuBackend::copy(const Tensor& src, Tensor& dst) {
  check_shape("copy", "dst", dst.shape(), src.shape());
  LABPOSE_ASSERT(src.layout() == dst.layout());
  if (src.raw() == dst.raw()) return;
  if (src.element() == dst.element()) {
    std::memmove(dst.raw(), src.raw(),
                 static_cast<std::size_t>(src.elements()) * element_bytes(src.element()));
    return;
  }
  const std::int64_t count = src.elements();
  with_elements(src, [&](auto in) {
    with_elements(dst, [&](auto out) {
#pragma omp parallel for simd schedule(static)
      for (std::int64_t i = 0; i < count; ++i) out.set(i, in.get(i));
    });
  });
}

void CpuBackend::fill(Tensor& t, float value) {
  const std::int64_t count = t.elements();
  with_elements(t, [&](auto out) {
    for (std::int64_t i = 0; i < count; ++i) out.set(i, value);
  });
}

}  // namespace labpose::nets::cpu
