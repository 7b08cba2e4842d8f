// DeepLabCut naming rules.
#include "projects/layout.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <ctime>

#include "core/error.hpp"

namespace labpose::projects {
namespace fs = std::filesystem;
namespace {

// DeepLabCut's suffixes of drawn and filtered outputs, and the machine labels' prefix.
constexpr std::string_view kLabeledSuffix = "_labeled";
constexpr std::string_view kFilteredSuffix = "_filtered";
constexpr std::string_view kMachineLabelsPrefix = "machinelabels-iter";

}  // namespace

std::string config_date(std::chrono::year_month_day day) {
  static constexpr std::array<const char*, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const unsigned month = static_cast<unsigned>(day.month());
  LABPOSE_ASSERT(month >= 1 && month <= 12);
  return fmt::format("{}{}", kMonths[month - 1], static_cast<unsigned>(day.day()));
}

std::string project_folder_name(std::string_view task, std::string_view scorer,
                                std::chrono::year_month_day day) {
  return fmt::format("{}-{}-{:04}-{:02}-{:02}", task, scorer, static_cast<int>(day.year()),
                     static_cast<unsigned>(day.month()), static_cast<unsigned>(day.day()));
}

std::chrono::year_month_day today() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  return std::chrono::year_month_day{std::chrono::year{local.tm_year + 1900},
                                     std::chrono::month{static_cast<unsigned>(local.tm_mon + 1)},
                                     std::chrono::day{static_cast<unsigned>(local.tm_mday)}};
}

int training_fraction_percent(double fraction) {
  return static_cast<int>(100.0 * fraction);
}

std::string shuffle_folder_name(std::string_view task, std::string_view date, double fraction,
                                int shuffle) {
  return fmt::format("{}{}-trainset{}shuffle{}", task, date, training_fraction_percent(fraction),
                     shuffle);
}

std::string frame_image_name(std::int64_t index, std::int64_t frame_count) {
  int digits = 0;
  for (std::int64_t power = 1; power < frame_count; power *= 10) ++digits;  // ceil(log10(n))
  return fmt::format("img{:0{}}.png", index, digits);
}

std::optional<std::int64_t> frame_index_of_image(std::string_view name) {
  if (!name.starts_with("img") || !name.ends_with(".png")) return std::nullopt;
  const std::string_view digits = name.substr(3, name.size() - 7);
  if (digits.empty() || digits.size() > 15 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  std::int64_t index = 0;
  for (const char c : digits) index = index * 10 + (c - '0');
  return index;
}

std::string machine_labels_h5_name(int iteration) {
  return fmt::format("{}{}.h5", kMachineLabelsPrefix, iteration);
}

std::string machine_labels_csv_name() {
  return "machinelabels.csv";
}

std::optional<int> machine_labels_iteration(std::string_view name) {
  if (!name.starts_with(kMachineLabelsPrefix) || !name.ends_with(".h5")) return std::nullopt;
  const std::string_view digits =
      name.substr(kMachineLabelsPrefix.size(), name.size() - kMachineLabelsPrefix.size() - 3);
  int iteration = -1;
  const auto [end, code] = std::from_chars(digits.data(), digits.data() + digits.size(), iteration);
  if (code != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return iteration;
}

std::string portable_file_name(std::string_view path) {
  const std::size_t separator = path.find_last_of("/\\");
  return std::string(separator == std::string_view::npos ? path : path.substr(separator + 1));
}

std::string video_stem(std::string_view path) {
  std::string name = portable_file_name(path);
  const std::size_t dot = name.find_last_of('.');
  if (dot == std::string::npos || dot == 0) return name;
  return name.substr(0, dot);
}

bool has_video_extension(const fs::path& path) {
  static constexpr std::array<std::string_view, 12> kExtensions = {".avi", ".mp4", ".mov", ".mpeg",
                                                                   ".mpg", ".mpv", ".mkv", ".flv",
                                                                   ".qt",  ".yuv", ".m4v", ".wmv"};
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::find(kExtensions.begin(), kExtensions.end(), extension) != kExtensions.end();
}

std::vector<fs::path> videos_in_folder(const fs::path& folder) {
  std::vector<fs::path> videos;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    const std::string stem = entry.path().stem().string();
    const bool ours = is_labeled_output(stem) || stem.ends_with("_full") || stem.starts_with(".");
    if (entry.is_regular_file(error) && has_video_extension(entry.path()) && !ours) {
      videos.push_back(entry.path());
    }
  }
  if (error)
    throw Error(fmt::format("cannot list the folder {}: {}", folder.string(), error.message()));
  std::sort(videos.begin(), videos.end());
  return videos;
}

bool is_labeled_output(std::string_view stem) {
  return stem.ends_with(kLabeledSuffix);
}

fs::path filtered_tracks_path(const fs::path& tracks) {
  return tracks.parent_path() / (tracks.stem().string() + std::string(kFilteredSuffix) + ".h5");
}

fs::path labeled_video_path(const fs::path& tracks, double pcutoff, std::string_view colouring) {
  return tracks.parent_path() / fmt::format("{}{}_p{}{}.mp4", tracks.stem().string(), colouring,
                                            static_cast<int>(100.0 * pcutoff), kLabeledSuffix);
}

fs::path trajectory_plots_folder(const fs::path& folder, std::string_view video_stem) {
  return folder / "plot-poses" / std::string(video_stem);
}

std::vector<std::string> trajectory_plot_names(bool filtered, std::string_view individual) {
  const std::string_view suffix = filtered ? kFilteredSuffix : "";
  std::vector<std::string> names;
  for (const std::string_view figure : {"trajectory", "plot", "plot-likelihood", "hist"})
    names.push_back(fmt::format("{}{}{}.png", figure, suffix, individual));
  return names;
}

fs::path ProjectLayout::labeled_data_folder(std::string_view stem) const {
  return labeled_data_dir() / std::string(stem);
}

fs::path ProjectLayout::checked_labels_folder(std::string_view stem) const {
  return labeled_data_dir() / fmt::format("{}{}", stem, kLabeledSuffix);
}

fs::path ProjectLayout::training_set_dir(int iteration, std::string_view task,
                                         std::string_view date) const {
  return training_datasets_dir() / fmt::format("iteration-{}", iteration) /
         fmt::format("UnaugmentedDataSet_{}{}", task, date);
}

fs::path ProjectLayout::model_dir(int iteration, std::string_view task, std::string_view date,
                                  double fraction, int shuffle) const {
  return labpose_models_dir() / fmt::format("iteration-{}", iteration) /
         shuffle_folder_name(task, date, fraction, shuffle);
}

fs::path model_train_dir(const fs::path& model_dir) {
  return model_dir / "train";
}

fs::path model_test_dir(const fs::path& model_dir) {
  return model_dir / "test";
}

fs::path test_dir_beside(const fs::path& train_dir) {
  return model_test_dir(train_dir.parent_path());
}

fs::path pose_cfg_in(const fs::path& folder) {
  return folder / "pose_cfg.yaml";
}

fs::path inference_cfg_in(const fs::path& test_dir) {
  return test_dir / "inference_cfg.yaml";
}

fs::path ProjectLayout::evaluation_iteration_dir(int iteration) const {
  return root_ / "labpose-evaluation-results" / fmt::format("iteration-{}", iteration);
}

fs::path ProjectLayout::evaluation_dir(int iteration, std::string_view task, std::string_view date,
                                       double fraction, int shuffle) const {
  return evaluation_iteration_dir(iteration) / shuffle_folder_name(task, date, fraction, shuffle);
}

std::vector<fs::path> ProjectLayout::labeled_folders() const {
  std::vector<fs::path> folders;
  std::error_code error;
  if (!fs::is_directory(labeled_data_dir(), error)) return folders;
  for (const auto& entry : fs::directory_iterator(labeled_data_dir(), error)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory(error) && !name.starts_with(".") && !is_labeled_output(name)) {
      folders.push_back(entry.path());
    }
  }
  std::sort(folders.begin(), folders.end());
  return folders;
}

std::string documentation_pickle_name(std::string_view task, double fraction, int shuffle) {
  return fmt::format("Documentation_data-{}_{}shuffle{}.pickle", task,
                     training_fraction_percent(fraction), shuffle);
}

std::string multi_animal_training_set_name(std::string_view task, std::string_view scorer,
                                           double fraction, int shuffle) {
  return fmt::format("{}_{}{}shuffle{}.pickle", task, scorer, training_fraction_percent(fraction),
                     shuffle);
}

std::string split_file_name(double fraction, int shuffle) {
  return fmt::format("labpose-split-{}shuffle{}.json", training_fraction_percent(fraction),
                     shuffle);
}

std::string snapshot_file_name(std::int64_t iteration, bool best) {
  return fmt::format("snapshot-{}{}.safetensors", best ? "best-" : "", iteration);
}

std::string training_set_metadata_name() {
  return "metadata.yaml";
}

std::string scorer_net_name(std::string_view net_type) {
  // DeepLabCut's get_scorer_name: "mobnet_" + int(100 * width) for MobileNets, "effnet_" + what
  // follows "efficientnet-" for EfficientNets (efficientnet-b3 -> effnet_b3, so efficientnet_lite0
  // -> effnet_lite0), underscores removed otherwise.
  constexpr std::string_view kMobileNet = "mobilenet_v2_";
  if (net_type.starts_with(kMobileNet)) {
    const std::string width(net_type.substr(kMobileNet.size()));
    char* end = nullptr;
    const double value = std::strtod(width.c_str(), &end);
    if (end != width.c_str() && *end == '\0')
      return fmt::format("mobnet_{}", static_cast<int>(value * 100.0));
  }
  for (const std::string_view efficientnet : {"efficientnet_", "efficientnet-"}) {
    if (net_type.starts_with(efficientnet) && net_type.size() > efficientnet.size())
      return fmt::format("effnet_{}", net_type.substr(efficientnet.size()));
  }
  std::string name;
  for (const char c : net_type) {
    if (c != '_') name += c;
  }
  return name;
}

std::string scorer_name(std::string_view net_type, std::string_view task, std::string_view date,
                        int shuffle, std::int64_t iterations) {
  return fmt::format("DLC_{}_{}{}shuffle{}_{}", scorer_net_name(net_type), task, date, shuffle,
                     iterations);
}

std::string combined_evaluation_name() {
  return "CombinedEvaluation-results.csv";
}
std::string evaluation_results_name(std::string_view scorer) {
  return fmt::format("{}-results.csv", scorer);
}
std::string assembly_results_name(std::string_view scorer) {
  return fmt::format("{}-assembly-results.csv", scorer);
}
std::string keypoint_results_name(std::string_view scorer) {
  return fmt::format("{}-keypoint-results.csv", scorer);
}
std::string evaluation_predictions_name(std::string_view scorer, std::string_view snapshot) {
  return fmt::format("{}-{}.h5", scorer, snapshot);
}
std::string labeled_images_folder_name(std::string_view scorer, std::string_view snapshot) {
  return fmt::format("LabeledImages_{}_{}", scorer, snapshot);
}
std::string evaluation_image_name(bool training, std::string_view video, std::string_view image) {
  return fmt::format("{}-{}-{}", training ? "Training" : "Test", video, image);
}

std::string collected_data_csv_name(std::string_view scorer) {
  return fmt::format("CollectedData_{}.csv", scorer);
}
std::string collected_data_h5_name(std::string_view scorer) {
  return fmt::format("CollectedData_{}.h5", scorer);
}

// ---- video analysis outputs
std::string analysis_h5_name(std::string_view video_stem, std::string_view scorer) {
  return fmt::format("{}{}.h5", video_stem, scorer);
}
std::string analysis_csv_name(std::string_view video_stem, std::string_view scorer) {
  return fmt::format("{}{}.csv", video_stem, scorer);
}
std::string analysis_meta_pickle_name(std::string_view video_stem, std::string_view scorer) {
  return fmt::format("{}{}_meta.pickle", video_stem, scorer);
}
std::string analysis_meta_json_name(std::string_view video_stem, std::string_view scorer) {
  return fmt::format("{}{}_meta.json", video_stem, scorer);
}
std::string analysis_checkpoint_name(std::string_view video_stem, std::string_view scorer) {
  return fmt::format("{}{}.labpose-checkpoint", video_stem, scorer);
}

}  // namespace labpose::projects
