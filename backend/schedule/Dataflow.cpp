// Dataflow: the schedule primitives that rewrite the compute graph itself — TVM's cache_write
// and rfactor, each adding a stage.
#include "backend/schedule/Schedule.h"

#include "backend/schedule/Stages.h"
#include "core/Error.h"
#include "core/loop/SizeVars.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace loupe::backend {

using namespace loop;

Stage &Schedule::cacheWrite(Stage &s) { return cacheWritePadded(s, 0, 1); }

Stage &Schedule::cacheWritePadded(Stage &s, size_t axis, int64_t multiple) {
  const Compute &t = *s.tensor;
  if (axis >= t.axes.size() || multiple < 1)
    fail("schedule: cache_write of ", s.buffer, " padded along axis ", axis, " to a multiple of ",
         multiple);
  for (size_t d = 0; d < s.leaves.size(); ++d)
    if (d >= t.axes.size() ? !s.leaves[d].reduce : s.leaves[d].var != t.axes[d])
      fail("schedule: cache_write of ", s.buffer, " after its loops were scheduled");
  auto cache = std::make_shared<Compute>();
  cache->name = t.name + ".global";
  cache->shape = t.shape;
  // Read through a const reference: a mutable one drops a symbolic shape's expressions.
  auto padded = [&](size_t d) { return std::as_const(cache->shape)[d]; };
  cache->dtype = t.dtype;
  cache->tag = t.tag;
  cache->node = t.node;
  int64_t real = t.shape[axis];
  // A symbolic axis (a generic kernel's rows) is padded to its rounded expression, read back
  // clamped to its last index.
  bool symbolicAxis = !t.shape.dim(axis).isConstant();
  if (symbolicAxis && multiple > 1) {
    SymDims dims = t.shape.dims();
    dims[axis] =
        SymExpr::floorDiv(dims[axis] + SymExpr(multiple - 1), multiple) * SymExpr(multiple);
    cache->shape = Shape::symbolic(dims);
  } else if (multiple > 1) { // (written through, a symbolic shape would lose its expressions)
    cache->shape[axis] = (real + multiple - 1) / multiple * multiple;
  }
  VarMap rename;
  for (size_t d = 0; d < t.axes.size(); ++d) {
    cache->axes.push_back(var(t.axes[d]->name + ".c"));
    Expr value = cache->axes.back();
    if (d == axis && symbolicAxis && multiple > 1)
      value = min(value, dimExtent(t.shape, d) - 1);
    else if (d == axis && padded(axis) != real)
      value = min(value, intImm(real - 1));
    rename.push_back({t.axes[d].get(), value});
  }
  cache->body = substitute(s.body, rename);
  Stage c;
  c.tensor = cache;
  c.body = cache->body;
  c.buffer = s.buffer + ".global";
  for (size_t d = 0; d < cache->axes.size(); ++d) {
    c.leaves.push_back(axisLeaf(cache->axes[d], cache->shape, d));
    c.axisValue.push_back({cache->axes[d].get(), cache->axes[d]});
  }
  if (c.body->kind == ExprKind::Reduce)
    for (const IterVar &r : c.body->reduceAxes) {
      c.leaves.push_back({r.var, r.extent, ForKind::Serial, true, r.size});
      c.axisValue.push_back({r.var.get(), r.var});
    }
  // The original stage now copies the cache: only its data axes remain.
  s.body = read(cache, t.axes);
  s.leaves.resize(t.axes.size());
  s.axisValue.resize(t.axes.size());
  log_.push_back(s.buffer + ": cache_write -> " + c.buffer +
                 (padded(axis) != real ? ", axis " + t.axes[axis]->name + " padded to " +
                                             std::to_string(padded(axis))
                                       : ""));
  size_t pos = static_cast<size_t>(&s - stages.data());
  stages.insert(stages.begin() + static_cast<std::ptrdiff_t>(pos), std::move(c));
  return stages[pos];
}

Stage &Schedule::rfactor(Stage &s, const Expr &k, int64_t factor) {
  const Compute &t = *s.tensor;
  const Expr body = s.body;
  if (body->kind != ExprKind::Reduce)
    fail("schedule: rfactor of ", s.buffer, ", which is not a reduction");
  for (size_t d = 0; d < s.leaves.size(); ++d)
    if (d >= t.axes.size() ? !s.leaves[d].reduce : s.leaves[d].var != t.axes[d])
      fail("schedule: rfactor of ", s.buffer, " after its loops were scheduled");
  auto it = std::find_if(body->reduceAxes.begin(), body->reduceAxes.end(),
                         [&](const IterVar &r) { return r.var == k; });
  if (it == body->reduceAxes.end())
    fail("schedule: ", s.buffer, " has no reduce axis ", k->name);
  if (factor <= 0)
    fail("schedule: rfactor needs a positive factor, got ", factor);
  // Over a symbolic extent (a softmax along seq) the partial sums run ceil(E / factor) steps,
  // the last ones past the end skipped by the condition.
  const Expr symbolicExtent = it->size;
  int64_t extent = it->extent;
  auto rf = std::make_shared<Compute>();
  rf->name = t.name + ".rf";
  rf->shape = appendDim(t.shape, factor);
  rf->dtype = t.dtype;
  rf->tag = t.tag + ".rf";
  rf->node = t.node;
  VarMap rename;
  for (const Expr &a : t.axes) {
    rf->axes.push_back(var(a->name + ".rf"));
    rename.push_back({a.get(), rf->axes.back()});
  }
  // Partials of partials (k.inner.r rfactor'ed again) are named by factor from the original
  // axis: k.inner16, k.outer16 and k.inner.r16, not k.inner.r.inner.
  std::string base = k->name, level;
  if (size_t at = base.find(".inner.r"); at != std::string::npos) {
    base = base.substr(0, at);
    level = std::to_string(factor);
  }
  Expr inner = var(base + ".inner" + level);
  rf->axes.push_back(inner);
  IterVar outer{var(base + ".outer" + level), (extent + factor - 1) / factor, nullptr};
  if (symbolicExtent)
    outer = {outer.var, 0, (symbolicExtent + (factor - 1)) / factor};
  Expr kValue = outer.var * factor + inner;
  rename.push_back({k.get(), kValue});
  std::vector<IterVar> axes;
  for (const IterVar &r : body->reduceAxes)
    axes.push_back(r.var == k ? outer : r);
  Expr cond = body->args.size() > 1 ? substitute(body->args[1], rename) : nullptr;
  if (symbolicExtent || extent % factor != 0) { // the last partial sums run past the end
    Expr end = symbolicExtent ? symbolicExtent : intImm(extent);
    cond = cond ? land(cond, lt(kValue, end)) : lt(kValue, end);
  }
  rf->body = reduce(body->combiner, substitute(body->args[0], rename), axes, cond);
  Stage r;
  r.tensor = rf;
  r.body = rf->body;
  // A stage rfactor'ed twice (partial sums summed pairwise) names its second partials by factor.
  r.buffer = s.buffer + ".rf";
  auto taken = [&](const std::string &name) {
    return std::any_of(stages.begin(), stages.end(),
                       [&](const Stage &o) { return o.buffer == name; });
  };
  for (int n = 0; taken(r.buffer); ++n)
    r.buffer = s.buffer + ".rf" + std::to_string(factor) + (n ? "_" + std::to_string(n) : "");
  for (size_t d = 0; d < rf->axes.size(); ++d) {
    r.leaves.push_back(axisLeaf(rf->axes[d], rf->shape, d));
    r.axisValue.push_back({rf->axes[d].get(), rf->axes[d]});
  }
  for (const IterVar &a : axes) {
    r.leaves.push_back({a.var, a.extent, ForKind::Serial, true, a.size});
    r.axisValue.push_back({a.var.get(), a.var});
  }
  // `s` now sums the partials.
  IterVar partial{var(base + ".inner.r" + level), factor, nullptr};
  std::vector<Expr> at = t.axes;
  at.push_back(partial.var);
  s.body = reduce(body->combiner, read(rf, at), {partial});
  s.leaves.resize(t.axes.size());
  s.axisValue.resize(t.axes.size());
  s.leaves.push_back({partial.var, factor, ForKind::Serial, true});
  s.axisValue.push_back({partial.var.get(), partial.var});
  log_.push_back(s.buffer + ": rfactor " + k->name + " by " + std::to_string(factor) + " -> " +
                 r.buffer);
  size_t pos = static_cast<size_t>(&s - stages.data());
  stages.insert(stages.begin() + static_cast<std::ptrdiff_t>(pos), std::move(r));
  return stages[pos];
}
} // namespace loupe::backend
