// GraphSvg: a laid-out graph as a standalone SVG picture, drawn as the viewer's canvas draws it
// (fusion regions, edges, boxes coloured by kind or group, labels, root and master badges), for
// notebooks and reports.
#pragma once

#include "core/Graph.h"
#include "view/FusionView.h"
#include "view/GraphLayout.h"

#include <string>
#include <vector>

namespace loupe::gui {

/// What the picture shows beyond the graph.
struct SvgOptions {
  /// Fusion groups (fusionGroups of the same graph): boxes take their group's colour, groups
  /// of two or more nodes get a region, and roots and masters an R / M badge.
  const std::vector<GroupView> *groups = nullptr;
  /// Each node's SQNR in dB (nodeSqnr of a :layerwise; NaN where not compared): boxes take
  /// their heatmap band's colour and their titles say the figure.
  const std::vector<double> *sqnr = nullptr;
  /// Bound params: a quantized node's title says its scale and zero point (passes/QuantSteps) where
  /// they are constants.
  const StoredTensors *params = nullptr;
};

/// The SVG document (an `<svg>` element with its size in pixels at zoom 1) of layout `l` of
/// `g`. Every name and label is XML-escaped text, never markup; each box has a `<title>` (its
/// lines) that a browser shows on hover.
std::string graphSvg(const Graph &g, const GraphLayout &l, const SvgOptions &o = {});

/// The picture of a whole graph as the viewer first shows it: `layoutGraph` with inputs folded
/// into ops and the params the viewer counts (`bound`: a loaded model's initializers), and the
/// graph's fusion groups when it has any, and the heatmap of `sqnr` when given (SvgOptions).
std::string graphSvg(const Graph &g, const StoredTensors &bound = {},
                     const std::vector<double> *sqnr = nullptr);

/// `text` with XML's five special characters escaped (&, <, >, ", ').
std::string xmlEscaped(const std::string &text);

} // namespace loupe::gui
