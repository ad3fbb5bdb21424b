// InferAttr: forward/backward sweeps until a fixed point.
#include "passes/InferAttr.h"

namespace loupe {

size_t inferSweeps(uint32_t numNodes, const std::function<void(uint32_t)> &step,
                   const std::function<size_t()> &countUnknown) {
  size_t unknown = static_cast<size_t>(-1), last;
  int sweep = 0;
  do {
    if (sweep % 2 == 0)
      for (uint32_t nid = 0; nid < numNodes; ++nid)
        step(nid);
    else
      for (uint32_t nid = numNodes; nid-- > 0;)
        step(nid);
    last = unknown;
    unknown = countUnknown();
    ++sweep;
  } while (unknown > 0 && unknown < last);
  return unknown;
}

} // namespace loupe
