// GraphLayout: a graph snapshot laid out top to bottom — by Loupe's layered layout, or by
// Graphviz's dot through its C library — with the node boxes and edge curves the viewer draws,
// and the node queries it needs.
#pragma once

#include "core/Buffers.h"
#include "core/Dot.h"
#include "core/Graph.h"
#include "core/Tensor.h"
#include "view/LayeredLayout.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace loupe::gui {

/// What a node is drawn as: graph inputs and params are variables, drawn apart from ops; a
/// Scope is a folded scope's box (Scopes).
enum class NodeKind { Input, Param, Op, Scope };

/// A laid-out node: centre and size in layout units (pixels at zoom 1), y growing downwards.
struct LaidNode {
  uint32_t nid = 0;
  NodeKind kind = NodeKind::Op;
  std::string name, op;           ///< op is empty for variables
  std::vector<std::string> lines; ///< label text: op (or kind), name, then shape and dtype
  /// Inputs and params drawn inside this box (LayoutOptions::foldInputs), in input order; their
  /// name and shape are the last lines. A param several ops read is folded into each of them.
  std::vector<uint32_t> folded;
  /// For a collapsed group's box (LayoutOptions::collapsed): every node drawn in it, its
  /// members and the inputs folded into them; `nid` is the first member.
  std::vector<uint32_t> members;
  std::string scope; ///< a folded scope's path (NodeKind::Scope)
  double x = 0, y = 0, w = 0, h = 0;
};

/// An edge from output `output` of `from` to an input of `to`, as a cubic B-spline (Graphviz's
/// control points: 1 + 3k points). `labelled` when the producer has several outputs.
struct LaidEdge {
  uint32_t from = 0, to = 0, output = 0;
  uint32_t input = 0; ///< which of the consumer's inputs (0 for an edge between collapsed boxes)
  bool labelled = false;
  std::vector<Point> points;
  Point head; ///< where the arrowhead points (on the consumer's box)
};

/// A laid-out graph (or part of one).
struct GraphLayout {
  std::vector<LaidNode> nodes;
  std::vector<LaidEdge> edges;
  double width = 0, height = 0;
  /// Edge crossings of the drawing (each curve flattened to a polyline; edges sharing a box do
  /// not count), to compare layouts.
  size_t crossings() const;
  /// Index in `nodes` of node id `nid` (or of the box a folded input or a collapsed group's
  /// member is drawn in), or -1 when it is not laid out.
  int find(uint32_t nid) const;
  /// find's answers by node id, made by layoutGraph (or by index()), so that the panels' per
  /// frame questions cost nothing on large graphs; empty, find searches the boxes.
  std::vector<int> boxOf;
  /// Fills boxOf from the boxes.
  void index();
};

/// A group of nodes drawn as one box (a fused function in the fusion view): its members, the
/// first of which names the box, and the box's label lines.
struct CollapsedBox {
  std::vector<uint32_t> members;
  std::vector<std::string> lines;
  std::string scope; ///< for a folded scope (Scopes): its path; empty for a fusion group
};

/// Who places the boxes: Loupe's layered layout (LayeredLayout: every step bounded, so a graph
/// of 20,000 nodes is laid out in a tenth of a second) or Graphviz's dot (the viewer's first
/// layout, kept to compare with: its work grows much faster than the graph on some shapes — an
/// unrolled LSTM of 1,134 boxes takes it 50 s).
enum class LayoutEngine { Layered, Dot };

/// Text metrics of the viewer's font, so that boxes fit their labels.
struct LayoutOptions {
  double charWidth = 7, lineHeight = 14, padding = 6;
  /// Variables drawn as params (see paramNames); the others are inputs.
  std::set<std::string> params;
  /// Draw a param that feeds exactly one op (a weight, a bias) inside that op's box, as Netron
  /// does, instead of as a box of its own; a param (see `params`) read by several ops is drawn
  /// inside each of them (an exporter's shared initializer is a line in each reader, not a hub).
  /// The graph's data inputs keep their boxes (with no params known, a variable read as an op's
  /// first operand is data), as do inputs read by two ops or by none, and graph outputs.
  bool foldInputs = false;
  /// Groups drawn as one box each: edges between their members disappear, edges from and to
  /// them end at the box (one per pair of boxes). A node belongs to one group at most.
  std::vector<CollapsedBox> collapsed;
  LayoutEngine engine = LayoutEngine::Layered;
  /// Polled by the layered layout: raised, layoutGraph stops with LayoutCancelled (dot runs to
  /// its end).
  const std::atomic<bool> *cancel = nullptr;
};

/// Past this many boxes, dot's x-coordinate pass is bounded (nslimit) so that graphs of
/// thousands of ops lay out in seconds, not minutes.
inline constexpr size_t kBoundedBoxes = 1000;

/// Lays out `g`: all nodes, or only `only` (node ids) and the edges between them. Throws Error
/// when Graphviz fails, LayoutCancelled when `o.cancel` was raised.
GraphLayout layoutGraph(const Graph &g, const LayoutOptions &o,
                        const std::vector<uint32_t> *only = nullptr);

/// The attributes a box shows in short form, as Netron does: "3×3 /2 pad 1, 64 ch" for a
/// convolution, "3×3 /2" for a pool, "1000 units" for dense; empty for other nodes.
std::string keyAttributes(const Node &n);

/// The label lines of node `nid`: its op (or `input`/`param`), its name, its key attributes,
/// and per output its shape and dtype once inferred (a tvm_op shows its function name).
std::vector<std::string> nodeLines(const Graph &g, uint32_t nid, bool param);

/// Variables that are params: those an op made for one of its arguments (NNVM names them
/// `<op name>_<argument>`, like conv0_weight), and the params bound by `:build`.
std::set<std::string> paramNames(const Graph &g);

/// `g` laid out with every node a box of its own, in Graphviz's terms (y up), for
/// `:dot FILE placed`.
DotPlacement dotPlacement(const Graph &g, const LayoutOptions &o);

/// paramNames, and the variables `bound` gives values to (a loaded model's initializers).
std::set<std::string> paramNames(const Graph &g, const StoredTensors &bound);

/// Node ids within `radius` edges of `centre`, either direction, in id order.
std::vector<uint32_t> neighbourhood(const Graph &g, uint32_t centre, int radius);

/// Node ids whose name (so also its scopes) or op contains `text` (case-insensitive), in id
/// order.
std::vector<uint32_t> searchNodes(const Graph &g, const std::string &text);

} // namespace loupe::gui
