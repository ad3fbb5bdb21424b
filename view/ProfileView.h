// ProfileView: the last `:profile` of a built graph on the picture — each kernel's share of the
// run time and the colour that shows it.
#pragma once

#include "repl/Engine.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace loupe::gui {

/// Each node's share of the profiled run time (its kernel's median over the sum of all the
/// medians), or -1 for a node without a time (variables, an unprofiled step).
std::vector<double> timeShares(const Graph &g, const std::map<uint32_t, KernelTime> &profile);

/// One kernel in the bar chart of a profiled run.
struct KernelBar {
  uint32_t nid = 0;  ///< the tvm_op node
  std::string label; ///< its master node and function ("conv2d0  fuse_conv2d_relu")
  double ms = 0, share = 0;
};

/// The profiled kernels, longest first (ties by node id): what the bar chart lists.
std::vector<KernelBar> kernelBars(const Graph &g, const std::map<uint32_t, KernelTime> &profile);

/// Each function's time in a profiled run: the medians of the kernel calls that run it, summed
/// (a function several groups share runs once per call).
std::map<std::string, double> functionMillis(const Graph &g,
                                             const std::map<uint32_t, KernelTime> &profile);

/// The function that took the most time in the profile, "" when nothing was profiled: where
/// the Loops panel opens.
std::string hottestFunction(const Graph &g, const std::map<uint32_t, KernelTime> &profile);

/// The fill colour of a node with `share` of the run time, as 0xRRGGBBAA (as groupColour): from
/// white (no time) to
/// red (200, 30, 30) at `maxShare` (the largest share of the picture), linearly.
uint32_t heatColour(double share, double maxShare);

} // namespace loupe::gui
