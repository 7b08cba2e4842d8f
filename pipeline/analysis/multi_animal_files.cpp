// The pickles and the tracks table of a multi-animal analysis.
#include "pipeline/analysis/multi_animal_files.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cmath>

#include "core/error.hpp"
#include "projects/labels.hpp"
#include "projects/pickle.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
using projects::PyValue;

namespace {

PyValue names_list(const std::vector<std::string>& names) {
  PyValue::List list;
  for (const auto& name : names) list.emplace_back(name);
  return PyValue(std::move(list));
}

std::vector<std::string> all_bodyparts(const AnimalFileHeader& header) {
  std::vector<std::string> names = header.multi_bodyparts;
  names.insert(names.end(), header.unique_bodyparts.begin(), header.unique_bodyparts.end());
  return names;
}

PyValue full_metadata(const AnimalFileHeader& header) {
  PyValue::List graph, edges, joints;
  for (const GraphEdge& edge : header.graph)
    graph.emplace_back(PyValue::List{PyValue(edge.source), PyValue(edge.target)});
  for (const int e : header.edges) edges.emplace_back(e);
  for (int j = 0; j < header.bodyparts(); ++j) joints.emplace_back(PyValue::List{PyValue(j)});
  const auto width = static_cast<std::int64_t>(frame_key(0, header.frames).size() - 5);
  return PyValue::dict({{"nms radius", PyValue(header.candidates.nms_radius)},
                        {"minimal confidence", PyValue(header.candidates.min_confidence)},
                        {"sigma", PyValue(header.candidates.smoothing_sigma)},
                        {"PAFgraph", PyValue(std::move(graph))},
                        {"PAFinds", PyValue(std::move(edges))},
                        {"all_joints", PyValue(std::move(joints))},
                        {"all_joints_names", names_list(all_bodyparts(header))},
                        {"nframes", PyValue(header.frames)},
                        {"key_str_width", PyValue(width)}});
}

// DeepLabCut's `identity` of a frame: per bodypart, (candidates, individuals) float32.
PyValue identity_list(const ImageDetections& detections, int individuals) {
  PyValue::List identity;
  for (std::size_t j = 0; j < detections.candidates.size(); ++j) {
    const auto n = static_cast<std::int64_t>(detections.candidates[j].size());
    std::vector<float> values;
    if (n > 0) {
      const std::vector<double>& probabilities = detections.identity.at(j);
      values.assign(probabilities.begin(), probabilities.end());
    }
    identity.push_back(PyValue::float32_array({n, individuals}, values));
  }
  return PyValue(std::move(identity));
}

// One frame's entry of _full.pickle.
PyValue full_frame(const ImageDetections& detections, const AnimalFileHeader& header) {
  const std::vector<int>& edges = header.edges;
  PyValue::List coordinates, confidence;
  for (const auto& bodypart : detections.candidates) {
    std::vector<double> xy;
    std::vector<float> p;
    for (const Candidate& c : bodypart) {
      xy.push_back(c.x);
      xy.push_back(c.y);
      p.push_back(static_cast<float>(c.confidence));
    }
    const auto n = static_cast<std::int64_t>(bodypart.size());
    coordinates.push_back(PyValue::float64_array({n, 2}, xy));
    confidence.push_back(PyValue::float32_array({n, 1}, p));
  }
  PyValue::Dict costs;
  for (const int e : edges) {
    const EdgeCosts& edge = detections.costs.at(static_cast<std::size_t>(e));
    // DeepLabCut's matrices are 0 x 0 when either side has no candidate.
    const bool empty = edge.sources == 0 || edge.targets == 0;
    const std::vector<std::int64_t> shape =
        empty ? std::vector<std::int64_t>{0, 0}
              : std::vector<std::int64_t>{edge.sources, edge.targets};
    const std::vector<float> affinity(edge.affinity.begin(), edge.affinity.end());
    const std::vector<float> length(edge.length.begin(), edge.length.end());
    costs.emplace_back(PyValue(e),
                       PyValue::dict({{"m1", PyValue::float32_array(shape, affinity)},
                                      {"distance", PyValue::float32_array(shape, length)}}));
  }
  PyValue::Dict entries{{PyValue("coordinates"), PyValue::tuple({PyValue(std::move(coordinates))})},
                        {PyValue("confidence"), PyValue(std::move(confidence))},
                        {PyValue("costs"), PyValue::dict(std::move(costs))}};
  if (header.identity_channels > 0)
    entries.emplace_back(PyValue("identity"), identity_list(detections, header.identity_channels));
  return PyValue::dict(std::move(entries));
}

// (keypoints, 4) rows of x, y, likelihood, identity; all NaN for a missing keypoint. The identity
// of keypoint j is identities[j], or `identity` when identities is empty.
void append_keypoints(const std::vector<KeypointPrediction>& keypoints, int identity,
                      std::vector<double>& out, const std::vector<int>& identities = {}) {
  const double nan = std::nan("");
  for (std::size_t j = 0; j < keypoints.size(); ++j) {
    const KeypointPrediction& k = keypoints[j];
    const bool present = !std::isnan(k.x);
    const int individual = j < identities.size() ? identities[j] : identity;
    out.insert(out.end(), {present ? k.x : nan, present ? k.y : nan, present ? k.likelihood : nan,
                           present ? individual : nan});
  }
}

// (keypoints, 3): x, y, likelihood.
PyValue unique_array(const std::vector<KeypointPrediction>& keypoints) {
  std::vector<double> values;
  for (const KeypointPrediction& k : keypoints) {
    values.insert(values.end(), {k.x, k.y, std::isnan(k.x) ? std::nan("") : k.likelihood});
  }
  return PyValue::float64_array({static_cast<std::int64_t>(keypoints.size()), 3}, values);
}

PyValue single_dict(const Tracklet& single) {
  PyValue::Dict entries;
  for (const auto& [frame, animal] : single)
    entries.emplace_back(PyValue(static_cast<std::int64_t>(frame)), unique_array(animal.keypoints));
  return PyValue::dict(std::move(entries));
}

// pandas.MultiIndex.from_arrays([scorers, bodyparts, coords], None, names): built by pandas when
// loaded, so it does not depend on how a pandas version pickles its indexes.
PyValue bodypart_header(const AnimalFileHeader& header) {
  PyValue::List scorers, bodyparts, coords;
  for (const auto& bodypart : header.multi_bodyparts) {
    for (const char* coord : {"x", "y", "likelihood"}) {
      scorers.emplace_back(header.scorer);
      bodyparts.emplace_back(bodypart);
      coords.emplace_back(coord);
    }
  }
  const PyValue from_arrays =
      PyValue::reduce(PyValue::global("builtins", "getattr"),
                      PyValue::tuple({PyValue::global("pandas", "MultiIndex"), "from_arrays"}));
  return PyValue::reduce(
      from_arrays, PyValue::tuple({PyValue(PyValue::List{PyValue(std::move(scorers)),
                                                         PyValue(std::move(bodyparts)),
                                                         PyValue(std::move(coords))}),
                                   PyValue(), names_list({"scorer", "bodyparts", "coords"})}));
}

}  // namespace

std::string tracker_file_code(TrackMethod method) {
  switch (method) {
    case TrackMethod::box:
      return "bx";
    case TrackMethod::identity:
      return "id";
    case TrackMethod::ellipse:
      break;
  }
  return "el";
}

MultiAnimalFiles multi_animal_files(const fs::path& folder, const std::string& video_stem,
                                    const std::string& scorer, TrackMethod tracker) {
  const std::string base = video_stem + scorer;
  const std::string tracked = base + "_" + tracker_file_code(tracker);
  return {folder / (base + "_full.pickle"), folder / (base + "_assemblies.pickle"),
          folder / (tracked + ".pickle"),   folder / (tracked + ".h5"),
          folder / (tracked + ".csv"),      folder / (base + ".labpose-detections")};
}

std::string frame_key(std::int64_t index, std::int64_t frames) {
  const auto width =
      frames > 1 ? static_cast<int>(std::ceil(std::log10(static_cast<double>(frames)))) : 0;
  return fmt::format("frame{:0{}}", index, width);
}

FullPickleWriter::FullPickleWriter(fs::path file, const AnimalFileHeader& header)
    : file_(std::move(file)), header_(header) {
  out_ = std::fopen(file_.temp_path().c_str(), "wb");
  if (out_ == nullptr) throw write_error(file_.target(), errno);
  // PROTO 3, EMPTY_DICT, then one SETITEM per entry.
  write(std::string("\x80\x03}", 3) + projects::pickle_opcodes(PyValue("metadata")) +
        projects::pickle_opcodes(full_metadata(header_)) + "s");
}

FullPickleWriter::~FullPickleWriter() {
  if (out_ != nullptr) std::fclose(out_);
}

void FullPickleWriter::write(const std::string& bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), out_) != bytes.size())
    throw write_error(file_.target(), errno);
}

void FullPickleWriter::add(std::int64_t index, const ImageDetections& detections) {
  write(projects::pickle_opcodes(PyValue(frame_key(index, header_.frames))) +
        projects::pickle_opcodes(full_frame(detections, header_)) + "s");
}

void FullPickleWriter::commit() {
  write(".");  // STOP
  const bool closed = std::fclose(out_) == 0;
  out_ = nullptr;
  if (!closed) throw write_error(file_.target(), errno);
  file_.commit();
}

void write_assemblies_pickle(const fs::path& file, const std::vector<Assemblies>& frames) {
  PyValue::Dict entries, single;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const Assemblies& frame = frames[i];
    if (frame.single)
      single.emplace_back(PyValue(static_cast<std::int64_t>(i)),
                          unique_array(frame.single->keypoints));
    if (frame.animals.empty()) continue;
    std::vector<double> values;
    for (const Assembly& animal : frame.animals)
      append_keypoints(animal.keypoints, -1, values, animal.identity);
    const auto animals = static_cast<std::int64_t>(frame.animals.size());
    const auto bodyparts = static_cast<std::int64_t>(frame.animals.front().keypoints.size());
    entries.emplace_back(PyValue(static_cast<std::int64_t>(i)),
                         PyValue::float64_array({animals, bodyparts, 4}, values));
  }
  if (!single.empty())
    entries.emplace_back(PyValue(std::string(projects::kUniqueIndividual)),
                         PyValue::dict(std::move(single)));
  write_file_atomically(file, projects::pickle(PyValue::dict(std::move(entries))));
}

void write_tracklets_pickle(const fs::path& file, const Tracklets& tracklets,
                            const AnimalFileHeader& header) {
  PyValue::Dict entries;
  for (const auto& [id, tracklet] : tracklets.by_id) {
    PyValue::Dict frames;
    for (const auto& [frame, animal] : tracklet) {
      std::vector<double> values;
      append_keypoints(animal.keypoints, animal.identity, values);
      frames.emplace_back(
          PyValue(frame_key(frame, header.frames)),
          PyValue::float64_array({static_cast<std::int64_t>(animal.keypoints.size()), 4}, values));
    }
    entries.emplace_back(PyValue(id), PyValue::dict(std::move(frames)));
  }
  if (!header.unique_bodyparts.empty())
    entries.emplace_back(PyValue(std::string(projects::kUniqueIndividual)),
                         single_dict(tracklets.single));
  entries.emplace_back(PyValue("header"), bodypart_header(header));
  write_file_atomically(file, projects::pickle(PyValue::dict(std::move(entries))));
}

projects::Table tracks_table(const Tracks& tracks, const AnimalFileHeader& header) {
  projects::Table table;
  table.column_level_names = {"scorer", "individuals", "bodyparts", "coords"};
  for (const auto& individual : header.individuals) {
    for (const auto& bodypart : header.multi_bodyparts) {
      for (const char* coord : {"x", "y", "likelihood"})
        table.columns.push_back({header.scorer, individual, bodypart, coord});
    }
  }
  for (const auto& bodypart : header.unique_bodyparts) {
    for (const char* coord : {"x", "y", "likelihood"})
      table.columns.push_back(
          {header.scorer, std::string(projects::kUniqueIndividual), bodypart, coord});
  }
  table.integer_index = true;
  for (std::int64_t frame = 0; frame < header.frames; ++frame)
    table.add_row({std::to_string(frame)});
  // Track `first_column / 3`'s keypoints into the columns from `first_column`.
  const auto fill = [&table, &header](const Tracklet& track, std::size_t first_column) {
    for (const auto& [frame, animal] : track) {
      if (frame < 0 || frame >= header.frames) continue;
      for (std::size_t j = 0; j < animal.keypoints.size(); ++j) {
        const KeypointPrediction& k = animal.keypoints[j];
        if (std::isnan(k.x)) continue;
        const auto row = static_cast<std::size_t>(frame);
        table.at(row, first_column + 3 * j) = k.x;
        table.at(row, first_column + 3 * j + 1) = k.y;
        table.at(row, first_column + 3 * j + 2) = k.likelihood;
      }
    }
  };
  const std::size_t per_animal = 3 * header.multi_bodyparts.size();
  for (std::size_t t = 0; t < tracks.tracks.size() && t < header.individuals.size(); ++t)
    fill(tracks.tracks[t], t * per_animal);
  if (!header.unique_bodyparts.empty()) fill(tracks.single, header.individuals.size() * per_animal);
  return table;
}

}  // namespace labpose::pipeline
