// _labpose: the native half of the Python package. Commands run in-process through the command
// line's own parser and actions (tools/labpose/cli.hpp), with the GIL released, console lines sent
// to Python's sys.stderr, results on std::cout returned as text, and labpose errors raised as
// labpose.Error. Frames in memory go through pipeline::FramePredictor, as analyze's do. No logic of
// its own beyond converting arguments and arrays.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/core.h>

#include <iostream>
#include <sstream>

#include "core/console.hpp"
#include "core/error.hpp"
#include "devices/devices.hpp"
#include "pipeline/analysis/predictor.hpp"
#include "pipeline/export/exported_model.hpp"
#include "pipeline/video/reader.hpp"
#include "projects/layout.hpp"
#include "tools/labpose/cli.hpp"
#include "tools/labpose/config_loading.hpp"
#include "tools/labpose/label.hpp"

namespace py = pybind11;

namespace labpose::python {
namespace {

// While it lives, console lines go to `write` (a Python callable taking a str) and std::cout is
// captured; both are restored after.
class Redirection {
 public:
  Redirection(py::object write, bool live) : write_(std::move(write)) {
    previous_ = std::cout.rdbuf(captured_.rdbuf());
    console::set_writer(
        [this](std::string_view text) {
          const py::gil_scoped_acquire gil;
          try {
            write_(py::str(text.data(), text.size()));
          } catch (py::error_already_set& error) {
            // A failing stream must not end a training run: the text is dropped.
            error.discard_as_unraisable("labpose's console writer");
          }
        },
        live);
  }
  ~Redirection() {
    {
      // A thread of the command still writing holds the console's lock while it waits for the GIL.
      const py::gil_scoped_release no_gil;
      console::set_writer({}, false);
    }
    std::cout.rdbuf(previous_);
  }
  Redirection(const Redirection&) = delete;
  Redirection& operator=(const Redirection&) = delete;
  std::string captured() const { return captured_.str(); }

 private:
  py::object write_;
  std::ostringstream captured_;
  std::streambuf* previous_ = nullptr;
};

// labpose.Error (or labpose.Interrupted, a KeyboardInterrupt too) for a labpose::Error.
void raise_labpose_error(const Error& error) {
  const py::module_ errors = py::module_::import("labpose._errors");
  const char* name = error.kind() == ErrorKind::interrupted ? "Interrupted"
                     : error.kind() == ErrorKind::usage     ? "UsageError"
                                                            : "Error";
  const py::object type = errors.attr(name);
  const py::object instance = type(error.what(), error.hint());
  PyErr_SetObject(type.ptr(), instance.ptr());
}

// Runs `labpose <arguments...>`; returns (exit code, what it printed on stdout).
py::tuple run(const std::vector<std::string>& arguments, py::object write, bool live) {
  int code = 0;
  std::string printed;
  {
    Redirection redirection(std::move(write), live);
    {
      const py::gil_scoped_release no_gil;
      code = tools::run_command(arguments);
    }
    printed = redirection.captured();
  }
  return py::make_tuple(code, printed);
}

class Predictor {
 public:
  Predictor(const std::string& config, const pipeline::PredictorOptions& options, py::object write,
            bool live) {
    Redirection redirection(std::move(write), live);
    const py::gil_scoped_release no_gil;
    // An exported model folder (labpose export), or a project's config.yaml.
    predictor_ = pipeline::is_exported_model(config)
                     ? std::make_unique<pipeline::FramePredictor>(
                           pipeline::exported_analysis_model(config), options)
                     : std::make_unique<pipeline::FramePredictor>(
                           tools::load_project_config(config), options);
  }

  // frames: (N, H, W, 3) uint8 RGB -> (N, J, 3) float32 x, y, likelihood.
  py::array_t<float> predict(
      const py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>& frames) {
    if (frames.ndim() != 4 || frames.shape(3) != 3) {
      std::string shape;
      for (py::ssize_t axis = 0; axis < frames.ndim(); ++axis)
        shape += (axis ? ", " : "") + std::to_string(frames.shape(axis));
      throw UsageError(fmt::format("frames must be an (N, height, width, 3) array of RGB pixels; "
                                   "got shape ({})",
                                   shape),
                       "one frame of (height, width, 3) goes in as frames[None]; a grey frame "
                       "as numpy.repeat(frame[..., None], 3, axis=2)");
    }
    const auto images = static_cast<std::size_t>(frames.shape(0));
    const auto joints = static_cast<py::ssize_t>(predictor_->joints());
    py::array_t<float> poses({static_cast<py::ssize_t>(images), joints, py::ssize_t{3}});
    std::vector<pipeline::KeypointPrediction> keypoints(images * static_cast<std::size_t>(joints));
    {
      const py::gil_scoped_release no_gil;
      predictor_->predict(frames.data(), images, static_cast<int>(frames.shape(1)),
                          static_cast<int>(frames.shape(2)), keypoints.data());
    }
    float* out = poses.mutable_data();
    for (std::size_t i = 0; i < keypoints.size(); ++i) {
      out[3 * i] = static_cast<float>(keypoints[i].x);
      out[3 * i + 1] = static_cast<float>(keypoints[i].y);
      out[3 * i + 2] = static_cast<float>(keypoints[i].likelihood);
    }
    return poses;
  }

  const pipeline::AnalysisModel& model() const { return predictor_->model(); }
  int batch_size() const { return predictor_->batch_size(); }
  std::string device_text() const { return predictor_->device_text(); }

 private:
  std::unique_ptr<pipeline::FramePredictor> predictor_;
};

// Frames [start, start + count) of a video as (count, H, W, 3) uint8 RGB, decoded as analyze
// decodes them; count < 0: to the end.
py::array_t<std::uint8_t> read_frames(const std::string& video, std::int64_t start,
                                      std::int64_t count) {
  std::unique_ptr<pipeline::VideoReader> reader;
  {
    const py::gil_scoped_release no_gil;
    reader = std::make_unique<pipeline::VideoReader>(video);
  }
  const std::int64_t total = reader->frame_count();
  if (start < 0 || start > total) {
    throw UsageError(
        fmt::format("start={} is outside {}, which has {} frames", start, video, total),
        fmt::format("use a start from 0 to {}", total));
  }
  const std::int64_t wanted = count < 0 ? total - start : std::min(count, total - start);
  py::array_t<std::uint8_t> frames({static_cast<py::ssize_t>(wanted),
                                    static_cast<py::ssize_t>(reader->height()),
                                    static_cast<py::ssize_t>(reader->width()), py::ssize_t{3}});
  std::uint8_t* out = frames.mutable_data();
  {
    const py::gil_scoped_release no_gil;
    reader->seek(start);
    for (std::int64_t i = 0; i < wanted; ++i) {
      if (!reader->read(out + static_cast<std::size_t>(i) * reader->frame_bytes())) {
        throw Error(fmt::format("{} ended at frame {} of {}", video, start + i, total),
                    "the video is damaged: check it with labpose analyze");
      }
    }
  }
  return frames;
}

// What the Python functions need to know of a project: its folder, iteration, training fractions
// and the evaluation summary's path.
py::dict project_info(const std::string& config_path, py::object write, bool live) {
  const Redirection redirection(std::move(write), live);
  std::optional<projects::ProjectConfig> config;
  {
    const py::gil_scoped_release no_gil;
    config.emplace(tools::load_project_config(config_path));
  }
  const projects::ConfigValues& values = config->values();
  const projects::ProjectLayout layout(config->project_dir());
  py::dict info;
  info["project"] = config->project_dir().string();
  info["iteration"] = values.iteration;
  info["training_fractions"] = values.training_fraction;
  info["combined_evaluation"] =
      (layout.evaluation_iteration_dir(values.iteration) / projects::combined_evaluation_name())
          .string();
  return info;
}

// The scorer name of the model analyze would use (DeepLabCut's DLCscorer), in a project of either
// kind.
std::string scorer(const std::string& config_path, int shuffle, std::optional<double> fraction,
                   std::optional<int> snapshot_index, bool best, py::object write, bool live) {
  const Redirection redirection(std::move(write), live);
  const py::gil_scoped_release no_gil;
  return pipeline::find_shuffle_model(tools::load_project_config(config_path), shuffle, fraction,
                                      snapshot_index, best)
      .scorer;
}

// The labeling server of a project, serving on its own thread until stop() or the object's end.
class LabelingServer {
 public:
  LabelingServer(const std::string& config, const labeling::ServerOptions& options,
                 py::object write, bool live) {
    const Redirection redirection(std::move(write), live);
    const py::gil_scoped_release no_gil;
    server_ = tools::start_label_server(config, options);
    url_ = server_->url();
  }
  ~LabelingServer() { stop(); }
  LabelingServer(const LabelingServer&) = delete;
  LabelingServer& operator=(const LabelingServer&) = delete;

  // The address it served at, also once stopped.
  const std::string& url() const { return url_; }
  int port() const { return server_ ? server_->port() : 0; }
  bool serving() const { return server_ != nullptr; }
  void stop() {
    if (!server_) return;
    const py::gil_scoped_release no_gil;
    server_->stop();
    server_.reset();
  }

 private:
  std::unique_ptr<labeling::LabelServer> server_;
  std::string url_;
};

}  // namespace
}  // namespace labpose::python

PYBIND11_MODULE(_labpose, m) {
  using namespace labpose;
  m.doc() = "labpose's native library (use the labpose package, not this module)";
  py::register_exception_translator([](std::exception_ptr pointer) {
    try {
      if (pointer) std::rethrow_exception(pointer);
    } catch (const Error& error) {
      python::raise_labpose_error(error);
    }
  });
  m.attr("version") = LABPOSE_VERSION;
  m.def("run", &python::run, py::arg("arguments"), py::arg("write"), py::arg("live"),
        "Runs `labpose <arguments...>` in this process; returns (exit code, stdout text).");
  m.def("read_frames", &python::read_frames, py::arg("video"), py::arg("start") = 0,
        py::arg("count") = -1);
  m.def("project_info", &python::project_info, py::arg("config"), py::arg("write"),
        py::arg("live"));
  m.def("scorer", &python::scorer, py::arg("config"), py::arg("shuffle"), py::arg("fraction"),
        py::arg("snapshot_index"), py::arg("best"), py::arg("write"), py::arg("live"));

  py::class_<pipeline::PredictorOptions>(m, "PredictorOptions")
      .def(py::init<>())
      .def_readwrite("shuffle", &pipeline::PredictorOptions::shuffle)
      .def_readwrite("training_fraction", &pipeline::PredictorOptions::training_fraction)
      .def_readwrite("snapshot_index", &pipeline::PredictorOptions::snapshot_index)
      .def_readwrite("best_snapshot", &pipeline::PredictorOptions::best_snapshot)
      .def_readwrite("device", &pipeline::PredictorOptions::device)
      .def_readwrite("batch_size", &pipeline::PredictorOptions::batch_size)
      .def_property(
          "precision",
          [](const pipeline::PredictorOptions& options) {
            return std::string(nets::precision_name(options.precision));
          },
          [](pipeline::PredictorOptions& options, const std::string& text) {
            options.precision = devices::parse_plan_precision(text);
          });

  py::class_<python::LabelingServer>(m, "LabelingServer")
      .def(py::init([](const std::string& config, const std::string& host, int port, bool refine,
                       py::object write, bool live) {
             labeling::ServerOptions options;
             options.host = host;
             options.port = port;
             options.refine = refine;
             return std::make_unique<python::LabelingServer>(config, options, std::move(write),
                                                             live);
           }),
           py::arg("config"), py::arg("host"), py::arg("port"), py::arg("refine"), py::arg("write"),
           py::arg("live"))
      .def_property_readonly("url", &python::LabelingServer::url)
      .def_property_readonly("port", &python::LabelingServer::port)
      .def_property_readonly("serving", &python::LabelingServer::serving)
      .def("stop", &python::LabelingServer::stop);

  py::class_<python::Predictor>(m, "Predictor")
      .def(py::init<const std::string&, const pipeline::PredictorOptions&, py::object, bool>(),
           py::arg("config"), py::arg("options"), py::arg("write"), py::arg("live"))
      .def("predict", &python::Predictor::predict, py::arg("frames"))
      .def_property_readonly("bodyparts",
                             [](const python::Predictor& p) { return p.model().bodyparts; })
      .def_property_readonly("scorer", [](const python::Predictor& p) { return p.model().scorer; })
      .def_property_readonly("snapshot",
                             [](const python::Predictor& p) { return p.model().snapshot.string(); })
      .def_property_readonly("net_type",
                             [](const python::Predictor& p) { return p.model().net_type; })
      .def_property_readonly("batch_size", &python::Predictor::batch_size)
      .def_property_readonly("device", &python::Predictor::device_text);
}
