// labpose-make-clip: writes a short synthetic video (a textured disk moving over a noisy
// background) for the demo script and the tests. Usage: labpose-make-clip OUT.mp4 [--frames N]
// [--size WxH] [--fps F]
#include <fmt/core.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <cstdio>
#include <string>

#include "core/error.hpp"
#include "pipeline/video/writer.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: labpose-make-clip OUT.mp4 [--frames N] [--size WxH] [--fps F] [--codec C]\n");
    return 2;
  }
  std::string output = argv[1], codec = "auto";
  int frames = 60, width = 320, height = 240;
  double fps = 30.0;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--frames") {
      frames = std::stoi(value);
    } else if (flag == "--fps") {
      fps = std::stod(value);
    } else if (flag == "--codec") {
      codec = value;
    } else if (flag == "--size" && std::sscanf(value.c_str(), "%dx%d", &width, &height) == 2) {
    } else {
      std::fprintf(stderr, "labpose-make-clip: unknown option %s %s\n", flag.c_str(),
                   value.c_str());
      return 2;
    }
  }
  try {
    labpose::pipeline::VideoWriter writer(output, {width, height, fps, codec, 18});
    cv::RNG random(12345);
    cv::Mat background(height, width, CV_8UC3);
    random.fill(background, cv::RNG::UNIFORM, cv::Scalar(60, 70, 60), cv::Scalar(110, 120, 110));
    cv::GaussianBlur(background, background, cv::Size(5, 5), 1.5);
    cv::Mat frame;
    for (int index = 0; index < frames; ++index) {
      background.copyTo(frame);
      const double t = 2.0 * M_PI * index / std::max(frames, 1);
      const cv::Point centre(static_cast<int>(width * (0.5 + 0.3 * std::cos(t))),
                             static_cast<int>(height * (0.5 + 0.3 * std::sin(2 * t))));
      cv::circle(frame, centre, std::max(4, width / 16), cv::Scalar(200, 210, 230), cv::FILLED,
                 cv::LINE_AA);
      cv::circle(frame, centre + cv::Point(width / 40, 0), std::max(2, width / 64),
                 cv::Scalar(30, 30, 160), cv::FILLED, cv::LINE_AA);
      writer.write_bgr(frame.data, frame.step);
    }
    writer.close();
    std::printf("%s: %d frames %dx%d at %.2f fps (%s)\n", output.c_str(), frames, width, height,
                fps, writer.codec_name().c_str());
  } catch (const labpose::Error& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
  return 0;
}
