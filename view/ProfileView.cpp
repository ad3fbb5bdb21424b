// ProfileView: kernel time shares and their colour scale.
#include "view/ProfileView.h"

#include <algorithm>
#include <cmath>

namespace loupe::gui {

std::vector<double> timeShares(const Graph &g, const std::map<uint32_t, KernelTime> &profile) {
  std::vector<double> share(g.index().numNodes(), -1.0);
  double total = 0;
  for (const auto &[nid, t] : profile)
    total += t.ms;
  if (total <= 0)
    return share;
  for (const auto &[nid, t] : profile)
    if (nid < share.size())
      share[nid] = t.ms / total;
  return share;
}

std::vector<KernelBar> kernelBars(const Graph &g, const std::map<uint32_t, KernelTime> &profile) {
  std::vector<double> share = timeShares(g, profile);
  const IndexedGraph &idx = g.index();
  std::vector<KernelBar> bars;
  for (const auto &[nid, t] : profile) {
    if (nid >= idx.numNodes())
      continue;
    const Node &n = *idx.nodes[nid].node;
    std::string label = n.name;
    if (!n.isVariable() && n.op->name == "tvm_op")
      label += "  " + n.parsed.getStr("func_name");
    bars.push_back({nid, label, t.ms, share[nid]});
  }
  std::stable_sort(bars.begin(), bars.end(),
                   [](const KernelBar &a, const KernelBar &b) { return a.ms > b.ms; });
  return bars;
}

uint32_t heatColour(double share, double maxShare) {
  double f = maxShare > 0 ? std::clamp(share / maxShare, 0.0, 1.0) : 0.0;
  // White (255, 255, 255) to red (200, 30, 30), linearly.
  auto channel = [&](double to) {
    return static_cast<uint32_t>(std::lround(255 + (to - 255) * f));
  };
  return channel(200) << 24 | channel(30) << 16 | channel(30) << 8 | 0xffu;
}

} // namespace loupe::gui
