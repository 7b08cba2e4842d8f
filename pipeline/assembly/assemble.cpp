// DeepLabCut's Assembler: animals grown, fused and pruned from the links of one image.
#include "pipeline/assembly/assemble.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <queue>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "pipeline/assembly/links.hpp"

namespace labpose::pipeline {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::size_t at(int index) {
  return static_cast<std::size_t>(index);
}

// A candidate of a multi-animal bodypart, numbered across bodyparts (DeepLabCut's Joint.idx).
struct Joint {
  int bodypart = 0;
  int index = 0;  // in Candidates[bodypart]
  const Candidate* candidate = nullptr;
};

struct Link {
  int source = 0, target = 0;  // joint numbers
  double affinity = 0.0;
};

// An animal being built (DeepLabCut's Assembly): a joint per bodypart slot and the links joined.
struct Group {
  std::vector<int> slot;     // per bodypart: joint number or -1
  std::vector<int> members;  // joint numbers, in the order they joined
  std::vector<int> links;    // link numbers, in the order they joined
  double affinity_sum = 0.0;
  int size = 0;
  bool alive = true;

  explicit Group(int bodyparts) : slot(at(bodyparts), -1) {}
  bool has(int joint) const {
    return std::find(members.begin(), members.end(), joint) != members.end();
  }
  bool shares_bodypart_with(const Group& other) const {
    for (std::size_t b = 0; b < slot.size(); ++b) {
      if (slot[b] != -1 && other.slot[b] != -1) return true;
    }
    return false;
  }
};

// The first of the highest total affinity.
std::vector<Group>::iterator strongest(std::vector<Group>& groups) {
  auto best = groups.begin();
  for (auto g = groups.begin(); g != groups.end(); ++g) {
    if (g->affinity_sum > best->affinity_sum) best = g;
  }
  return best;
}

class Assembler {
 public:
  Assembler(const Candidates& candidates, int multi_bodyparts, const AssemblySettings& settings)
      : multi_(multi_bodyparts), settings_(settings) {
    first_joint_.resize(at(multi_bodyparts));
    for (int b = 0; b < multi_bodyparts; ++b) {
      first_joint_[at(b)] = static_cast<int>(joints_.size());
      const auto& list = candidates[at(b)];
      for (std::size_t k = 0; k < list.size(); ++k) {
        joints_.push_back({b, static_cast<int>(k), &list[k]});
      }
    }
    assembled_.assign(joints_.size(), 0);
    lookup_.resize(joints_.size());
  }

  const std::vector<Joint>& joints() const { return joints_; }

  void add_links(const std::vector<CandidateLink>& links, const PafGraph& graph,
                 const PreviousOwners& owners);
  std::vector<Group> build();
  std::vector<Group> prune(std::vector<Group> groups) const;

 private:
  bool add_joint(Group& group, int joint) const;
  bool add_link(Group& group, int link) const;
  void fill(Group& group);
  void take_complete_components(std::vector<Group>& groups);
  void fuse_superfluous(std::vector<Group>& groups) const;
  void grow(const std::vector<int>& order, std::vector<Group>& groups);
  // A link in play: not taken out, and not held back (across two previous animals) while holding.
  bool active(int link) const { return !removed_[at(link)] && !(holding_ && held_[at(link)]); }
  void mark_assembled(const Group& group);
  double intersection(const Group& a, const Group& b) const;

  int multi_;
  AssemblySettings settings_;
  std::vector<Joint> joints_;
  std::vector<int> first_joint_;  // per bodypart: its first joint number
  std::vector<Link> links_;
  std::vector<std::vector<std::pair<int, int>>> lookup_;  // per joint: (other joint, link number)
  std::vector<char> removed_;                             // per link: taken out of the lookup
  std::vector<char> held_;  // per link: its candidates belong to two different previous animals
  bool holding_ = false;    // held links are out of play (the first pass of build())
  std::vector<char> assembled_;  // per joint
};

void Assembler::add_links(const std::vector<CandidateLink>& links, const PafGraph& graph,
                          const PreviousOwners& owners) {
  const auto owner = [&owners](int bodypart, int candidate) {
    return owners.empty() ? -1 : owners[at(bodypart)][at(candidate)];
  };
  for (const CandidateLink& link : links) {
    const GraphEdge& edge = graph[at(link.edge)];
    const int from = owner(edge.source, link.source), to = owner(edge.target, link.target);
    held_.push_back(from >= 0 && to >= 0 && from != to);
    const int source = first_joint_[at(edge.source)] + link.source;
    const int target = first_joint_[at(edge.target)] + link.target;
    const auto number = static_cast<int>(links_.size());
    links_.push_back({source, target, link.affinity});
    lookup_[at(source)].emplace_back(target, number);
    lookup_[at(target)].emplace_back(source, number);
    removed_.push_back(0);
  }
}

bool Assembler::add_joint(Group& group, int joint) const {
  int& slot = group.slot[at(joints_[at(joint)].bodypart)];
  if (slot != -1) return false;
  slot = joint;
  group.members.push_back(joint);
  ++group.size;
  return true;
}

// DeepLabCut's Assembly.add_link: a link inside the group only adds its affinity; a link whose two
// bodyparts are both taken is refused.
bool Assembler::add_link(Group& group, int link) const {
  const Link& l = links_[at(link)];
  if (group.has(l.source) && group.has(l.target)) {
    group.affinity_sum += l.affinity;
    group.links.push_back(link);
    return false;
  }
  if (group.slot[at(joints_[at(l.source)].bodypart)] != -1 &&
      group.slot[at(joints_[at(l.target)].bodypart)] != -1) {
    return false;
  }
  add_joint(group, l.source);
  add_joint(group, l.target);
  group.affinity_sum += l.affinity;
  group.links.push_back(link);
  return true;
}

void Assembler::mark_assembled(const Group& group) {
  for (const int joint : group.members) assembled_[at(joint)] = 1;
}

// Grows `group` best-first: the strongest link from a member to a free joint, until every
// bodypart is present or no link is left.
void Assembler::fill(Group& group) {
  struct Entry {
    double affinity;
    long order;
    int link;
    bool operator<(const Entry& other) const {  // the top is the strongest, then the oldest
      if (affinity != other.affinity) return affinity < other.affinity;
      return order > other.order;
    }
  };
  std::priority_queue<Entry> stack;
  std::vector<char> visited(links_.size(), 0);
  long pushed = 0;
  const auto push_links_of = [&](int joint) {
    for (const auto& [other, link] : lookup_[at(joint)]) {
      if (!active(link) || group.has(other) || visited[at(link)]) continue;
      stack.push({links_[at(link)].affinity, pushed++, link});
      visited[at(link)] = 1;
    }
  };
  std::vector<int> members = group.members;
  std::sort(members.begin(), members.end());
  for (const int joint : members) push_links_of(joint);
  while (!stack.empty() && group.size < multi_) {
    const int link = stack.top().link;
    stack.pop();
    const Link& l = links_[at(link)];
    int joining = -1;
    if (group.has(l.source)) {
      joining = l.target;
    } else if (group.has(l.target)) {
      joining = l.source;
    } else {
      continue;
    }
    if (assembled_[at(joining)]) continue;
    add_link(group, link);
    push_links_of(joining);
  }
}

// Connected groups of links holding as many joints as there are bodyparts become animals as they
// are (networkx.connected_components, nodes in the order the links name them). Held links join
// nothing while they are held.
void Assembler::take_complete_components(std::vector<Group>& groups) {
  std::vector<int> nodes;
  std::vector<char> named(joints_.size(), 0);
  for (std::size_t link = 0; link < links_.size(); ++link) {
    if (!active(static_cast<int>(link))) continue;
    const Link& l = links_[link];
    for (const int joint : {l.source, l.target}) {
      if (!named[at(joint)]) nodes.push_back(joint);
      named[at(joint)] = 1;
    }
  }
  std::vector<int> component_of(joints_.size(), -1);
  int components = 0;
  std::vector<int> sizes;
  for (const int start : nodes) {
    if (component_of[at(start)] != -1) continue;
    std::vector<int> queue{start};
    component_of[at(start)] = components;
    for (std::size_t k = 0; k < queue.size(); ++k) {
      for (const auto& [other, link] : lookup_[at(queue[k])]) {
        if (active(link) && component_of[at(other)] == -1) {
          component_of[at(other)] = components;
          queue.push_back(other);
        }
      }
    }
    sizes.push_back(static_cast<int>(queue.size()));
    ++components;
  }
  for (int c = 0; c < components; ++c) {
    if (sizes[at(c)] != multi_) continue;
    Group group(multi_);
    for (std::size_t link = 0; link < links_.size(); ++link) {
      if (!active(static_cast<int>(link)) || component_of[at(links_[link].source)] != c) continue;
      if (add_link(group, static_cast<int>(link))) removed_[link] = 1;
    }
    mark_assembled(group);
    groups.push_back(std::move(group));
  }
}

// More animals than max_individuals: incomplete ones without a common bodypart are fused where a
// link that no animal uses joins them (the link itself is not added, as in DeepLabCut).
void Assembler::fuse_superfluous(std::vector<Group>& groups) const {
  std::vector<int> owner(joints_.size(), -1);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].size == multi_) continue;
    for (const int joint : groups[g].members) owner[at(joint)] = static_cast<int>(g);
  }
  std::vector<char> used(links_.size(), 0);
  for (const Group& group : groups) {
    for (const int link : group.links) used[at(link)] = 1;
  }
  for (std::size_t link = 0; link < links_.size(); ++link) {
    if (used[link]) continue;
    const int a = owner[at(links_[link].source)], b = owner[at(links_[link].target)];
    if (a == -1 || b == -1 || groups[at(a)].shares_bodypart_with(groups[at(b)])) continue;
    Group fused(multi_);
    for (const int l : groups[at(a)].links) add_link(fused, l);
    for (const int l : groups[at(b)].links) add_link(fused, l);
    for (const int joint : groups[at(b)].members) owner[at(joint)] = a;
    groups[at(a)] = std::move(fused);
    groups[at(b)].alive = false;
  }
  std::erase_if(groups, [](const Group& g) { return !g.alive; });
}

// A new animal from each link, strongest first, whose two joints are still free, grown by fill().
void Assembler::grow(const std::vector<int>& order, std::vector<Group>& groups) {
  for (const int link : order) {
    if (!active(link) || assembled_[at(links_[at(link)].source)] ||
        assembled_[at(links_[at(link)].target)]) {
      continue;
    }
    Group group(multi_);
    add_link(group, link);
    fill(group);
    for (const int l : group.links) removed_[at(l)] = 1;
    mark_assembled(group);
    groups.push_back(std::move(group));
  }
}

// DeepLabCut's build, in two passes when the temporal prior holds links back: first without the
// links across two previous animals, so that each animal of the previous frame is rebuilt from its
// own links before a neighbour can take its joints by a weaker one; then with them, for joints and
// animals still unjoined, and to fuse surplus animals.
std::vector<Group> Assembler::build() {
  std::vector<Group> groups;
  holding_ = std::find(held_.begin(), held_.end(), 1) != held_.end();
  take_complete_components(groups);
  if (groups.size() == at(settings_.max_individuals)) return groups;
  std::vector<int> by_affinity(links_.size());
  std::iota(by_affinity.begin(), by_affinity.end(), 0);
  std::stable_sort(by_affinity.begin(), by_affinity.end(), [this](int a, int b) {
    return links_[at(a)].affinity > links_[at(b)].affinity;
  });
  grow(by_affinity, groups);
  if (holding_) {
    holding_ = false;
    grow(by_affinity, groups);
  }
  if (groups.size() > at(settings_.max_individuals)) fuse_superfluous(groups);
  for (Group& group : groups) {  // a second chance for incomplete animals
    if (group.size == multi_) continue;
    fill(group);
    mark_assembled(group);
  }
  return groups;
}

// DeepLabCut's Assembly.intersection_with: the box shared by both animals' keypoints, and the
// smaller of the fractions of each animal's keypoints inside it.
double Assembler::intersection(const Group& a, const Group& b) const {
  const auto box = [this](const Group& g) {
    std::array<double, 4> extent{kNaN, kNaN, kNaN, kNaN};  // x1, y1, x2, y2
    for (const int joint : g.members) {
      const Candidate& c = *joints_[at(joint)].candidate;
      extent[0] = std::fmin(extent[0], c.x);
      extent[1] = std::fmin(extent[1], c.y);
      extent[2] = std::fmax(extent[2], c.x);
      extent[3] = std::fmax(extent[3], c.y);
    }
    return extent;
  };
  const auto ea = box(a), eb = box(b);
  const double x1 = std::max(ea[0], eb[0]), y1 = std::max(ea[1], eb[1]);
  const double x2 = std::min(ea[2], eb[2]), y2 = std::min(ea[3], eb[3]);
  if (x2 < x1 || y2 < y1) return 0.0;
  const auto inside = [&](const Group& g) {
    int count = 0;
    for (const int joint : g.members) {
      const Candidate& c = *joints_[at(joint)].candidate;
      count += c.x >= x1 && c.x <= x2 && c.y >= y1 && c.y <= y2;
    }
    return static_cast<double>(count) / g.size;
  };
  return std::min(inside(a), inside(b));
}

std::vector<Group> Assembler::prune(std::vector<Group> groups) const {
  std::erase_if(groups, [](const Group& g) { return g.size == 0; });
  const auto too_few_links = [this](const Group& g) {
    const auto n = static_cast<int>(g.links.size());
    return n > 0 && n < settings_.min_links;
  };
  // Set aside, not dropped, with keep_partial: they may still fill the places of hidden animals.
  std::vector<Group> partial, whole;
  for (Group& g : groups) {
    if (!too_few_links(g)) {
      whole.push_back(std::move(g));
    } else if (settings_.keep_partial) {
      partial.push_back(std::move(g));
    }
  }
  groups = std::move(whole);
  const bool suppress = settings_.max_overlap > 0.0 && settings_.max_overlap < 1.0;
  if (suppress) {
    std::vector<Group> kept;
    while (!groups.empty()) {
      auto best = strongest(groups);
      kept.push_back(std::move(*best));
      groups.erase(best);
      std::erase_if(groups, [&](const Group& g) {
        return intersection(kept.back(), g) >= settings_.max_overlap;
      });
    }
    groups = std::move(kept);
  }
  if (groups.size() > at(settings_.max_individuals)) {
    std::stable_sort(groups.begin(), groups.end(),
                     [](const Group& a, const Group& b) { return a.size > b.size; });
    groups.erase(groups.begin() + settings_.max_individuals, groups.end());
  }
  // The places still free go to the partial animals, strongest first, that overlap no kept one.
  while (!partial.empty() && groups.size() < at(settings_.max_individuals)) {
    auto best = strongest(partial);
    const bool overlaps =
        suppress && std::any_of(groups.begin(), groups.end(), [&](const Group& g) {
          return intersection(g, *best) >= settings_.max_overlap;
        });
    if (!overlaps) groups.push_back(std::move(*best));
    partial.erase(best);
  }
  return groups;
}

void check_inputs(const Candidates& candidates, const std::vector<EdgeCosts>& costs,
                  const PafGraph& graph, int multi_bodyparts, const AssemblySettings& settings) {
  if (multi_bodyparts < 0 || at(multi_bodyparts) > candidates.size()) {
    throw Error(fmt::format("{} multi-animal bodyparts asked for, but there are candidates for {} "
                            "bodyparts in all",
                            multi_bodyparts, candidates.size()),
                "multianimalbodyparts come first in the maps, then uniquebodyparts");
  }
  check_graph(graph, multi_bodyparts);
  if (costs.size() != graph.size()) {
    throw Error(fmt::format("{} edge costs for a graph of {} edges", costs.size(), graph.size()));
  }
  for (std::size_t e = 0; e < graph.size(); ++e) {
    const auto sources = candidates[at(graph[e].source)].size();
    const auto targets = candidates[at(graph[e].target)].size();
    const EdgeCosts& cost = costs[e];
    if (at(cost.sources) != sources || at(cost.targets) != targets ||
        cost.affinity.size() != sources * targets || cost.length.size() != sources * targets) {
      throw Error(fmt::format("edge {} ({}, {}): costs of {} x {} candidates, but the bodyparts "
                              "have {} and {}",
                              e, graph[e].source, graph[e].target, cost.sources, cost.targets,
                              sources, targets),
                  "compute the costs with edge_costs on the same candidates");
    }
  }
  if (settings.max_individuals < 1) {
    throw Error(fmt::format("topktoretain (the number of animals) must be at least 1 (found {})",
                            settings.max_individuals));
  }
  if (settings.min_links < 0) {
    throw Error(fmt::format("minimalnumberofconnections must not be negative (found {})",
                            settings.min_links));
  }
}

void check_owners(const PreviousOwners& owners, const Candidates& candidates, int multi_bodyparts) {
  if (owners.empty()) return;
  bool fits = owners.size() == at(multi_bodyparts);
  for (std::size_t b = 0; fits && b < owners.size(); ++b)
    fits = owners[b].size() == candidates[b].size();
  if (!fits) {
    throw Error(fmt::format("the previous frame's owners cover {} bodyparts, not the {} "
                            "multi-animal bodyparts and their candidates",
                            owners.size(), multi_bodyparts),
                "compute them with previous_owners on the same candidates");
  }
}

Assembly make_assembly(int bodyparts) {
  Assembly assembly;
  assembly.candidate.assign(at(bodyparts), -1);
  assembly.keypoints.assign(at(bodyparts), KeypointPrediction{});
  return assembly;
}

void put(Assembly& assembly, int slot, int index, const Candidate& candidate) {
  assembly.candidate[at(slot)] = index;
  assembly.keypoints[at(slot)] = {candidate.x, candidate.y, candidate.confidence};
}

// The first candidate of highest confidence, or -1 when there is none.
int best_candidate(const std::vector<Candidate>& list) {
  int best = -1;
  for (std::size_t k = 0; k < list.size(); ++k) {
    if (best == -1 || list[k].confidence > list[at(best)].confidence) best = static_cast<int>(k);
  }
  return best;
}

std::optional<Assembly> unique_assembly(const Candidates& candidates, int multi_bodyparts,
                                        double pcutoff) {
  const auto unique = static_cast<int>(candidates.size()) - multi_bodyparts;
  if (unique == 0) return std::nullopt;
  Assembly single = make_assembly(unique);
  for (int u = 0; u < unique; ++u) {
    const auto& list = candidates[at(multi_bodyparts + u)];
    const int best = best_candidate(list);
    if (best != -1 && list[at(best)].confidence > pcutoff) put(single, u, best, list[at(best)]);
  }
  if (single.size() == 0) return std::nullopt;
  return single;
}

// DeepLabCut's shortcuts: one bodypart per animal, or one animal.
std::vector<Assembly> shortcut_assemblies(const Candidates& candidates, int multi_bodyparts,
                                          const AssemblySettings& settings) {
  std::vector<Assembly> animals;
  if (multi_bodyparts == 1) {
    for (std::size_t k = 0; k < candidates[0].size(); ++k) {
      if (!(candidates[0][k].confidence >= settings.pcutoff)) continue;
      animals.push_back(make_assembly(1));
      put(animals.back(), 0, static_cast<int>(k), candidates[0][k]);
    }
    return animals;
  }
  Assembly animal = make_assembly(multi_bodyparts);
  for (int b = 0; b < multi_bodyparts; ++b) {
    const int best = best_candidate(candidates[at(b)]);
    if (best != -1) put(animal, b, best, candidates[at(b)][at(best)]);
  }
  animals.push_back(std::move(animal));
  return animals;
}

}  // namespace

int Assembly::size() const {
  return static_cast<int>(
      std::count_if(candidate.begin(), candidate.end(), [](int index) { return index != -1; }));
}

double Assembly::affinity() const {
  return links == 0 ? 0.0 : affinity_sum / links;
}

double Assembly::confidence() const {
  double sum = 0.0;
  int present = 0;
  for (std::size_t b = 0; b < candidate.size(); ++b) {
    if (candidate[b] == -1) continue;
    sum += keypoints[b].likelihood;
    ++present;
  }
  return present == 0 ? kNaN : sum / present;
}

Assemblies assemble(const Candidates& candidates, const std::vector<EdgeCosts>& costs,
                    const PafGraph& graph, int multi_bodyparts, const AssemblySettings& settings,
                    const PreviousOwners& owners) {
  check_inputs(candidates, costs, graph, multi_bodyparts, settings);
  check_owners(owners, candidates, multi_bodyparts);
  Assemblies result;
  result.single = unique_assembly(candidates, multi_bodyparts, settings.pcutoff);
  const bool any = std::any_of(candidates.begin(), candidates.begin() + multi_bodyparts,
                               [](const auto& list) { return !list.empty(); });
  if (!any) return result;
  if (multi_bodyparts == 1 || settings.max_individuals == 1) {
    result.animals = shortcut_assemblies(candidates, multi_bodyparts, settings);
    return result;
  }
  Assembler assembler(candidates, multi_bodyparts, settings);
  assembler.add_links(select_links(candidates, costs, graph, settings), graph, owners);
  const std::vector<Group> groups = assembler.prune(assembler.build());
  for (const Group& group : groups) {
    Assembly animal = make_assembly(multi_bodyparts);
    for (const int joint : group.members) {
      const Joint& j = assembler.joints()[at(joint)];
      put(animal, j.bodypart, j.index, *j.candidate);
    }
    animal.links = static_cast<int>(group.links.size());
    animal.affinity_sum = group.affinity_sum;
    result.animals.push_back(std::move(animal));
  }
  return result;
}

ImageDetections detect_maps(const MapStack& scores, const MapStack& locref, const MapStack& pafs,
                            const PafGraph& graph, int multi_bodyparts,
                            const MapAssemblySettings& settings) {
  check_map_stack(scores, "score maps");
  check_map_stack(pafs, "part affinity fields");
  check_same_grid(pafs, "part affinity fields", scores, "score maps");
  ImageDetections detections;
  detections.candidates = find_candidates(scores, locref, settings.candidates);
  if (multi_bodyparts < 0 || multi_bodyparts > scores.channels) {
    throw Error(
        fmt::format("{} multi-animal bodyparts asked for, but the score maps have {} "
                    "bodyparts in all",
                    multi_bodyparts, scores.channels));
  }
  check_graph(graph, multi_bodyparts);
  detections.costs = edge_costs(pafs, detections.candidates, graph, settings.affinity);
  return detections;
}

void check_made_for(const ImageDetections& detections, const PafGraph& graph) {
  if (detections.costs.size() != graph.size()) {
    throw Error(fmt::format("the detections have the costs of {} edges, the graph has {}",
                            detections.costs.size(), graph.size()));
  }
}

Assemblies assemble_edges(const ImageDetections& detections, const PafGraph& graph,
                          const std::vector<int>& edges, int multi_bodyparts,
                          const AssemblySettings& settings, const PreviousOwners& owners) {
  check_made_for(detections, graph);
  std::vector<EdgeCosts> costs;
  for (const int e : edges) costs.push_back(detections.costs.at(static_cast<std::size_t>(e)));
  return assemble(detections.candidates, costs, subgraph(graph, edges), multi_bodyparts, settings,
                  owners);
}

Assemblies assemble_maps(const MapStack& scores, const MapStack& locref, const MapStack& pafs,
                         const PafGraph& graph, int multi_bodyparts,
                         const MapAssemblySettings& settings) {
  const ImageDetections detections =
      detect_maps(scores, locref, pafs, graph, multi_bodyparts, settings);
  return assemble(detections.candidates, detections.costs, graph, multi_bodyparts,
                  settings.assembly);
}

}  // namespace labpose::pipeline
