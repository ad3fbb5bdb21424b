// LowerSchedule: a scheduled function as one loop-IR statement — TVM's ScheduleOps: stages
// materialised or inlined, produce/allocate nests, reductions with an init, flat buffer indices.
#include "backend/schedule/Schedule.h"

#include "backend/schedule/Stages.h"
#include "core/DType.h"
#include "core/Error.h"
#include "core/Shape.h"
#include "core/loop/SizeVars.h"
#include "core/loop/Visitor.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace loupe::backend {

using namespace loop;

// ---------------------------------------------------------------------------------------------

Expr flatIndex(const std::vector<Expr> &indices, const Shape &shape) {
  if (shape.isSymbolic()) {
    // Extents that are expressions of the size symbols: the row-major sum, with a fused loop
    // taken apart over a dimension (v / D followed by v % D, D the same expression) read as v.
    std::vector<Expr> parts = indices, dims;
    for (size_t d = 0; d < shape.size(); ++d)
      dims.push_back(dimExtent(shape, d));
    for (size_t d = 0; d + 1 < parts.size();) {
      const Expr &a = parts[d], &b = parts[d + 1];
      if (a->kind == ExprKind::Binary && a->op == BinOp::Div && b->kind == ExprKind::Binary &&
          b->op == BinOp::Mod && sameExpr(a->args[0], b->args[0]) &&
          sameExpr(a->args[1], b->args[1]) && sameExpr(b->args[1], dims[d + 1])) {
        parts[d] = a->args[0];
        dims[d] = dims[d] * dims[d + 1];
        parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(d) + 1);
        dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(d) + 1);
        d = d > 0 ? d - 1 : 0; // the merged index may now pair with the one before
      } else {
        ++d;
      }
    }
    Expr acc = intImm(0);
    for (size_t d = 0; d < parts.size(); ++d)
      acc = acc * dims[d] + parts[d];
    return acc;
  }
  // Each index as (non-constant part, constant offset).
  std::vector<Expr> parts;
  std::vector<int64_t> consts;
  Shape dims = shape;
  for (const Expr &e : indices) {
    Expr p = e;
    int64_t c = 0, k;
    while (p && p->kind == ExprKind::Binary && (p->op == BinOp::Add || p->op == BinOp::Sub) &&
           constValue(p->args[1], &k)) {
      c += p->op == BinOp::Add ? k : -k;
      p = p->args[0];
    }
    if (p && constValue(p, &k)) {
      c += k;
      p = nullptr;
    }
    parts.push_back(p);
    consts.push_back(c);
  }
  int64_t total = 0, stride = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    total += consts[d] * stride;
    stride *= dims[d];
  }
  // v/c followed by v%c over a dimension of size c is just v (a fused loop, taken apart).
  for (bool merged = true; merged;) {
    merged = false;
    for (size_t d = 0; d + 1 < parts.size(); ++d) {
      const Expr &a = parts[d], &b = parts[d + 1];
      int64_t ca, cb;
      if (a && b && a->kind == ExprKind::Binary && a->op == BinOp::Div &&
          b->kind == ExprKind::Binary && b->op == BinOp::Mod && a->args[0] == b->args[0] &&
          constValue(a->args[1], &ca) && constValue(b->args[1], &cb) && ca == cb &&
          cb == dims[d + 1]) {
        parts[d] = a->args[0];
        dims[d] *= dims[d + 1];
        parts.erase(parts.begin() + d + 1);
        dims.erase(dims.begin() + d + 1);
        merged = true;
        break;
      }
    }
  }
  Expr acc = intImm(0);
  for (size_t d = 0; d < parts.size(); ++d)
    acc = acc * dims[d] + (parts[d] ? parts[d] : intImm(0));
  return total == 0 ? acc : acc + total;
}

namespace {

class Lowerer {
public:
  explicit Lowerer(const Schedule &s) : sch_(s), stageOf_(stageMap(s.stages)) {}

  Stmt run() {
    std::vector<Stmt> produces;
    std::vector<const Stage *> intermediates;
    for (const Stage &st : sch_.stages) {
      if (st.inlined)
        continue;
      // A stage computed at a consumer's loop is lowered first (producers come first) and
      // placed when that loop is built.
      Stmt p = produce(st.buffer, lowerStage(st));
      if (st.attachedAt)
        attached_[st.attachedAt.get()].push_back({p, &st});
      else
        produces.push_back(p);
      if (!sch_.isOutput(st) && !st.local)
        intermediates.push_back(&st);
    }
    Stmt body = seq(produces);
    for (size_t i = intermediates.size(); i-- > 0;) {
      const Stage &st = *intermediates[i];
      // A generic kernel's intermediate of symbolic shape is allocated when the kernel runs.
      if (st.tensor->shape.isSymbolic()) {
        Expr count = intImm(1);
        for (size_t d = 0; d < st.tensor->shape.size(); ++d)
          count = count * dimExtent(st.tensor->shape, d);
        body = attr(st.buffer, "storage_scope", "\"global\"",
                    allocateSized(st.buffer, st.tensor->dtype, count, body));
        continue;
      }
      body = attr(st.buffer, "storage_scope", "\"global\"",
                  allocate(st.buffer, st.tensor->dtype, st.tensor->shape, body));
    }
    if (!attached_.empty())
      fail("schedule: a stage is computed at loop ", attached_.begin()->first->name,
           ", which no longer exists (split or fused after compute_at)");
    return body;
  }

private:
  Expr inlineReads(const Expr &e) { return inlineStages(e, stageOf_); }

  // Remaining tensor reads become loads of their buffers.
  class LoadMaker : public IRMutator {
  public:
    explicit LoadMaker(const StageMap &stageOf) : stageOf_(stageOf) {}
    Expr mutateExpr(const Expr &e) override {
      Expr m = IRMutator::mutateExpr(e);
      if (m->kind != ExprKind::TensorRead)
        return m;
      auto it = stageOf_.find(m->tensor.get());
      const std::string &buf = it == stageOf_.end() ? m->tensor->name : it->second->buffer;
      if (it != stageOf_.end() && it->second->local)
        return load(buf, m->dtype, localIndex(*it->second, m->args));
      return load(buf, m->dtype, flatIndex(m->args, m->tensor->shape));
    }

  private:
    const StageMap &stageOf_;
  };
  Expr toLoads(const Expr &e) { return LoadMaker(stageOf_).mutateExpr(e); }

  // The index into a local stage's region buffer of its element at `global`.
  static Expr localIndex(const Stage &st, const std::vector<Expr> &global) {
    std::vector<Expr> local;
    for (size_t d = 0; d < global.size(); ++d)
      local.push_back(offsetFrom(global[d], st.regionMin[d]));
    return flatIndex(local, st.region);
  }

  static Stmt guarded(const std::vector<Expr> &guards, Stmt s) {
    for (size_t i = guards.size(); i-- > 0;)
      s = ifThenElse(call("likely", {guards[i]}, kBool), s);
    return s;
  }

  // Loops around `body`, innermost last in `leaves`: extent-1 loops vanish, unrolled ones are
  // expanded, vectorised ones that carry a guard run scalar under a `.s` name. Each of `tests`
  // wraps the loops inside the innermost leaf it reads (all of them when it reads none).
  Stmt nest(std::vector<Leaf> leaves, const std::vector<Expr> &guards, Stmt body,
            std::vector<Expr> tests = {}) {
    for (size_t i = leaves.size(); i-- > 0;) {
      Leaf l = leaves[i];
      for (auto t = tests.begin(); t != tests.end();) {
        if (!usesVar(*t, l.var.get())) {
          ++t;
          continue;
        }
        if (l.kind == ForKind::Vectorized)
          fail("schedule: an update's test reads the vectorised loop ", l.var->name);
        body = guarded({*t}, body);
        t = tests.erase(t);
      }
      if (auto it = attached_.find(l.var.get()); it != attached_.end()) {
        std::vector<Stmt> inside;
        for (const auto &[p, st] : it->second)
          inside.push_back(p);
        inside.push_back(body);
        body = seq(inside);
        for (size_t k = it->second.size(); k-- > 0;) {
          const Stage &st = *it->second[k].second;
          if (st.local)
            body = attr(st.buffer, "storage_scope", "\"local\"",
                        allocate(st.buffer, st.tensor->dtype, st.region, body));
        }
        attached_.erase(it);
      }
      if (!l.size && l.extent == 1) {
        body = substitute(body, {{l.var.get(), intImm(0)}});
        continue;
      }
      if (l.kind == ForKind::Unrolled) {
        std::vector<Stmt> copies;
        for (int64_t k = 0; k < l.extent; ++k)
          copies.push_back(substitute(body, {{l.var.get(), intImm(k)}}));
        body = seq(copies);
        continue;
      }
      if (l.kind == ForKind::Vectorized &&
          std::any_of(guards.begin(), guards.end(),
                      [&](const Expr &g) { return usesVar(g, l.var.get()); })) {
        Expr s = var(l.var->name + ".s");
        body = substitute(body, {{l.var.get(), s}});
        l.var = s;
        l.kind = ForKind::Scalarized;
      }
      body = forLoop(l.var, intImm(0), leafExtent(l), l.kind, body);
    }
    return guarded(tests, body);
  }

  Stmt lowerStage(const Stage &st) {
    const Compute &t = *st.tensor;
    Expr value = inlineReads(st.body);
    bool isReduce = value->kind == ExprKind::Reduce;
    std::vector<Expr> idx;
    for (const Expr &a : t.axes)
      idx.push_back(substitute(a, st.axisValue));
    Expr index = st.local ? localIndex(st, idx) : flatIndex(idx, t.shape);
    if (!isReduce) {
      Stmt s = store(st.buffer, index, toLoads(substitute(value, st.axisValue)));
      return nest(st.leaves, st.guards, guarded(st.guards, s));
    }
    Expr source = toLoads(substitute(value->args[0], st.axisValue));
    if (value->args.size() > 1)
      // Lazy, as the source may read outside its tensor where the condition fails.
      source = call("tvm_if_then_else",
                    {toLoads(substitute(value->args[1], st.axisValue)), source,
                     identity(value->combiner, t.dtype)},
                    t.dtype);
    Expr acc = load(st.buffer, t.dtype, index);
    Expr updated;
    switch (value->combiner) {
    case Combiner::Sum:
      updated = acc + source;
      break;
    case Combiner::Prod:
      updated = acc * source;
      break;
    case Combiner::Max:
      updated = max(acc, source);
      break;
    case Combiner::Min:
      updated = min(acc, source);
      break;
    }
    size_t r = 0;
    while (r < st.leaves.size() && !st.leaves[r].reduce)
      ++r;
    std::vector<Leaf> outer(st.leaves.begin(), st.leaves.begin() + r),
        inner(st.leaves.begin() + r, st.leaves.end());
    // The init nest: the data-parallel loops inside the first reduce loop, renamed `.init`.
    std::vector<Leaf> init;
    VarMap rename;
    for (const Leaf &l : inner)
      if (!l.reduce) {
        Leaf c = l;
        c.var = var(l.var->name + ".init");
        rename.push_back({l.var.get(), c.var});
        init.push_back(c);
      }
    std::vector<Expr> initGuards, mainGuards = st.guards;
    for (const Expr &g : st.guards) {
      bool onReduce = std::any_of(inner.begin(), inner.end(), [&](const Leaf &l) {
        return l.reduce && usesVar(g, l.var.get());
      });
      if (!onReduce)
        initGuards.push_back(substitute(g, rename));
    }
    Stmt initStmt = nest(init, initGuards,
                         guarded(initGuards, store(st.buffer, substitute(index, rename),
                                                   identity(value->combiner, t.dtype))));
    std::vector<Expr> within;
    for (const Expr &c : st.updateWithin)
      within.push_back(substitute(c, st.axisValue));
    Stmt mainStmt =
        nest(inner, mainGuards, guarded(mainGuards, store(st.buffer, index, updated)), within);
    return nest(outer, st.guards, seq({initStmt, mainStmt}));
  }

  // The largest finite value of a dtype (TVM's max_value), the identity of min.
  static double largest(int dtype) {
    switch (dtype) {
    case kFloat32:
      return std::numeric_limits<float>::max();
    case kFloat64:
      return std::numeric_limits<double>::max();
    case kFloat16:
      return 65504.0;
    case kBFloat16:
      return 0x1.fep127;
    case kInt8:
      return 127;
    case kUint8:
      return 255;
    case kInt16:
      return 32767;
    case kUint16:
      return 65535;
    case kInt32:
      return 2147483647.0;
    case kUint32:
      return 4294967295.0;
    default:
      return 9007199254740992.0; // 64-bit integers: the largest exact double
    }
  }

  static Expr identity(Combiner c, int dtype) {
    switch (c) {
    case Combiner::Sum:
      return constant(0, dtype);
    case Combiner::Prod:
      return constant(1, dtype);
    case Combiner::Max:
      return constant(smallest(dtype), dtype);
    case Combiner::Min:
      return constant(largest(dtype), dtype);
    }
    return constant(0, dtype);
  }

  // The smallest finite value of a dtype (TVM's min_value), the identity of max: an unsigned
  // type's is 0 and a signed integer's one below the negated largest (-largest, the floats'
  // rule, wrapped to 1 in uint8 and missed an int8 window of -128s).
  static double smallest(int dtype) {
    switch (dtype) {
    case kUint8:
    case kUint16:
    case kUint32:
    case kUint64:
      return 0;
    case kInt8:
    case kInt16:
    case kInt32:
      return -largest(dtype) - 1;
    default:
      return -largest(dtype);
    }
  }

  const Schedule &sch_;
  StageMap stageOf_;
  /// compute_at stages by loop variable: their produce statement and stage
  std::map<const ExprNode *, std::vector<std::pair<Stmt, const Stage *>>> attached_;
};

} // namespace

Stmt lower(const Schedule &s) { return Lowerer(s).run(); }
} // namespace loupe::backend
