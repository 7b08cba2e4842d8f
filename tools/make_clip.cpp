// labpose-make-clip: writes a synthetic video of the synthetic mouse (pipeline/synthetic) for the
// demo script and for trying commands out. Usage: labpose-make-clip OUT.mp4 [--frames N]
// [--size WxH] [--fps F] [--codec auto|libx264|mpeg4|mjpeg] [--seed S]
// Not the demo project itself: `labpose demo` makes that, with labels.
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "pipeline/synthetic/mouse.hpp"
#include "pipeline/video/writer.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: labpose-make-clip OUT.mp4 [--frames N] [--size WxH] [--fps F] "
                 "[--codec C] [--seed S]\n");
    return 2;
  }
  const std::string output = argv[1];
  std::string codec = "auto";
  labpose::pipeline::SyntheticVideoOptions options;
  options.frames = 60;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    try {
      if (flag == "--frames") {
        options.frames = std::stoi(value);
      } else if (flag == "--fps") {
        options.fps = std::stod(value);
      } else if (flag == "--codec") {
        codec = value;
      } else if (flag == "--seed") {
        options.seed = std::stoull(value);
      } else if (flag != "--size" ||
                 std::sscanf(value.c_str(), "%dx%d", &options.width, &options.height) != 2) {
        throw std::invalid_argument(flag);
      }
    } catch (const std::logic_error&) {
      std::fprintf(stderr, "labpose-make-clip: bad option %s %s\n", flag.c_str(), value.c_str());
      return 2;
    }
  }
  try {
    const labpose::pipeline::SyntheticMouse mouse(options);
    labpose::pipeline::VideoWriter writer(output,
                                          {options.width, options.height, options.fps, codec, 18});
    const std::size_t stride = static_cast<std::size_t>(options.width) * 3;
    std::vector<std::uint8_t> frame(stride * static_cast<std::size_t>(options.height));
    for (int index = 0; index < options.frames; ++index) {
      mouse.render(index, frame.data(), stride);
      writer.write_bgr(frame.data(), stride);
    }
    writer.close();
    std::printf("%s: %d frames %dx%d at %.2f fps (%s)\n", output.c_str(), options.frames,
                options.width, options.height, options.fps, writer.codec_name().c_str());
  } catch (const labpose::Error& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
  return 0;
}
