// Dense: the fast schedule of dense at small batch — the reduction over k rfactor'ed into one
// vector of partial sums (TVM's rfactor), so that both operands are read contiguously in k
// with full vectors and the partials stay in a register, then summed per output.
#include "backend/schedules/FastSchedules.h"

#include "core/DType.h"

namespace loupe::backend::fast {

using namespace loop;

bool dense(Schedule &s, size_t idx) {
  const Stage &d0 = s.stages[idx];
  int64_t lanes = kVectorBytes / dtypeBytes(d0.tensor->dtype);
  if (d0.tensor->shape.size() != 2 || d0.body->reduceAxes.size() != 1 ||
      d0.body->reduceAxes[0].extent < 4 * lanes)
    return false;
  Expr k = d0.body->reduceAxes[0].var;
  ComputeRef denseT = d0.tensor;
  s.knob("k_lanes", lanes, "partial sums of the reduction over k, one vector");
  Stage &rf = s.rfactor(s.stages[idx], k, lanes);
  ComputeRef rfT = rf.tensor;
  // What follows the product (the bias): its own parallel, vectorised stage.
  for (Stage &st : s.stages)
    if (st.tensor != rfT && st.tensor != denseT) {
      if (s.isOutput(st))
        injective(s, st);
      else
        s.computeInline(st);
    }
  Stage &d = s.stage(denseT);
  Expr rows = s.fuse(d, d.leaves[0].var, d.leaves[1].var);
  s.parallel(d, rows);
  Stage &partials = s.stage(rfT);
  s.computeAt(partials, d, rows);
  s.setLocal(partials);
  Expr ki = partials.leaves[2].var, ko = partials.leaves[3].var;
  s.reorder(partials, {ko, ki});
  s.vectorize(partials, ki);
  return true;
}

} // namespace loupe::backend::fast
