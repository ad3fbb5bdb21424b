// LayerwiseView: per-node SQNR from a :layerwise and the heatmap's bands.
#include "view/LayerwiseView.h"

#include <cmath>
#include <limits>

namespace loupe::gui {

std::vector<double> nodeSqnr(const Graph &g, const std::vector<LayerComparison> &comparisons) {
  const IndexedGraph &idx = g.index();
  std::vector<double> db(idx.numNodes(), std::numeric_limits<double>::quiet_NaN());
  for (const LayerComparison &c : comparisons) {
    int nid = idx.findByName(c.name);
    if (nid < 0)
      continue;
    double &d = db[static_cast<size_t>(nid)];
    d = std::isnan(d) ? c.sqnr : std::min(d, c.sqnr);
  }
  return db;
}

const std::vector<SqnrBand> &sqnrBands() {
  static const std::vector<SqnrBand> bands = {
      {-std::numeric_limits<double>::infinity(), 0xc81e1effu, "<10"},
      {10, 0xe67828ffu, "10-20"},
      {20, 0xebc83cffu, "20-30"},
      {30, 0xa0d278ffu, "30-40"},
      {40, 0x46a05affu, ">=40 dB"},
  };
  return bands;
}

uint32_t sqnrColour(double db) {
  const std::vector<SqnrBand> &bands = sqnrBands();
  uint32_t colour = bands.front().colour;
  for (const SqnrBand &b : bands)
    if (db >= b.from)
      colour = b.colour;
  return colour;
}

std::vector<const LayerComparison *> comparisonsOf(const std::vector<LayerComparison> &all,
                                                   const std::string &name) {
  std::vector<const LayerComparison *> out;
  for (const LayerComparison &c : all)
    if (c.name == name)
      out.push_back(&c);
  return out;
}

} // namespace loupe::gui
