// NVDEC through FFmpeg's hwaccel: the device, the format choice and the copy back to the host.
#include "pipeline/video/gpu_decoding.hpp"

extern "C" {
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>
}

#include <fmt/core.h>

#include "core/error.hpp"

namespace labpose::pipeline::ffmpeg {
namespace {

// The decoder's choice of picture format: CUDA where it is offered for the stream, else the first
// format in host memory (FFmpeg offers no CUDA, or has dropped it after NVDEC refused the stream).
AVPixelFormat cuda_where_offered(AVCodecContext* /*decoder*/, const AVPixelFormat* formats) {
  for (const AVPixelFormat* format = formats; *format != AV_PIX_FMT_NONE; ++format) {
    if (*format == AV_PIX_FMT_CUDA) return *format;
  }
  for (const AVPixelFormat* format = formats; *format != AV_PIX_FMT_NONE; ++format) {
    const AVPixFmtDescriptor* descriptor = av_pix_fmt_desc_get(*format);
    if (descriptor != nullptr && (descriptor->flags & AV_PIX_FMT_FLAG_HWACCEL) == 0) return *format;
  }
  return AV_PIX_FMT_NONE;
}

bool offers_cuda(const AVCodec& codec) {
  for (int i = 0;; ++i) {
    const AVCodecHWConfig* config = avcodec_get_hw_config(&codec, i);
    if (config == nullptr) return false;
    if ((config->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX) != 0 &&
        config->device_type == AV_HWDEVICE_TYPE_CUDA) {
      return true;
    }
  }
}

// FFmpeg's own words for the last failure on this thread, on one line ("Cannot load
// libcuda.so.1"), or nothing.
std::string logged_reason() {
  std::string text = take_logged_errors();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  std::string line;
  for (const char c : text) line += c == '\n' ? std::string("; ") : std::string(1, c);
  return line.empty() ? line : ": " + line;
}

}  // namespace

GpuDecoding::GpuDecoding(BufferRef device, int gpu)
    : device_(std::move(device)), gpu_(gpu), host_(av_frame_alloc()) {
  if (!host_) throw Error("out of memory while setting up decoding on the GPU");
}

std::unique_ptr<GpuDecoding> GpuDecoding::attach(AVCodecContext& decoder, const AVCodec& codec,
                                                 int gpu, std::string& why_not) {
  if (!offers_cuda(codec)) {
    why_not = fmt::format("this FFmpeg has no NVDEC decoding for {} video", codec.name);
    return nullptr;
  }
  take_logged_errors();
  AVBufferRef* opened = nullptr;
  const std::string device = std::to_string(gpu);
  const int result =
      av_hwdevice_ctx_create(&opened, AV_HWDEVICE_TYPE_CUDA, device.c_str(), nullptr, 0);
  if (result < 0) {
    why_not = fmt::format("FFmpeg cannot open CUDA device {} for decoding ({}{})", gpu,
                          error_text(result), logged_reason());
    return nullptr;
  }
  BufferRef owned(opened);
  decoder.hw_device_ctx = av_buffer_ref(owned.get());
  if (decoder.hw_device_ctx == nullptr) throw Error("out of memory while setting up NVDEC");
  decoder.get_format = cuda_where_offered;
  return std::unique_ptr<GpuDecoding>(new GpuDecoding(std::move(owned), gpu));
}

bool GpuDecoding::to_host(AVFrame& picture) {
  if (picture.format != AV_PIX_FMT_CUDA) return false;
  av_frame_unref(host_.get());
  int result = av_hwframe_transfer_data(host_.get(), &picture, 0);
  if (result >= 0) result = av_frame_copy_props(host_.get(), &picture);
  if (result < 0) {
    throw Error(fmt::format("cannot copy a picture decoded on CUDA device {} to the host: {}", gpu_,
                            error_text(result)),
                "decode on the CPU (--decode cpu)");
  }
  av_frame_unref(&picture);
  av_frame_move_ref(&picture, host_.get());
  return true;
}

}  // namespace labpose::pipeline::ffmpeg
