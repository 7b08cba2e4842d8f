// FFmpeg helpers.
#include "pipeline/video/ffmpeg.hpp"

#include "core/console.hpp"

namespace labpose::pipeline::ffmpeg {

std::string error_text(int code) {
  char buffer[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, buffer, sizeof(buffer));
  return buffer;
}

void OutputCloser::operator()(AVFormatContext* context) const {
  if (context == nullptr) return;
  if (context->pb != nullptr && (context->oformat->flags & AVFMT_NOFILE) == 0)
    avio_closep(&context->pb);
  avformat_free_context(context);
}

void quiet_logging() {
  av_log_set_level(console::verbosity() == console::Verbosity::verbose ? AV_LOG_WARNING
                                                                       : AV_LOG_QUIET);
}

}  // namespace labpose::pipeline::ffmpeg
