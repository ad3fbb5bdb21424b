// Bounds: compute_at and the bound inference it rests on — the region of a producer that one
// iteration of a consumer's loop reads, from the affine reads of the stages computed there.
#include "backend/schedule/Schedule.h"

#include "backend/schedule/Stages.h"
#include "core/Error.h"
#include "core/loop/SizeVars.h"
#include "core/loop/Visitor.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace loupe::backend {

using namespace loop;

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
  // A symbolic loop (a generic kernel's rows) has no constant extent: it may be fixed per
  // iteration (the region's start moves with it, and the region is guarded against the
  // symbolic size), never one the region spans.
  std::map<const ExprNode *, int64_t> extentOf;
  std::map<const ExprNode *, Expr> loopVar;
  std::set<const ExprNode *> symbolicLoops;
  for (const Stage &st : stages)
    for (const Leaf &l : st.leaves) {
      if (l.size)
        symbolicLoops.insert(l.var.get());
      else
        extentOf[l.var.get()] = l.extent;
      loopVar[l.var.get()] = l.var;
    }
  std::set<const ExprNode *> inner;
  for (size_t i = pos + 1; i < consumer.leaves.size(); ++i)
    inner.insert(consumer.leaves[i].var.get());
  std::set<const ExprNode *> within = inner; // loops whose iterations lie inside one of `at`
  within.insert(at.get());
  // A stage's reads of the producer (through the stages inlined into it), as written.
  StageMap stageOf = stageMap(stages);
  auto readsOf = [&](const Stage &reader) {
    ReadCollector rc;
    rc.target = &p;
    rc.visitExpr(inlineStages(reader.body, stageOf));
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
        } else if (symbolicLoops.count(v)) {
          fail("schedule: compute_at of ", producer.buffer, ": its region spans the symbolic loop ",
               loopVar.at(v)->name);
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
      if (symbolicLoops.count(v))
        maxMin = std::numeric_limits<int64_t>::max() / 4; // unknown: guard
      else
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
    producer.leaves[d].size = nullptr;
    producer.regionMin.push_back(min);
    producer.region.push_back(extent);
    Expr value = min + p.axes[d];
    rename.push_back({p.axes[d].get(), value});
    Expr size = dimExtent(p.shape, d);
    if (size->kind != ExprKind::IntImm || lo < 0 || maxMin + extent > p.shape[d])
      producer.guards.push_back(lt(value, size));
  }
  for (auto &[axis, value] : producer.axisValue)
    value = substitute(value, rename);
  producer.attachedAt = at;
  log_.push_back(producer.buffer + ": compute_at " + consumer.buffer + " " + at->name);
}
} // namespace loupe::backend
