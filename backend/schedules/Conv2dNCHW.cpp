// Conv2dNCHW: opt_level 3's schedule for convolutions AlterOpLayout leaves in NCHW (depthwise and
// grouped ones): a vector of output columns accumulated in registers over the taps.
#include "backend/schedules/FastSchedules.h"

#include "core/DType.h"

namespace loupe::backend::fast {

using namespace loop;

bool conv2dNCHW(Schedule &s, size_t idx) {
  if (!convWithEpilogue(s, idx, 4) || s.stages[idx].body->kind != ExprKind::Reduce ||
      s.stages[idx].body->reduceAxes.size() != 3)
    return false;
  const Shape convShape = s.stages[idx].tensor->shape; // N, C, OH, OW
  // The seed schedule accumulated in memory, a load and a store per tap and column; here a
  // vector of output columns stays in a register for all the taps (and input channels of the
  // group), then the fused epilogue runs on it before one store.
  int64_t lanes = kVectorBytes / dtypeBytes(s.stages[idx].tensor->dtype);
  int64_t width = convShape[3], vec = std::min(width, lanes);
  bool shifted = width % vec != 0;
  s.knob("vec", vec,
         shifted ? "output columns per vector; the last vector shifted back"
                 : "output columns per vector");

  ComputeRef cacheT = accumulateThroughCache(s, idx);
  Expr wi = tileRowsAndWidth(s, cacheT, vec, shifted);
  s.vectorize(s.stage(s.outputs[0]), wi);
  Stage &acc = s.stage(cacheT);
  Expr cw = acc.leaves[3].var, rc = acc.leaves[4].var, ry = acc.leaves[5].var,
       rx = acc.leaves[6].var;
  s.reorder(acc, {rc, ry, rx, cw});
  s.unroll(acc, ry);
  s.unroll(acc, rx);
  s.vectorize(acc, cw);
  return true;
}

} // namespace loupe::backend::fast
