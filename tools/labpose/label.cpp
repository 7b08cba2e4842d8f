// labpose label <config> [--port P] [--host H] [--no-browser] [--refine]: serves the labeling page
// until Ctrl-C. Prints the URL with its token, and the ssh -L line for a remote machine.
#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "core/console.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "labeling/server.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"
#include "tools/labpose/label.hpp"

namespace labpose::tools {

void open_browser(const std::string& url) {
  const char* display = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  if ((display == nullptr || *display == '\0') && (wayland == nullptr || *wayland == '\0')) {
    console::info("no display here: open the URL above in a browser");
    return;
  }
  // The URL is ours (host, port, hex token): nothing in it needs shell quoting but the '?'.
  const std::string command = fmt::format("xdg-open '{}' >/dev/null 2>&1 &", url);
  if (std::system(command.c_str()) != 0)
    console::info("could not start a browser: open the URL above");
}

std::unique_ptr<labeling::LabelServer> start_label_server(const std::string& config_path,
                                                          const labeling::ServerOptions& options) {
  const projects::ProjectConfig config = load_project_config(config_path);
  auto server = std::make_unique<labeling::LabelServer>(config, options);
  for (const auto& note : server->store().merge_other_scorers()) {
    console::info(
        "labeled-data/{}: {} point{} from {} merged into CollectedData_{} ({} kept as it is)",
        note.video, note.points, note.points == 1 ? "" : "s", note.source, config.values().scorer,
        note.source);
  }
  if (!labeling::is_loopback_host(options.host)) {
    console::warn(
        "serving on {}, not 127.0.0.1: anyone who can reach this machine and has the token can "
        "read the frames and change the labels (plain HTTP, no encryption)",
        options.host);
  }
  server->start();
  console::info(
      "labeling {} on port {}; from another computer: ssh -L {}:127.0.0.1:{} <this machine>, then "
      "open the URL there",
      config.project_dir().string(), server->port(), server->port(), server->port());
  return server;
}

Command label_command() {
  Command command;
  command.name = "label";
  command.summary = "label frames in the browser (works over ssh on a headless machine)";
  command.define = [](CLI::App& app) -> std::function<int()> {
    struct Options {
      std::string config, host = "127.0.0.1";
      int port = 0;
      bool no_browser = false, refine = false;
    };
    auto options = std::make_shared<Options>();
    app.add_option("config", options->config, "the project's config.yaml")->required();
    app.add_option("--port", options->port, "the port to serve on (default: a free one)")
        ->check(CLI::Range(0, 65535));
    app.add_option("--host", options->host,
                   "the address to serve on (default 127.0.0.1: this machine only; reach it from "
                   "elsewhere with ssh -L)");
    app.add_flag("--no-browser", options->no_browser, "do not open a browser");
    app.add_flag("--refine", options->refine,
                 "show the network's predictions (machinelabels-iter<K>.h5 from extract-outliers) "
                 "to accept or correct");
    app.footer(
        "Every change is saved at once to labeled-data/<video>/CollectedData_<scorer>.csv and .h5 "
        "(the previous version kept as .bak, the files as they were when the session started in "
        ".labpose-backups/<date-time>/). Stop with Ctrl-C.");
    return [options]() {
      labeling::ServerOptions server_options;
      server_options.host = options->host;
      server_options.port = options->port;
      server_options.refine = options->refine;
      // Before the URL is printed: whoever waits for it (a script, a test) may press Ctrl-C at
      // once.
      InterruptHandler interrupt;
      const auto server = start_label_server(options->config, server_options);
      std::cout << server->url() << std::endl;
      console::info("Ctrl-C stops the labeling server");
      if (!options->no_browser && !console::headless()) open_browser(server->url());
      while (!interrupt_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
      server->stop();
      console::info("labeling server stopped; every change was already saved");
      return 0;
    };
  };
  return command;
}

}  // namespace labpose::tools
