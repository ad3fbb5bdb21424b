// Dispatch: opt_level 3's schedule for a fused function — the op family's fast schedule from
// one table, by the tag of a stage's compute rule; the seed-era schedule for a family's op of a
// shape it does not take; vectorised parallel injective stages and parallel reductions elsewhere.
#include "backend/LowerFunction.h"
#include "backend/x86/FastSchedules.h"

#include <vector>

namespace loupe::backend {

namespace x86 {

const std::vector<FamilyEntry> &familySchedules() {
  static const std::vector<FamilyEntry> table = {
      {"conv2d_NCHWc", conv2dNCHWc, false},
      {"conv2d", conv2dNCHW, true},
      {"depthwise_conv2d_NCHWc", depthwiseConv2dNCHWc, true},
      {"dense", dense, true},
      {"dense_pack", densePack, true},
      {"batch_matmul", batchMatmul, false},
  };
  return table;
}

} // namespace x86

void applyFastSchedule(Schedule &s) {
  const std::vector<x86::FamilyEntry> &families = x86::familySchedules();
  for (size_t i = 0; i < s.stages.size(); ++i)
    for (const x86::FamilyEntry &f : families)
      if (s.stages[i].tensor->tag == f.tag && f.apply(s, i))
        return;
  // A family's op of a shape its schedule does not take keeps the seed-era schedule, if the
  // family says so.
  for (const Stage &st : s.stages)
    for (const x86::FamilyEntry &f : families)
      if (st.tensor->tag == f.tag && f.defaultWhenRefused)
        return applyDefaultSchedule(s);
  if (x86::rowwise(s))
    return;
  // Everything else: producers inlined; injective outputs vectorised and parallel; reductions
  // (pools, global pooling, softmax's sums) parallel over their output elements, each
  // reduction independent of the others, and vectorised when they run along a row.
  std::vector<loop::ComputeRef> rowReductions;
  for (Stage &st : s.stages) {
    bool reduction = st.body->kind == loop::ExprKind::Reduce;
    if (!reduction && !s.isOutput(st)) {
      s.computeInline(st);
    } else if (!reduction) {
      x86::injective(s, st);
    } else if (size_t nd = st.tensor->shape.size(); nd == 5 && st.tensor->tag == "pool") {
      // A pool on NCHW<k>c: the window loops outside the channel block, which is vectorised
      // (the window's bounds test is the same for every lane); rows in parallel.
      std::vector<loop::Expr> order;
      for (size_t r = nd; r < st.leaves.size(); ++r)
        order.push_back(st.leaves[r].var);
      loop::Expr block = st.leaves[4].var;
      int64_t lanes = st.leaves[4].extent;
      order.push_back(block);
      s.reorder(st, order);
      loop::Expr rows = s.fuse(st, st.leaves[0].var, st.leaves[1].var);
      rows = s.fuse(st, rows, st.leaves[1].var); // (n, c, h): after the first fuse, h is next
      s.parallel(st, rows);
      if (lanes >= 2 && lanes <= 64)
        s.vectorize(st, block);
      if (s.define(st.buffer + ".unroll_window", {0, 1}, 0, "1: the window's loops unrolled"))
        for (size_t r = 0; r + 1 < order.size(); ++r)
          s.unroll(st, order[r]);
    } else if (nd > 0) {
      if (x86::vectorReducible(st, s.cpu)) {
        rowReductions.push_back(st.tensor);
        continue;
      }
      if (x86::columnReduction(s, st))
        continue;
      loop::Expr v = st.leaves[0].var;
      for (size_t d = 1; d < nd; ++d)
        v = s.fuse(st, v, st.leaves[1].var);
      s.parallel(st, v);
    }
  }
  // After the walk: rfactor adds stages.
  for (const loop::ComputeRef &t : rowReductions)
    x86::vectorReduction(s, t);
}

} // namespace loupe::backend
