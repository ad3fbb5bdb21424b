// Rowwise: the fast schedule of an output normalised by statistics of its rows (softmax,
// log_softmax, layer_norm): per row, the statistics and then the row, while the row is in L1.
#include "backend/x86/FastSchedules.h"

#include "core/loop/SizeVars.h"

#include "core/DType.h"
#include "core/Error.h"

#include <algorithm>
#include <map>

namespace loupe::backend::x86 {

using namespace loop;

namespace {

// `shape` without its trailing ones: (128, 1) is a value per row of (128, 768), as (128) is.
Shape withoutTrailingOnes(Shape shape) {
  while (!shape.empty() && shape.back() == 1)
    shape.pop_back();
  return shape;
}

// The stage computing the output with the most elements, if it is elementwise over its axes.
Stage *rowOutput(Schedule &s) {
  Stage *best = nullptr;
  for (Stage &st : s.stages)
    if (s.isOutput(st) &&
        (!best || numElements(st.tensor->shape) > numElements(best->tensor->shape)))
      best = &st;
  return best && best->body->kind != ExprKind::Reduce ? best : nullptr;
}

// The schedule on `s`, or an Error where computeAt cannot bound a statistic's reads to its row.
void scheduleRows(Schedule &s, const ComputeRef &outT) {
  // Stages are held by value: rfactor's insertions move them, so they are found by tensor.
  const Shape &shape = outT->shape;
  size_t nd = shape.size();
  std::vector<ComputeRef> reductions;
  for (Stage &st : s.stages) {
    if (st.tensor == outT)
      continue;
    if (st.body->kind == ExprKind::Reduce)
      reductions.push_back(st.tensor);
    else if (!s.isOutput(st))
      s.computeInline(st);
  }
  std::map<const Compute *, std::vector<ComputeRef>> partialsOf;
  for (const ComputeRef &t : reductions)
    partialsOf[t.get()] = rowPartials(s, t);
  // The output: rows (its leading axes fused) in parallel, each row in vectors.
  Stage &o = s.stage(outT);
  Expr rows = o.leaves[0].var;
  for (size_t d = 1; d + 1 < nd; ++d)
    rows = s.fuse(o, rows, o.leaves[1].var);
  s.parallel(o, rows);
  Expr last = o.leaves.back().var;
  int64_t lanes = s.cpu.lanes(dtypeBytes(outT->dtype));
  auto [lo, li] = s.splitTiles(o, last, lanes);
  s.vectorize(o, li);
  // Every statistic at the row loop, consumers first so that each one's bounds see its readers;
  // a reduction's partial results (rfactor put them just before it, so they are met after it and
  // found attached) at its own one-element loop, in registers.
  for (size_t i = s.stages.size(); i-- > 0;) {
    if (s.stages[i].inlined || s.stages[i].attachedAt || s.stages[i].tensor == outT)
      continue;
    ComputeRef t = s.stages[i].tensor;
    s.computeAt(s.stage(t), s.stage(outT), rows);
    const Stage &st = s.stage(t);
    if (std::any_of(st.region.begin(), st.region.end(), [](int64_t e) { return e != 1; }))
      fail("schedule: ", st.buffer, " is not one value per row");
    if (!s.isOutput(st))
      s.setLocal(s.stage(t));
    partialsInRegisters(s, t, partialsOf[t.get()]);
  }
}

// Whether a reduction runs along the whole last axis of `shape` (symbolic: the same expression).
bool alongRow(const IterVar &k, const Shape &shape) {
  SymExpr last = shape.dim(shape.size() - 1);
  if (k.size)
    return !last.isConstant() && sameExpr(k.size, sizeExpr(last));
  return last.isConstant() && k.extent == last.constant();
}

} // namespace

bool rowwise(Schedule &s) {
  Stage *out = rowOutput(s);
  if (!out || out->tensor->shape.size() < 2)
    return false;
  const Shape &shape = out->tensor->shape;
  Shape rows = withoutTrailingOnes(Shape(shape.begin(), shape.end() - 1));
  bool anyReduction = false;
  for (const Stage &st : s.stages) {
    if (&st == out)
      continue;
    bool reduction = st.body->kind == ExprKind::Reduce;
    if (!reduction && !s.isOutput(st))
      continue; // inlined
    // A value per row, reduced along the row in vectors.
    if (withoutTrailingOnes(st.tensor->shape) != rows)
      return false;
    if (reduction && (!vectorReducible(st, s.cpu) || !alongRow(st.body->reduceAxes[0], shape) ||
                      st.tensor->dtype != out->tensor->dtype))
      return false;
    anyReduction |= reduction;
  }
  if (!anyReduction)
    return false;
  // computeAt is the check that each statistic is read per row; on a trial copy, so a function
  // it refuses keeps its schedule untouched.
  Schedule trial = s;
  try {
    scheduleRows(trial, out->tensor);
  } catch (const Error &) {
    return false;
  }
  s = std::move(trial);
  return true;
}

} // namespace loupe::backend::x86
