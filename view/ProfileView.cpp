// ProfileView: kernel time shares and their colour scale.
#include "view/ProfileView.h"

#include "passes/Provenance.h"

#include <algorithm>
#include <cmath>
#include <optional>

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
    // A kernel is named by its master — the convolution, not the relu its group ends with (the
    // deploy node keeps the group root's name) — and its function.
    std::string label = n.name;
    if (!n.isVariable() && n.op->name == "tvm_op") {
      if (std::optional<MasterNode> m = kernelMaster(g, nid))
        label = m->name;
      label += "  " + n.parsed.getStr("func_name");
    }
    bars.push_back({nid, label, t.ms, share[nid]});
  }
  std::stable_sort(bars.begin(), bars.end(),
                   [](const KernelBar &a, const KernelBar &b) { return a.ms > b.ms; });
  return bars;
}

std::map<std::string, double> functionMillis(const Graph &g,
                                             const std::map<uint32_t, KernelTime> &profile) {
  const IndexedGraph &idx = g.index();
  std::map<std::string, double> ms;
  for (const auto &[nid, t] : profile) {
    if (nid >= idx.numNodes())
      continue;
    const Node &n = *idx.nodes[nid].node;
    if (!n.isVariable() && n.op->name == "tvm_op")
      ms[n.parsed.getStr("func_name")] += t.ms;
  }
  return ms;
}

std::string hottestFunction(const Graph &g, const std::map<uint32_t, KernelTime> &profile) {
  std::string hottest;
  double most = -1;
  for (const auto &[fn, ms] : functionMillis(g, profile))
    if (ms > most) {
      most = ms;
      hottest = fn;
    }
  return hottest;
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
