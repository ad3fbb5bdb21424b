// Schedule: TVM's schedule primitives over compute stages, and lowering a schedule to loops.
#include "backend/schedule/Schedule.h"
#include "core/loop/Visitor.h"

#include "core/DType.h"
#include "core/Error.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace loupe::backend {

using namespace loop;

using VarMap = std::vector<std::pair<const ExprNode *, Expr>>;

Schedule::Schedule(const std::vector<ComputeRef> &outs) : outputs(outs) {
  std::map<std::string, int> used;
  for (const ComputeRef &t : topoOrder(outs)) {
    int n = used[t->name]++;
    if (t->placeholder)
      continue;
    Stage s;
    s.tensor = t;
    s.body = t->body;
    s.buffer = n == 0 ? t->name : t->name + "_" + std::to_string(n);
    for (size_t d = 0; d < t->axes.size(); ++d) {
      s.leaves.push_back({t->axes[d], t->shape[d]});
      s.axisValue.push_back({t->axes[d].get(), t->axes[d]});
    }
    if (t->body->kind == ExprKind::Reduce)
      for (const IterVar &r : t->body->reduceAxes) {
        s.leaves.push_back({r.var, r.extent, ForKind::Serial, true});
        s.axisValue.push_back({r.var.get(), r.var});
      }
    stages.push_back(std::move(s));
  }
}

Stage &Schedule::stage(const ComputeRef &t) {
  for (Stage &s : stages)
    if (s.tensor == t)
      return s;
  fail("schedule: ", t->name, " is not a stage of this function");
}

Expr Schedule::leaf(Stage &s, const std::string &name) const {
  for (const Leaf &l : s.leaves)
    if (l.var->name == name)
      return l.var;
  fail("schedule: stage ", s.buffer, " has no loop ", name);
}

Leaf &Schedule::findLeaf(Stage &s, const Expr &v, size_t *pos) {
  for (size_t i = 0; i < s.leaves.size(); ++i)
    if (s.leaves[i].var == v) {
      if (pos)
        *pos = i;
      return s.leaves[i];
    }
  fail("schedule: stage ", s.buffer, " has no loop ", v->name);
}

namespace {

// Inlined stages' bodies in place of reads of them.
class Inliner : public IRMutator {
public:
  explicit Inliner(const std::map<const Compute *, const Stage *> &stageOf) : stageOf_(stageOf) {}
  Expr mutateExpr(const Expr &e) override {
    Expr m = IRMutator::mutateExpr(e); // indices first
    if (m->kind != ExprKind::TensorRead)
      return m;
    auto it = stageOf_.find(m->tensor.get());
    if (it == stageOf_.end() || !it->second->inlined)
      return m;
    const Compute &t = *m->tensor;
    VarMap vars;
    for (size_t d = 0; d < t.axes.size(); ++d)
      vars.push_back({t.axes[d].get(), m->args[d]});
    return substitute(mutateExpr(it->second->body), vars);
  }

private:
  const std::map<const Compute *, const Stage *> &stageOf_;
};

std::map<const Compute *, const Stage *> stageMap(const std::vector<Stage> &stages) {
  std::map<const Compute *, const Stage *> m;
  for (const Stage &st : stages)
    m[st.tensor.get()] = &st;
  return m;
}

void rewriteAxes(Stage &s, const VarMap &m) {
  for (auto &[axis, value] : s.axisValue)
    value = substitute(value, m);
  for (Expr &g : s.guards)
    g = substitute(g, m);
}

} // namespace

std::pair<Expr, Expr> Schedule::split(Stage &s, Expr v, int64_t factor) {
  if (factor <= 0)
    fail("schedule: split factor must be positive, got ", factor);
  size_t pos;
  Leaf l = findLeaf(s, v, &pos);
  Expr outer = var(v->name + ".outer"), inner = var(v->name + ".inner");
  Expr value = outer * factor + inner;
  s.leaves[pos] = {inner, factor, ForKind::Serial, l.reduce};
  s.leaves.insert(s.leaves.begin() + pos,
                  {outer, (l.extent + factor - 1) / factor, ForKind::Serial, l.reduce});
  rewriteAxes(s, {{v.get(), value}});
  if (l.extent % factor != 0)
    s.guards.push_back(lt(value, intImm(l.extent)));
  log_.push_back(s.buffer + ": split " + v->name + " by " + std::to_string(factor));
  return {outer, inner};
}

std::pair<Expr, Expr> Schedule::splitTiles(Stage &s, Expr v, int64_t factor) {
  int64_t extent = findLeaf(s, v, nullptr).extent;
  return extent % factor == 0 ? split(s, v, factor) : splitShifted(s, v, factor);
}

std::pair<Expr, Expr> Schedule::splitShifted(Stage &s, Expr v, int64_t factor) {
  size_t pos;
  Leaf l = findLeaf(s, v, &pos);
  if (factor <= 0 || factor > l.extent)
    fail("schedule: a shifted split of ", v->name, " needs a factor from 1 to ", l.extent, ", got ",
         factor);
  Expr outer = var(v->name + ".outer"), inner = var(v->name + ".inner");
  Expr value = min(outer * factor, intImm(l.extent - factor)) + inner;
  s.leaves[pos] = {inner, factor, ForKind::Serial, l.reduce};
  s.leaves.insert(s.leaves.begin() + pos,
                  {outer, (l.extent + factor - 1) / factor, ForKind::Serial, l.reduce});
  rewriteAxes(s, {{v.get(), value}});
  log_.push_back(s.buffer + ": split " + v->name + " by " + std::to_string(factor) +
                 ", the last tile shifted back to end at " + std::to_string(l.extent));
  return {outer, inner};
}

Expr Schedule::fuse(Stage &s, Expr a, Expr b) {
  size_t pa, pb;
  Leaf la = findLeaf(s, a, &pa), lb = findLeaf(s, b, &pb);
  if (pb != pa + 1)
    fail("schedule: can only fuse adjacent loops, ", a->name, " and ", b->name, " are not");
  Expr fused = var(a->name + "." + b->name + ".fused");
  s.leaves[pa] = {fused, la.extent * lb.extent, ForKind::Serial, la.reduce};
  s.leaves.erase(s.leaves.begin() + pb);
  rewriteAxes(s, {{a.get(), fused / lb.extent}, {b.get(), fused % lb.extent}});
  log_.push_back(s.buffer + ": fuse " + a->name + ", " + b->name);
  return fused;
}

void Schedule::reorder(Stage &s, const std::vector<Expr> &order) {
  std::vector<size_t> positions;
  std::vector<Leaf> picked;
  for (const Expr &v : order) {
    size_t p;
    picked.push_back(findLeaf(s, v, &p));
    positions.push_back(p);
  }
  std::vector<size_t> sorted = positions;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    s.leaves[sorted[i]] = picked[i];
  std::string names;
  for (const Expr &v : order)
    names += (names.empty() ? "" : ", ") + v->name;
  log_.push_back(s.buffer + ": reorder " + names);
}

void Schedule::parallel(Stage &s, Expr v) {
  findLeaf(s, v, nullptr).kind = ForKind::Parallel;
  log_.push_back(s.buffer + ": parallel " + v->name);
}

void Schedule::vectorize(Stage &s, Expr v) {
  findLeaf(s, v, nullptr).kind = ForKind::Vectorized;
  log_.push_back(s.buffer + ": vectorize " + v->name);
}

void Schedule::unroll(Stage &s, Expr v) {
  findLeaf(s, v, nullptr).kind = ForKind::Unrolled;
  log_.push_back(s.buffer + ": unroll " + v->name);
}

void Schedule::computeInline(Stage &s) {
  if (s.body->kind == ExprKind::Reduce)
    fail("schedule: cannot inline the reduction ", s.buffer);
  for (const ComputeRef &o : outputs)
    if (o == s.tensor)
      fail("schedule: cannot inline the output ", s.buffer);
  s.inlined = true;
  log_.push_back(s.buffer + ": compute_inline");
}

Stage &Schedule::cacheWrite(Stage &s) {
  const Compute &t = *s.tensor;
  for (size_t d = 0; d < s.leaves.size(); ++d)
    if (d >= t.axes.size() ? !s.leaves[d].reduce : s.leaves[d].var != t.axes[d])
      fail("schedule: cache_write of ", s.buffer, " after its loops were scheduled");
  auto cache = std::make_shared<Compute>();
  cache->name = t.name + ".global";
  cache->shape = t.shape;
  cache->dtype = t.dtype;
  cache->tag = t.tag;
  VarMap rename;
  for (const Expr &a : t.axes) {
    cache->axes.push_back(var(a->name + ".c"));
    rename.push_back({a.get(), cache->axes.back()});
  }
  cache->body = substitute(s.body, rename);
  Stage c;
  c.tensor = cache;
  c.body = cache->body;
  c.buffer = s.buffer + ".global";
  for (size_t d = 0; d < cache->axes.size(); ++d) {
    c.leaves.push_back({cache->axes[d], t.shape[d]});
    c.axisValue.push_back({cache->axes[d].get(), cache->axes[d]});
  }
  if (c.body->kind == ExprKind::Reduce)
    for (const IterVar &r : c.body->reduceAxes) {
      c.leaves.push_back({r.var, r.extent, ForKind::Serial, true});
      c.axisValue.push_back({r.var.get(), r.var});
    }
  // The original stage now copies the cache: only its data axes remain.
  s.body = read(cache, t.axes);
  s.leaves.resize(t.axes.size());
  s.axisValue.resize(t.axes.size());
  log_.push_back(s.buffer + ": cache_write -> " + c.buffer);
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
  int64_t extent = it->extent;
  auto rf = std::make_shared<Compute>();
  rf->name = t.name + ".rf";
  rf->shape = t.shape;
  rf->shape.push_back(factor);
  rf->dtype = t.dtype;
  rf->tag = t.tag + ".rf";
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
  IterVar outer{var(base + ".outer" + level), (extent + factor - 1) / factor};
  Expr kValue = outer.var * factor + inner;
  rename.push_back({k.get(), kValue});
  std::vector<IterVar> axes;
  for (const IterVar &r : body->reduceAxes)
    axes.push_back(r.var == k ? outer : r);
  Expr cond = body->args.size() > 1 ? substitute(body->args[1], rename) : nullptr;
  if (extent % factor != 0) // the last partial sums run past the end
    cond = cond ? land(cond, lt(kValue, intImm(extent))) : lt(kValue, intImm(extent));
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
    r.leaves.push_back({rf->axes[d], rf->shape[d]});
    r.axisValue.push_back({rf->axes[d].get(), rf->axes[d]});
  }
  for (const IterVar &a : axes) {
    r.leaves.push_back({a.var, a.extent, ForKind::Serial, true});
    r.axisValue.push_back({a.var.get(), a.var});
  }
  // `s` now sums the partials.
  IterVar partial{var(base + ".inner.r" + level), factor};
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

namespace {

// Structural identity of an expression: variables by node, everything else by value.
std::string exprKey(const Expr &e) {
  std::string k = std::to_string(static_cast<int>(e->kind)) + ":" +
                  std::to_string(static_cast<int>(e->op)) + ":" + e->name + ":" +
                  std::to_string(e->intValue);
  if (e->kind == ExprKind::Var)
    k += "@" + std::to_string(reinterpret_cast<uintptr_t>(e.get()));
  k += "(";
  for (const Expr &a : e->args)
    k += exprKey(a) + ",";
  return k + ")";
}

// Collects an integer expression as constant + sum of coefficient * term, where a term is any
// part that is not a sum, difference or product by a constant; terms in order of appearance.
void linearTerms(const Expr &e, int64_t scale, std::vector<std::pair<Expr, int64_t>> &terms,
                 std::map<std::string, size_t> &slot, int64_t &constant) {
  int64_t k;
  if (constValue(e, &k)) {
    constant += scale * k;
    return;
  }
  if (e->kind == ExprKind::Binary) {
    if (e->op == BinOp::Add || e->op == BinOp::Sub) {
      linearTerms(e->args[0], scale, terms, slot, constant);
      linearTerms(e->args[1], e->op == BinOp::Add ? scale : -scale, terms, slot, constant);
      return;
    }
    if (e->op == BinOp::Mul && constValue(e->args[1], &k))
      return linearTerms(e->args[0], scale * k, terms, slot, constant);
    if (e->op == BinOp::Mul && constValue(e->args[0], &k))
      return linearTerms(e->args[1], scale * k, terms, slot, constant);
  }
  auto [it, fresh] = slot.emplace(exprKey(e), terms.size());
  if (fresh)
    terms.push_back({e, 0});
  terms[it->second].second += scale;
}

// An integer expression as constant + sum of coefficient * variable, if it is one. With
// `atoms`, a term that is not a variable but reads no variable of `inner` (`fused / 56` of a
// fused outer loop) counts as one more term, kept in `atoms` in order of appearance.
bool affine(const Expr &e, std::map<const ExprNode *, int64_t> &coef, int64_t &constant,
            std::vector<std::pair<Expr, int64_t>> *atoms = nullptr,
            const std::set<const ExprNode *> *inner = nullptr) {
  std::vector<std::pair<Expr, int64_t>> terms;
  std::map<std::string, size_t> slot;
  linearTerms(e, 1, terms, slot, constant);
  for (const auto &[t, k] : terms) {
    if (t->kind == ExprKind::Var)
      coef[t.get()] += k;
    else if (atoms && !usesAnyVar(t, *inner))
      atoms->push_back({t, k});
    else
      return false;
  }
  return true;
}

// The largest value an index expression of loop variables takes (variables range over
// [0, extent)); nullopt when it cannot tell.
std::optional<int64_t> maxValue(const Expr &e, const std::map<const ExprNode *, int64_t> &extent) {
  int64_t k;
  if (constValue(e, &k))
    return k;
  if (e->kind == ExprKind::Var) {
    auto it = extent.find(e.get());
    return it == extent.end() ? std::nullopt : std::optional<int64_t>(it->second - 1);
  }
  if (e->kind == ExprKind::Binary && e->op == BinOp::Min) {
    std::optional<int64_t> a = maxValue(e->args[0], extent), b = maxValue(e->args[1], extent);
    return a && b ? std::optional<int64_t>(std::min(*a, *b)) : std::nullopt;
  }
  if (e->kind != ExprKind::Binary || !constValue(e->args[1], &k) || k <= 0)
    return std::nullopt;
  std::optional<int64_t> a = maxValue(e->args[0], extent);
  if (!a)
    return std::nullopt;
  switch (e->op) {
  case BinOp::Add:
    return *a + k;
  case BinOp::Mul:
    return *a * k;
  case BinOp::Div:
    return *a / k;
  case BinOp::Mod:
    return std::min(*a, k - 1);
  default:
    return std::nullopt;
  }
}

// `a - b` with equal terms cancelled: how far `a` lies past `b` (a region's local index).
Expr offsetFrom(const Expr &a, const Expr &b) {
  std::vector<std::pair<Expr, int64_t>> terms;
  std::map<std::string, size_t> slot;
  int64_t c = 0;
  linearTerms(a, 1, terms, slot, c);
  linearTerms(b, -1, terms, slot, c);
  Expr out = nullptr;
  for (const auto &[t, k] : terms) {
    if (k == 0)
      continue;
    Expr term = k == 1 ? t : t * k;
    out = out ? out + term : term;
  }
  if (!out)
    return intImm(c);
  return c == 0 ? out : out + c;
}

// Every read of `t` in `e`: its index expressions.
struct ReadCollector : IRVisitor {
  const Compute *target;
  std::vector<std::vector<Expr>> reads;
  void visitExpr(const Expr &e) override {
    if (e->kind == ExprKind::TensorRead && e->tensor.get() == target)
      reads.push_back(e->args);
    IRVisitor::visitExpr(e);
  }
};

} // namespace

void Schedule::computeAt(Stage &producer, Stage &consumer, Expr at) {
  const Compute &p = *producer.tensor;
  size_t pos;
  findLeaf(consumer, at, &pos);
  for (size_t d = 0; d < p.axes.size(); ++d)
    if (producer.leaves[d].var != p.axes[d] || producer.axisValue[d].second != p.axes[d])
      fail("schedule: compute_at of ", producer.buffer, " after its data axes were scheduled");
  // TVM's bound inference, as far as one loop: the producer's reads by the consumer and by the
  // stages already computed inside `at` (at it, at a loop inside it, or nested in those), each
  // read's index in loop variables. The consumer's loops down to `at` are fixed per iteration;
  // its loops inside `at` and the loops of the stages computed there run within it.
  // Every loop's extent: a consumer computed at another stage's loop reads in that stage's loop
  // variables too, which are fixed per iteration of `at` as the consumer's outer loops are.
  std::map<const ExprNode *, int64_t> extentOf;
  std::map<const ExprNode *, Expr> loopVar;
  for (const Stage &st : stages)
    for (const Leaf &l : st.leaves) {
      extentOf[l.var.get()] = l.extent;
      loopVar[l.var.get()] = l.var;
    }
  std::set<const ExprNode *> inner;
  for (size_t i = pos + 1; i < consumer.leaves.size(); ++i)
    inner.insert(consumer.leaves[i].var.get());
  std::set<const ExprNode *> within = inner; // loops whose iterations lie inside one of `at`
  within.insert(at.get());
  // A stage's reads of the producer (through the stages inlined into it), as written.
  std::map<const Compute *, const Stage *> stageOf = stageMap(stages);
  auto readsOf = [&](const Stage &reader) {
    ReadCollector rc;
    rc.target = &p;
    rc.visitExpr(Inliner(stageOf).mutateExpr(reader.body));
    return rc.reads;
  };
  std::vector<std::vector<Expr>> reads, written; // in loop variables, and as written
  auto collect = [&](const Stage &reader) {
    for (const std::vector<Expr> &r : readsOf(reader)) {
      written.push_back(r);
      reads.push_back({});
      for (const Expr &e : r)
        reads.back().push_back(substitute(e, reader.axisValue));
    }
  };
  collect(consumer);
  std::set<const Stage *> readers{&consumer};
  for (bool grew = true; grew;) {
    grew = false;
    for (const Stage &st : stages) {
      if (&st == &producer || readers.count(&st) || !st.attachedAt ||
          !within.count(st.attachedAt.get()))
        continue;
      if (&st < &producer) // lowered in stage order, the reader would run first
        fail("schedule: compute_at of ", producer.buffer, " after ", st.buffer,
             ", which reads it, was computed at that loop");
      readers.insert(&st);
      collect(st);
      for (const Leaf &l : st.leaves) {
        inner.insert(l.var.get());
        within.insert(l.var.get());
      }
      grew = true;
    }
  }
  if (reads.empty())
    fail("schedule: ", consumer.buffer, " does not read ", producer.buffer);
  // Computed once per iteration of `at`, the producer must not be read outside it.
  for (const Stage &st : stages) {
    if (st.inlined || readers.count(&st) || &st == &producer)
      continue;
    if (!readsOf(st).empty())
      fail("schedule: compute_at of ", producer.buffer, " at ", consumer.buffer, " ", at->name,
           ": ", st.buffer, " reads it outside that loop");
  }
  producer.regionMin.clear();
  producer.region.clear();
  VarMap rename;
  for (size_t d = 0; d < p.axes.size(); ++d) {
    // Per read: the part fixed by the outer loops, and the offsets the inner loops reach.
    std::map<const ExprNode *, int64_t> outerCoef;
    std::vector<std::pair<Expr, int64_t>> outerAtoms;
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    for (size_t r = 0; r < reads.size(); ++r) {
      std::map<const ExprNode *, int64_t> coef;
      std::vector<std::pair<Expr, int64_t>> atoms;
      int64_t c = 0;
      Expr index = reads[r][d];
      // Plainly affine first (the seed-era schedules print what that gives); else with the
      // outer loops' non-affine parts (a fused loop taken apart) as terms of their own; else
      // with a row and column read back from a fused pixel axis, (p / w) * w + p % w, as p.
      auto withAtoms = [&](const Expr &e) {
        coef.clear();
        atoms.clear();
        c = 0;
        return affine(e, coef, c, &atoms, &inner);
      };
      if (!affine(index, coef, c)) {
        if (!withAtoms(index) && !withAtoms(foldDivMod(index)))
          fail("schedule: compute_at of ", producer.buffer, ": the index ",
               printExpr(written[r][d]), " is not affine in ", consumer.buffer, "'s loops");
      }
      auto byKey = [](const std::vector<std::pair<Expr, int64_t>> &v) {
        std::map<std::string, int64_t> m;
        for (const auto &[t, k] : v)
          m[exprKey(t)] += k;
        return m;
      };
      if (r > 0 && byKey(atoms) != byKey(outerAtoms))
        fail("schedule: compute_at of ", producer.buffer, ": reads at different outer positions");
      outerAtoms = atoms;
      std::map<const ExprNode *, int64_t> oc;
      int64_t rlo = c, rhi = c;
      for (const auto &[v, k] : coef) {
        if (k == 0)
          continue;
        if (!inner.count(v)) {
          oc[v] = k;
        } else {
          int64_t span = k * (extentOf.count(v) ? extentOf.at(v) - 1 : 0);
          (span < 0 ? rlo : rhi) += span;
        }
      }
      if (r > 0 && oc != outerCoef)
        fail("schedule: compute_at of ", producer.buffer, ": reads at different outer positions");
      outerCoef = oc;
      lo = std::min(lo, rlo);
      hi = std::max(hi, rhi);
    }
    Expr min = intImm(lo);
    int64_t maxMin = lo; // the largest value `min` takes
    for (const auto &[v, k] : outerCoef) {
      auto term = loopVar.find(v);
      if (term == loopVar.end())
        fail("schedule: compute_at of ", producer.buffer, ": it is read at a variable of no loop");
      min = term->second * k + min;
      maxMin += std::max<int64_t>(0, k * (extentOf.at(v) - 1));
    }
    for (const auto &[term, k] : outerAtoms) {
      if (k == 0)
        continue;
      min = term * k + min;
      std::optional<int64_t> top = maxValue(term, extentOf);
      if (!top || k < 0)
        maxMin = std::numeric_limits<int64_t>::max() / 4; // unknown: guard
      else
        maxMin += k * *top;
    }
    min = canonicalIndex(min);
    int64_t extent = hi - lo + 1;
    producer.leaves[d].extent = extent;
    producer.regionMin.push_back(min);
    producer.region.push_back(extent);
    Expr value = min + p.axes[d];
    rename.push_back({p.axes[d].get(), value});
    if (lo < 0 || maxMin + extent > p.shape[d])
      producer.guards.push_back(lt(value, intImm(p.shape[d])));
  }
  for (auto &[axis, value] : producer.axisValue)
    value = substitute(value, rename);
  producer.attachedAt = at;
  log_.push_back(producer.buffer + ": compute_at " + consumer.buffer + " " + at->name);
}

bool Schedule::isOutput(const Stage &st) const {
  return std::any_of(outputs.begin(), outputs.end(),
                     [&](const ComputeRef &o) { return o == st.tensor; });
}

void Schedule::setLocal(Stage &s) {
  if (!s.attachedAt)
    fail("schedule: ", s.buffer, " must be computed at a loop before it can be local");
  s.local = true;
  log_.push_back(s.buffer + ": storage_scope local " + shapeToList(s.region));
}

void Schedule::knob(const std::string &name, int64_t value, const std::string &why) {
  knobs_.push_back(name + " = " + std::to_string(value) + "  (" + why + ")");
}

std::string Schedule::describe() const {
  std::string out;
  for (const std::string &k : knobs_)
    out += "knob " + k + "\n";
  for (const std::string &l : log_)
    out += l + "\n";
  return out;
}

// ---------------------------------------------------------------------------------------------

Expr flatIndex(const std::vector<Expr> &indices, const Shape &shape) {
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
      body = attr(st.buffer, "storage_scope", "\"global\"",
                  allocate(st.buffer, st.tensor->dtype, st.tensor->shape, body));
    }
    if (!attached_.empty())
      fail("schedule: a stage is computed at loop ", attached_.begin()->first->name,
           ", which no longer exists (split or fused after compute_at)");
    return body;
  }

private:
  Expr inlineReads(const Expr &e) { return Inliner(stageOf_).mutateExpr(e); }

  // Remaining tensor reads become loads of their buffers.
  class LoadMaker : public IRMutator {
  public:
    explicit LoadMaker(const std::map<const Compute *, const Stage *> &stageOf)
        : stageOf_(stageOf) {}
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
    const std::map<const Compute *, const Stage *> &stageOf_;
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
  // expanded, vectorised ones that carry a guard run scalar under a `.s` name.
  Stmt nest(std::vector<Leaf> leaves, const std::vector<Expr> &guards, Stmt body) {
    for (size_t i = leaves.size(); i-- > 0;) {
      Leaf l = leaves[i];
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
      if (l.extent == 1) {
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
      body = forLoop(l.var, intImm(0), intImm(l.extent), l.kind, body);
    }
    return body;
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
    Stmt mainStmt = nest(inner, mainGuards, guarded(mainGuards, store(st.buffer, index, updated)));
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
      return constant(-largest(dtype), dtype);
    case Combiner::Min:
      return constant(largest(dtype), dtype);
    }
    return constant(0, dtype);
  }

  const Schedule &sch_;
  std::map<const Compute *, const Stage *> stageOf_;
  /// compute_at stages by loop variable: their produce statement and stage
  std::map<const ExprNode *, std::vector<std::pair<Stmt, const Stage *>>> attached_;
};

} // namespace

Stmt lower(const Schedule &s) { return Lowerer(s).run(); }

namespace {

// Floating-point arithmetic and math calls in an expression, inlined producers included.
class FlopCounter : public IRVisitor {
public:
  explicit FlopCounter(const std::map<const Compute *, const Stage *> &stageOf)
      : stageOf_(stageOf) {}
  int64_t count = 0;
  void visitExpr(const Expr &e) override {
    if (e->kind == ExprKind::TensorRead) {
      auto it = stageOf_.find(e->tensor.get());
      if (it != stageOf_.end() && it->second->inlined)
        visitExpr(it->second->body);
    } else if ((e->kind == ExprKind::Binary && e->op <= BinOp::Max && e->op != BinOp::Mod &&
                e->dtype != kBool && dtypeIsFloat(e->dtype)) ||
               (e->kind == ExprKind::Call && dtypeIsFloat(e->dtype) &&
                e->name != "tvm_if_then_else" && e->name != "likely")) {
      ++count;
    }
    IRVisitor::visitExpr(e);
  }

private:
  const std::map<const Compute *, const Stage *> &stageOf_;
};

} // namespace

int64_t countFlops(const Schedule &s) {
  std::map<const Compute *, const Stage *> stageOf;
  for (const Stage &st : s.stages)
    stageOf[st.tensor.get()] = &st;
  int64_t total = 0;
  for (const Stage &st : s.stages) {
    if (st.inlined)
      continue;
    const Expr &body = st.body;
    FlopCounter c(stageOf);
    c.visitExpr(body);
    int64_t per = c.count, extent = numElements(st.tensor->shape);
    if (body->kind == ExprKind::Reduce) {
      per += 1; // the combine
      for (const IterVar &r : body->reduceAxes)
        extent *= r.extent;
    }
    total += per * extent;
  }
  return total;
}

} // namespace loupe::backend
