// LayeredLayout: a layered (Sugiyama) drawing of a directed graph of sized boxes, top to bottom,
// with every step linear or n log n in the boxes and edge segments, and cancellable.
#pragma once

#include "core/Error.h"

#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

namespace loupe::gui {

/// A point in layout units (pixels at zoom 1), y growing downwards.
struct Point {
  double x = 0, y = 0;
};

/// The graph to draw: box sizes, and edges between box indices (cycles and self-loops allowed).
struct LayeredGraph {
  std::vector<std::pair<double, double>> sizes; ///< width and height per box
  std::vector<std::pair<uint32_t, uint32_t>> edges;
};

/// How much space the drawing leaves and how much work it does. The sweep counts bound the
/// work: each is one pass over every layer, linear in the boxes and edge segments.
struct LayeredOptions {
  double nodeSep = 18, rankSep = 25; ///< gaps between boxes in a layer and between layers
  double arrow = 8;                  ///< the straight last stretch an arrowhead covers
  int orderSweeps = 12;              ///< barycentric crossing-reduction sweeps
  int placeSweeps = 16;              ///< horizontal placement sweeps
  /// Polled between steps: when it becomes true the layout stops with LayoutCancelled.
  const std::atomic<bool> *cancel = nullptr;
};

/// Where everything went. Edges are cubic Bézier curves, 1 + 3k control points from the
/// producer's box, ending `arrow` short of `heads[e]`, where the arrowhead points.
struct LayeredDrawing {
  std::vector<Point> centres;
  std::vector<std::vector<Point>> edges;
  std::vector<Point> heads;
  double width = 0, height = 0;
  size_t layers = 0;
};

/// Thrown by layered() when its options' cancel flag was raised.
class LayoutCancelled : public Error {
public:
  LayoutCancelled() : Error("layout cancelled") {}
};

/// Lays `g` out in layers: cycles broken by reversing DFS back edges, layers by longest path
/// (a box nothing feeds placed just above its first reader), long edges through chains of
/// points shared by the edges of one producer (so a value many layers read is one line down
/// the graph that branches, not many parallel lines), orders by barycentric sweeps keeping the
/// order with fewest crossings, and x by least squares of the edges' horizontal lengths under
/// each layer's order and spacing (solved exactly per layer by pool-adjacent-violators).
LayeredDrawing layered(const LayeredGraph &g, const LayeredOptions &o = {});

/// Crossings between the straight segments of two polylines' edges, counted over every pair of
/// edges that share no endpoint box: `edges[e]` are the points of edge e (a curve's control
/// points are a close enough polyline), `ends[e]` its two boxes. Spatially bucketed, so fast
/// enough for thousands of edges; used to compare drawings, not to make them.
size_t countCrossings(const std::vector<std::vector<Point>> &edges,
                      const std::vector<std::pair<uint32_t, uint32_t>> &ends);

} // namespace loupe::gui
