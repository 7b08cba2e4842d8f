// The readers of _assemblies.pickle, the tracklets and _full.pickle's candidates: unpickled as
// numpy data, then each array checked for its shape and turned into keypoints or candidates.
#include "pipeline/analysis/tracklet_files.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "nets/restricted_unpickler.hpp"
#include "projects/labels.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
using nets::PickleKind;
using nets::PickleValue;

namespace {

// What reading one file needs for its messages.
struct Source {
  const fs::path& file;
  const char* remedy;  // how to make the file again
};

[[noreturn]] void bad(const Source& source, const std::string& what) {
  throw Error(fmt::format("{}: {}", source.file.string(), what), source.remedy);
}

// The dict pickled in the source's file; `missing_hint` says how to make the file when it is not
// there.
nets::Pickle load(const Source& source, const char* missing_hint) {
  std::error_code error;
  if (!fs::exists(source.file, error))
    throw Error(fmt::format("{} does not exist", source.file.string()), missing_hint);
  const std::string bytes = read_file(source.file);
  nets::Pickle pickle =
      nets::unpickle(bytes, 0, {source.file.string(), ""}, {}, nets::PickleContent::numpy_data);
  if (pickle.root->kind != PickleKind::dict)
    bad(source, fmt::format("holds {}, not a dict", nets::describe(*pickle.root)));
  return pickle;
}

// An integer key: an int, or the digits of a string ("frame0042" -> 42); -1 otherwise.
std::int64_t key_number(const PickleValue& key) {
  if (key.kind == PickleKind::integer) return key.integer;
  if (key.kind != PickleKind::text) return -1;
  const std::size_t first = key.text.find_first_of("0123456789");
  if (first == std::string::npos) return -1;
  const std::size_t last = key.text.find_first_not_of("0123456789", first);
  const std::string digits = key.text.substr(first, last - first);
  return digits.size() > 12 ? -1 : std::stoll(digits);
}

// The values of a float array in C order, with its shape.
struct Values {
  std::vector<std::int64_t> shape;
  std::vector<double> data;
};

Values array_values(const Source& source, const PickleValue& value, const std::string& where) {
  if (value.kind != PickleKind::array)
    bad(source, fmt::format("{} is {}, not a numpy array", where, nets::describe(value)));
  const nets::ArrayRecord& array = value.array;
  const bool f8 = array.dtype == "<f8" || array.dtype == "=f8";
  const bool f4 = array.dtype == "<f4" || array.dtype == "=f4";
  if (!f8 && !f4)
    bad(source, fmt::format("{} is an array of {}, not of float64 or float32", where, array.dtype));
  std::size_t count = 1;
  for (const std::int64_t size : array.shape) count *= static_cast<std::size_t>(size);
  if (array.data.size() != count * (f8 ? 8 : 4))
    bad(source, fmt::format("{} holds {} bytes for {} numbers", where, array.data.size(), count));
  // Fortran order: the step in the data of each dimension, the first's 1 (one vector per array).
  std::vector<std::size_t> fortran_strides(array.fortran ? array.shape.size() : 0);
  std::size_t stride = 1;
  for (std::size_t d = 0; d < fortran_strides.size(); ++d) {
    fortran_strides[d] = stride;
    stride *= static_cast<std::size_t>(array.shape[d]);
  }
  Values out{array.shape, std::vector<double>(count)};
  for (std::size_t c = 0; c < count; ++c) {
    std::size_t at = c;  // c in Fortran order when the array is
    if (array.fortran) {
      at = 0;
      std::size_t rest = c;  // the C-order index, its last dimension first
      for (std::size_t d = fortran_strides.size(); d-- > 0;) {
        const auto size = static_cast<std::size_t>(array.shape[d]);
        at += rest % size * fortran_strides[d];
        rest /= size;
      }
    }
    if (f8) {
      std::memcpy(&out.data[c], array.data.data() + 8 * at, 8);
    } else {
      float number = 0.0F;
      std::memcpy(&number, array.data.data() + 4 * at, 4);
      out.data[c] = number;
    }
  }
  return out;
}

// Keypoints from rows of `columns` numbers (x, y, likelihood[, identity]); NaN x is missing.
std::vector<KeypointPrediction> keypoints_of(const double* rows, int bodyparts,
                                             std::int64_t columns) {
  std::vector<KeypointPrediction> keypoints(static_cast<std::size_t>(bodyparts));
  for (int j = 0; j < bodyparts; ++j) {
    const double* row = rows + j * columns;
    if (std::isnan(row[0]) || std::isnan(row[1])) continue;
    keypoints[static_cast<std::size_t>(j)] = {row[0], row[1], row[2]};
  }
  return keypoints;
}

bool any_present(const std::vector<KeypointPrediction>& keypoints) {
  for (const KeypointPrediction& k : keypoints)
    if (!std::isnan(k.x)) return true;
  return false;
}

Assembly assembly_of(std::vector<KeypointPrediction> keypoints) {
  Assembly assembly;
  for (const KeypointPrediction& k : keypoints)
    assembly.candidate.push_back(std::isnan(k.x) ? -1 : 0);
  assembly.keypoints = std::move(keypoints);
  return assembly;
}

// The identity column of an animal's rows (x, y, likelihood, identity) into Assembly::identity:
// -1 where a keypoint is missing or has none; left empty when no keypoint has one.
void read_identities(const double* rows, std::int64_t columns, Assembly& assembly) {
  if (columns < 4) return;
  std::vector<int> identity(assembly.keypoints.size(), -1);
  bool any = false;
  for (std::size_t j = 0; j < identity.size(); ++j) {
    const double value = rows[static_cast<std::int64_t>(j) * columns + 3];
    // -1 (none), NaN, or a value no individual's index can be: no identity (DeepLabCut's files
    // hold small whole numbers here; a cast of anything else would be undefined).
    if (std::isnan(assembly.keypoints[j].x) || !(value >= 0.0 && value < 1e6)) continue;
    identity[j] = static_cast<int>(value);
    any = true;
  }
  if (any) assembly.identity = std::move(identity);
}

// One animal's (bodyparts, 3 or 4) array, or DeepLabCut's older flat (3 x bodyparts).
TrackedAnimal tracked_animal(const Source& source, const PickleValue& value, int bodyparts,
                             const std::string& where) {
  Values values = array_values(source, value, where);
  if (values.shape.size() == 1 && values.shape[0] == 3 * bodyparts) values.shape = {bodyparts, 3};
  if (values.shape.size() != 2 || values.shape[0] != bodyparts ||
      (values.shape[1] != 3 && values.shape[1] != 4)) {
    bad(source, fmt::format("{} is not a ({}, 3 or 4) array of x, y, likelihood[, identity]", where,
                            bodyparts));
  }
  TrackedAnimal animal{keypoints_of(values.data.data(), bodyparts, values.shape[1]), -1};
  if (values.shape[1] == 4) {
    for (int j = 0; j < bodyparts && animal.identity < 0; ++j) {
      const double identity = values.data[static_cast<std::size_t>(4 * j + 3)];
      if (!std::isnan(identity) && identity >= 0) animal.identity = static_cast<int>(identity);
    }
  }
  return animal;
}

// {frame: (unique bodyparts, 3)} into `single`.
void read_single(const Source& source, const PickleValue& value, int unique_bodyparts,
                 const std::function<void(std::int64_t, TrackedAnimal)>& use) {
  if (value.kind != PickleKind::dict)
    bad(source, fmt::format("\"single\" is {}, not a dict of frames", nets::describe(value)));
  for (const auto& [key, array] : value.entries) {
    const std::int64_t frame = key_number(*key);
    if (frame < 0) bad(source, fmt::format("\"single\" has the key {}", nets::describe(*key)));
    use(frame, tracked_animal(source, *array, unique_bodyparts,
                              fmt::format("\"single\" of frame {}", frame)));
  }
}

// The value of `dict`'s text key `name`; nullptr when it has none.
const PickleValue* entry(const PickleValue& dict, std::string_view name) {
  for (const auto& [key, value] : dict.entries)
    if (key->kind == PickleKind::text && key->text == name) return value;
  return nullptr;
}

// A list of one array per bodyparts (or DeepLabCut's 1-tuple of that list) named `name` of
// `frame`.
const std::vector<const PickleValue*>& per_bodypart(const Source& source, const PickleValue& frame,
                                                    const char* name, int bodyparts,
                                                    const std::string& where) {
  const PickleValue* value = frame.kind == PickleKind::dict ? entry(frame, name) : nullptr;
  if (value == nullptr)
    bad(source, fmt::format("{} is {}, without \"{}\"", where, nets::describe(frame), name));
  if (value->kind == PickleKind::tuple && value->items.size() == 1) value = value->items.front();
  if (value->kind != PickleKind::list || value->items.size() != static_cast<std::size_t>(bodyparts))
    bad(source, fmt::format("{}: \"{}\" is {}, not a list of {} arrays (one per bodypart)", where,
                            name, nets::describe(*value), bodyparts));
  return value->items;
}

// One frame's entry of _full.pickle: its candidates by bodypart.
Candidates frame_candidates(const Source& source, const PickleValue& frame, int bodyparts,
                            const std::string& where) {
  const auto& xy = per_bodypart(source, frame, "coordinates", bodyparts, where);
  const auto& confidence = per_bodypart(source, frame, "confidence", bodyparts, where);
  Candidates candidates(static_cast<std::size_t>(bodyparts));
  for (int j = 0; j < bodyparts; ++j) {
    const auto b = static_cast<std::size_t>(j);
    const std::string part = fmt::format("{}, bodypart {}", where, j);
    const Values positions = array_values(source, *xy[b], part + " coordinates");
    const Values scores = array_values(source, *confidence[b], part + " confidence");
    const std::size_t n = scores.data.size();
    if (positions.data.size() != 2 * n || (n > 0 && positions.shape.back() != 2))
      bad(source, fmt::format("{}: {} confidences for {} numbers of (n, 2) coordinates", part, n,
                              positions.data.size()));
    for (std::size_t c = 0; c < n; ++c) {
      Candidate& candidate = candidates[b].emplace_back();
      candidate.bodypart = j;
      candidate.x = positions.data[2 * c];
      candidate.y = positions.data[2 * c + 1];
      candidate.confidence = scores.data[c];
    }
  }
  return candidates;
}

}  // namespace

std::vector<Assemblies> read_assemblies_pickle(const fs::path& file, std::int64_t frames,
                                               int multi_bodyparts, int unique_bodyparts) {
  const Source source{file,
                      "run labpose analyze on the video again (with --overwrite) to make "
                      "its _assemblies.pickle again"};
  const nets::Pickle pickle =
      load(source,
           "run labpose analyze on the video first (--no-track writes the detections and "
           "assemblies only)");
  std::vector<Assemblies> assembled(static_cast<std::size_t>(std::max<std::int64_t>(frames, 0)));
  const auto frame_of = [&assembled](std::int64_t frame) -> Assemblies& {
    if (static_cast<std::size_t>(frame) >= assembled.size())
      assembled.resize(static_cast<std::size_t>(frame) + 1);
    return assembled[static_cast<std::size_t>(frame)];
  };
  for (const auto& [key, value] : pickle.root->entries) {
    if (key->kind == PickleKind::text && key->text == projects::kUniqueIndividual) {
      read_single(source, *value, unique_bodyparts, [&](std::int64_t frame, TrackedAnimal single) {
        frame_of(frame).single = assembly_of(std::move(single.keypoints));
      });
      continue;
    }
    const std::int64_t frame = key_number(*key);
    if (frame < 0 || key->kind != PickleKind::integer)
      bad(source, fmt::format("has the key {}, not a frame number", nets::describe(*key)));
    const std::string where = fmt::format("frame {}", frame);
    const Values values = array_values(source, *value, where);
    if (values.shape.size() != 3 || values.shape[1] != multi_bodyparts ||
        (values.shape[2] != 3 && values.shape[2] != 4)) {
      bad(source, fmt::format("{} is not an (animals, {}, 3 or 4) array of x, y, likelihood[, "
                              "identity]",
                              where, multi_bodyparts));
    }
    Assemblies& assemblies = frame_of(frame);
    const std::int64_t per_animal = values.shape[1] * values.shape[2];
    for (std::int64_t a = 0; a < values.shape[0]; ++a) {
      const double* rows = values.data.data() + a * per_animal;
      auto keypoints = keypoints_of(rows, multi_bodyparts, values.shape[2]);
      if (!any_present(keypoints)) continue;
      assemblies.animals.push_back(assembly_of(std::move(keypoints)));
      read_identities(rows, values.shape[2], assemblies.animals.back());
    }
  }
  return assembled;
}

Tracklets read_tracklets_pickle(const fs::path& file, int multi_bodyparts, int unique_bodyparts) {
  const Source source{file,
                      "run labpose track on the video again (with --overwrite) to make its "
                      "tracklets again"};
  const nets::Pickle pickle =
      load(source, "run labpose track on the video first (or labpose analyze, which tracks too)");
  Tracklets tracklets;
  for (const auto& [key, value] : pickle.root->entries) {
    const bool named = key->kind == PickleKind::text;
    if (named && key->text == "header") continue;
    if (named && key->text == projects::kUniqueIndividual) {
      read_single(source, *value, unique_bodyparts, [&](std::int64_t frame, TrackedAnimal single) {
        tracklets.single[static_cast<int>(frame)] = std::move(single);
      });
      continue;
    }
    const std::int64_t id = key_number(*key);
    if (id < 0 || value->kind != PickleKind::dict)
      bad(source, fmt::format("has the entry {}: {}, not a tracklet id and its frames",
                              nets::describe(*key), nets::describe(*value)));
    Tracklet& tracklet = tracklets.by_id[static_cast<int>(id)];
    for (const auto& [frame_name, array] : value->entries) {
      const std::int64_t frame = key_number(*frame_name);
      if (frame < 0)
        bad(source, fmt::format("tracklet {} has the key {}, not a frame", id,
                                nets::describe(*frame_name)));
      tracklet[static_cast<int>(frame)] = tracked_animal(
          source, *array, multi_bodyparts, fmt::format("tracklet {}, frame {}", id, frame));
    }
  }
  return tracklets;
}

std::vector<Candidates> read_full_pickle_candidates(const fs::path& file, std::int64_t frames,
                                                    int bodyparts) {
  const Source source{file,
                      "run labpose analyze on the video again (with --overwrite) to make its "
                      "_full.pickle again"};
  const nets::Pickle pickle =
      load(source,
           "run labpose analyze on the video (with --overwrite when its tracks exist): it writes "
           "every frame's detections into the _full.pickle beside the tracks");
  std::vector<Candidates> candidates(static_cast<std::size_t>(std::max<std::int64_t>(frames, 0)),
                                     Candidates(static_cast<std::size_t>(bodyparts)));
  for (const auto& [key, value] : pickle.root->entries) {
    if (key->kind == PickleKind::text && key->text == "metadata") continue;
    const std::int64_t frame = key_number(*key);
    if (frame < 0 || key->kind != PickleKind::text)
      bad(source, fmt::format("has the key {}, not a frame name", nets::describe(*key)));
    if (static_cast<std::size_t>(frame) >= candidates.size())
      candidates.resize(static_cast<std::size_t>(frame) + 1,
                        Candidates(static_cast<std::size_t>(bodyparts)));
    candidates[static_cast<std::size_t>(frame)] =
        frame_candidates(source, *value, bodyparts, fmt::format("\"{}\"", key->text));
  }
  return candidates;
}

}  // namespace labpose::pipeline
