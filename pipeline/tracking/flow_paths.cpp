// Both flow problems on one LEMON graph: a source, a sink, and an entry and an exit node per piece.
#include "pipeline/tracking/flow_paths.hpp"

#include <lemon/network_simplex.h>
#include <lemon/smart_graph.h>

#include <limits>

#include "core/error.hpp"

namespace labpose::pipeline {
namespace {

using Graph = lemon::SmartDigraph;
using Simplex = lemon::NetworkSimplex<Graph, long long, long long>;

struct FlowGraph {
  Graph graph;
  Graph::Node source, sink;
  std::vector<Graph::Node> entry, exit;
  std::vector<Graph::Arc> through, from_source, to_sink, link;
  Graph::ArcMap<long long> capacity{graph}, cost{graph};
  Graph::NodeMap<long long> supply{graph};

  FlowGraph(std::size_t pieces, const std::vector<PieceLink>& links) {
    source = graph.addNode();
    sink = graph.addNode();
    for (std::size_t i = 0; i < pieces; ++i) {
      entry.push_back(graph.addNode());
      exit.push_back(graph.addNode());
    }
    for (std::size_t i = 0; i < pieces; ++i) through.push_back(arc(entry[i], exit[i], 1, 0));
    for (std::size_t i = 0; i < pieces; ++i) from_source.push_back(arc(source, entry[i], 1, 0));
    for (std::size_t i = 0; i < pieces; ++i) to_sink.push_back(arc(exit[i], sink, 1, 0));
    for (const auto& piece_link : links)
      link.push_back(arc(exit[piece_link.from], entry[piece_link.to], 1, piece_link.cost));
  }

  Graph::Arc arc(Graph::Node from, Graph::Node to, long long upper, long long arc_cost) {
    const auto added = graph.addArc(from, to);
    capacity[added] = upper;
    cost[added] = arc_cost;
    return added;
  }

  // Follows the flow from every used source arc, taking the sink before a link as DeepLabCut does.
  std::vector<std::vector<std::size_t>> paths(const Simplex& simplex,
                                              const std::vector<PieceLink>& links) {
    std::vector<long long> link_flow;
    for (const auto& used : link) link_flow.push_back(simplex.flow(used));
    std::vector<long long> sink_flow;
    for (const auto& used : to_sink) sink_flow.push_back(simplex.flow(used));
    std::vector<std::vector<std::size_t>> result;
    for (std::size_t first = 0; first < from_source.size(); ++first) {
      if (simplex.flow(from_source[first]) < 1) continue;
      std::vector<std::size_t> path{first};
      for (std::size_t at = first;;) {
        if (sink_flow[at] > 0) {
          --sink_flow[at];
          break;
        }
        std::size_t next = links.size();
        for (std::size_t k = 0; k < links.size() && next == links.size(); ++k)
          if (links[k].from == at && link_flow[k] > 0) next = k;
        if (next == links.size()) break;
        --link_flow[next];
        at = links[next].to;
        path.push_back(at);
      }
      result.push_back(std::move(path));
    }
    return result;
  }
};

void check_links(std::size_t pieces, const std::vector<PieceLink>& links) {
  for (const auto& piece_link : links)
    LABPOSE_ASSERT(piece_link.from < pieces && piece_link.to < pieces && piece_link.cost >= 0);
}

}  // namespace

std::optional<std::vector<std::vector<std::size_t>>> cover_with_paths(
    std::size_t pieces, const std::vector<PieceLink>& links, int n_paths) {
  check_links(pieces, links);
  FlowGraph flow(pieces, links);
  flow.supply[flow.source] = n_paths;
  flow.supply[flow.sink] = -n_paths;
  for (std::size_t i = 0; i < pieces; ++i) {
    flow.supply[flow.entry[i]] = -1;  // every piece is entered once ...
    flow.supply[flow.exit[i]] = 1;    // ... and left once
  }
  Simplex simplex(flow.graph);
  simplex.upperMap(flow.capacity).costMap(flow.cost).supplyMap(flow.supply);
  if (simplex.run() != Simplex::OPTIMAL) return std::nullopt;
  return flow.paths(simplex, links);
}

std::vector<std::vector<std::size_t>> longest_disjoint_paths(const std::vector<long long>& lengths,
                                                             const std::vector<PieceLink>& links,
                                                             int n_paths) {
  const std::size_t pieces = lengths.size();
  check_links(pieces, links);
  FlowGraph flow(pieces, links);
  // A frame covered is worth more than all links together, so coverage comes first.
  long long frame_value = 1;
  for (const auto& piece_link : links) {
    frame_value += piece_link.cost;
    LABPOSE_ASSERT(frame_value < std::numeric_limits<long long>::max() / (1LL << 24));
  }
  for (std::size_t i = 0; i < pieces; ++i) flow.cost[flow.through[i]] = -frame_value * lengths[i];
  flow.arc(flow.source, flow.sink, n_paths, 0);  // chains that stay empty
  flow.supply[flow.source] = n_paths;
  flow.supply[flow.sink] = -n_paths;
  Simplex simplex(flow.graph);
  simplex.upperMap(flow.capacity).costMap(flow.cost).supplyMap(flow.supply);
  LABPOSE_ASSERT(simplex.run() == Simplex::OPTIMAL);
  return flow.paths(simplex, links);
}

}  // namespace labpose::pipeline
