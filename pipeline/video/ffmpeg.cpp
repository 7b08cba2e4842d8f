// FFmpeg helpers.
#include "pipeline/video/ffmpeg.hpp"

#include <cstdarg>
#include <utility>

#include "core/console.hpp"

namespace labpose::pipeline::ffmpeg {
namespace {

// The errors FFmpeg logged on this thread since take_logged_errors(), one a line (the last 4 KB).
// Its log often says more than the code it returns: "Picture size 100000x100000 is invalid" comes
// with EBUSY ("Device or resource busy").
thread_local std::string logged_errors;

void log_line(void* object, int level, const char* format, va_list arguments) {
  if (level <= AV_LOG_ERROR) {
    std::va_list copy;
    va_copy(copy, arguments);
    char line[1024] = {};
    int print_prefix = 0;
    av_log_format_line2(object, level, format, copy, line, sizeof(line), &print_prefix);
    va_end(copy);
    constexpr std::size_t kKept = 4096;
    logged_errors += line;
    if (logged_errors.empty() || logged_errors.back() != '\n') logged_errors += '\n';
    if (logged_errors.size() > kKept) logged_errors.erase(0, logged_errors.size() - kKept);
  }
  av_log_default_callback(object, level, format, arguments);  // prints by av_log_set_level
}

}  // namespace

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
  av_log_set_callback(log_line);
}

std::string take_logged_errors() {
  return std::exchange(logged_errors, {});
}

}  // namespace labpose::pipeline::ffmpeg
