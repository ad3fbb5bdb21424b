// DefaultSchedules: the default CPU schedules TVM's topi used for target "llvm" in the seed era
// (nnvm-spec §11), as functions over a Schedule.
#include "backend/LowerFunction.h"

#include <algorithm>

namespace loupe::backend {

using namespace loop;

namespace {

bool isReduction(const Stage &st) { return st.body->kind == ExprKind::Reduce; }

// The output of an injective group: ≥5-D fuse the first three axes, 3–4-D the first two, and
// run the fused loop in parallel; otherwise axis 0 in parallel.
void injectiveOutput(Schedule &s, Stage &st) {
  size_t nd = st.tensor->shape.size();
  if (nd == 0)
    return;
  Expr outer = st.leaves[0].var;
  if (nd >= 3)
    outer = s.fuse(st, outer, st.leaves[1].var);
  if (nd >= 5)
    outer = s.fuse(st, outer, st.leaves[1].var);
  s.parallel(st, outer);
}

// topi x86 conv2d (plain NCHW): N and C fused and parallel, W split by 16, taps unrolled, the
// inner W vectorised.
void conv2dStage(Schedule &s, Stage &st) {
  Expr nn = s.leaf(st, "nn"), ff = s.leaf(st, "ff"), yy = s.leaf(st, "yy"), xx = s.leaf(st, "xx"),
       rc = s.leaf(st, "rc"), ry = s.leaf(st, "ry"), rx = s.leaf(st, "rx");
  Expr fused = s.fuse(st, nn, ff);
  s.parallel(st, fused);
  auto [xo, xi] = s.split(st, xx, 16);
  s.reorder(st, {fused, rc, yy, xo, ry, rx, xi});
  s.unroll(st, ry);
  s.unroll(st, rx);
  s.vectorize(st, xi);
}

// topi x86 dense: the product written through a cache; the result tiled 1 x 4 with the tile
// column loop parallel and the 4 columns vectorised; the cache computed per tile, its k split by
// 4 and unrolled, the 4 columns vectorised innermost. Stages after it stay as they are (topi
// left the output of a dense group unscheduled). Returns false for a dense that is not 2-D.
bool denseStages(Schedule &s, size_t idx) {
  if (s.stages[idx].tensor->shape.size() != 2)
    return false;
  Stage &cache = s.cacheWrite(s.stages[idx]);
  Stage &c = s.stages[idx + 1];
  Expr x = c.leaves[0].var, y = c.leaves[1].var;
  auto [xo, xi] = s.split(c, x, 1);
  auto [yo, yi] = s.split(c, y, 4);
  s.reorder(c, {xo, yo, xi, yi});
  s.computeAt(cache, c, yo);
  Expr xc = cache.leaves[0].var, yc = cache.leaves[1].var, k = cache.leaves[2].var;
  auto [ko, ki] = s.split(cache, k, 4);
  s.reorder(cache, {ko, xc, ki, yc});
  s.unroll(cache, ki);
  s.vectorize(cache, yc);
  s.vectorize(c, yi);
  s.parallel(c, yo);
  return true;
}

} // namespace

void applyDefaultSchedule(Schedule &s) {
  for (size_t i = 0; i < s.stages.size(); ++i)
    if (s.stages[i].tensor->tag == "dense" && isReduction(s.stages[i]) && denseStages(s, i)) {
      // The stages before and after: inline what is not an output, as topi's traverse did.
      for (Stage &st : s.stages)
        if (st.tensor->tag != "dense" && !s.isOutput(st) && !isReduction(st))
          s.computeInline(st);
      return;
    }
  bool conv = std::any_of(s.stages.begin(), s.stages.end(),
                          [](const Stage &st) { return st.tensor->tag == "conv2d"; });
  for (Stage &st : s.stages) {
    bool out = s.isOutput(st);
    if (st.tensor->tag == "conv2d") {
      conv2dStage(s, st);
    } else if (isReduction(st)) {
      // Reductions: the output axes fused into one loop, not parallel.
      size_t nd = st.tensor->shape.size();
      Expr v = st.leaves[0].var;
      for (size_t d = 1; d < nd; ++d)
        v = s.fuse(st, v, st.leaves[1].var);
    } else if (conv && st.tensor->tag == "pad" && !out) {
      Expr f = s.fuse(st, st.leaves[0].var, st.leaves[1].var);
      s.parallel(st, f);
    } else if (!out) {
      s.computeInline(st);
    } else if (conv && st.tensor->shape.size() == 4) {
      Expr f = s.fuse(st, st.leaves[0].var, st.leaves[1].var);
      s.parallel(st, f);
      s.vectorize(st, st.leaves.back().var);
    } else {
      injectiveOutput(s, st);
    }
  }
}

} // namespace loupe::backend
