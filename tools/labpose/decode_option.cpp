// --decode: the option text and its parse, one place for analyze and bench.
#include "tools/labpose/decode_option.hpp"

#include <string>

namespace labpose::tools {

void add_decode_option(CLI::App& app, bool* on_gpu) {
  app.add_option_function<std::string>(
         "--decode", [on_gpu](const std::string& place) { *on_gpu = place == "gpu"; },
         "where video is decoded: cpu (default: FFmpeg on the cores) or gpu (NVDEC on the "
         "network's GPU, GPU 0 when the network runs on the CPU; the same pixels, and the CPU "
         "takes over, saying why, where NVDEC cannot decode the video)")
      ->check(CLI::IsMember({"cpu", "gpu"}));
}

}  // namespace labpose::tools
