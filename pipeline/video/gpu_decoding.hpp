// Decoding on an NVIDIA GPU (NVDEC) through FFmpeg's CUDA hardware acceleration: the device is
// opened, the decoder asked for CUDA pictures, and each picture brought back to host memory (NV12
// for 8-bit 4:2:0, which pixel_conversion converts to the same bytes as the CPU's planar
// pictures). Where NVDEC cannot take a stream (a profile it lacks), FFmpeg decodes it on the CPU
// and the pictures come out in host memory. Internal to pipeline/video.
#pragma once

#include <memory>
#include <string>

#include "pipeline/video/ffmpeg.hpp"

namespace labpose::pipeline::ffmpeg {

struct BufferCloser {
  void operator()(AVBufferRef* buffer) const { av_buffer_unref(&buffer); }
};
using BufferRef = std::unique_ptr<AVBufferRef, BufferCloser>;

class GpuDecoding {
 public:
  /// Prepares `decoder` (allocated for `codec`, not yet opened) to decode on CUDA device `gpu`.
  /// Returns null, with `why_not` saying why, when this FFmpeg has no CUDA decoding for the codec
  /// or the device cannot be opened (no NVIDIA driver, no such GPU).
  static std::unique_ptr<GpuDecoding> attach(AVCodecContext& decoder, const AVCodec& codec, int gpu,
                                             std::string& why_not);

  /// Brings `picture` from GPU memory into host memory, in place; returns false, and leaves it
  /// as it is, when it was decoded on the host. Throws Error when the copy fails.
  bool to_host(AVFrame& picture);

  int gpu() const { return gpu_; }

 private:
  GpuDecoding(BufferRef device, int gpu);
  BufferRef device_;
  int gpu_;
  Frame host_;
};

}  // namespace labpose::pipeline::ffmpeg
