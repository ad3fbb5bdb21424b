// LayerwiseView: the last `:layerwise` of a step on the picture — each node's SQNR and the
// heatmap's colour bands that show where a quantized graph loses accuracy.
#pragma once

#include "core/Graph.h"
#include "passes/Layerwise.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loupe::gui {

/// Each node's SQNR in dB from `comparisons` (a step's last :layerwise, matched by node name):
/// the worst over its outputs; NaN for a node that was not compared.
std::vector<double> nodeSqnr(const Graph &g, const std::vector<LayerComparison> &comparisons);

/// One band of the heatmap: nodes of SQNR from `from` dB (inclusive) up to the next band's.
struct SqnrBand {
  double from;     ///< the band's lower bound in dB (-∞ for the first)
  uint32_t colour; ///< its fill, 0xRRGGBBAA
  const char *label;
};

/// The heatmap's bands, worst first: under 10 dB red, 10–20 orange, 20–30 yellow, 30–40 light
/// green, 40 dB and over green (int8 layers that keep a network's accuracy sit around 30–40 dB).
const std::vector<SqnrBand> &sqnrBands();

/// The fill colour of a node of SQNR `db` (its band's), as 0xRRGGBBAA.
uint32_t sqnrColour(double db);

/// The comparisons of node `name` (one per compared output), in output order.
std::vector<const LayerComparison *> comparisonsOf(const std::vector<LayerComparison> &all,
                                                   const std::string &name);

} // namespace loupe::gui
