// The track refinement page (labpose refine-tracks without --swap): a video's frames with each
// track's keypoints in its individual's colour, "swap A and B from this frame on", undo and save,
// served as the labeling page is (127.0.0.1, a token on every request, page_http.hpp). Routes:
// GET /api/tracks, /api/points?frame=N, /api/image?frame=N; POST /api/swap {first, second, from},
// /api/undo, /api/save. Not the swapping or the files (track_session.hpp, track_refinement.hpp).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "labeling/server.hpp"
#include "labeling/track_session.hpp"
#include "projects/config.hpp"

namespace labpose::labeling {

class TrackServer {
 public:
  /// `options`: host, port, token, limits (refine is not used). Reads the tracks and opens the
  /// video (Error naming them when either cannot be).
  TrackServer(const projects::ProjectConfig& config, const std::filesystem::path& video,
              const std::filesystem::path& tracks_file, ServerOptions options);
  ~TrackServer();  // stops serving
  TrackServer(const TrackServer&) = delete;
  TrackServer& operator=(const TrackServer&) = delete;

  /// Binds the port and serves on a background thread. Throws Error when the port cannot be had.
  void start();
  void stop();

  int port() const;
  /// "http://<host>:<port>/?token=<token>".
  std::string url() const;
  TrackSession& session();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace labpose::labeling
