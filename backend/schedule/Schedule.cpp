// Schedule: TVM's schedule primitives over compute stages (split, fuse, reorder, parallel,
// vectorize, unroll, compute_inline), the steps they record, and the flops a schedule computes.
#include "backend/schedule/Schedule.h"

#include "backend/schedule/Stages.h"
#include "core/DType.h"
#include "core/Error.h"
#include "core/Shape.h"
#include "core/loop/SizeVars.h"
#include "core/loop/Visitor.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace loupe::backend {

using namespace loop;

Expr leafExtent(const Leaf &l) { return l.size ? l.size : intImm(l.extent); }

Leaf axisLeaf(const Expr &axis, const Shape &shape, size_t d) {
  Expr size = dimExtent(shape, d);
  return {axis, shape[d], ForKind::Serial, false, size->kind == ExprKind::IntImm ? nullptr : size};
}

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
      s.leaves.push_back(axisLeaf(t->axes[d], t->shape, d));
      s.axisValue.push_back({t->axes[d].get(), t->axes[d]});
    }
    if (t->body->kind == ExprKind::Reduce)
      for (const IterVar &r : t->body->reduceAxes) {
        s.leaves.push_back({r.var, r.extent, ForKind::Serial, true, r.size});
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
  explicit Inliner(const StageMap &stageOf) : stageOf_(stageOf) {}
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
  const StageMap &stageOf_;
};

void rewriteAxes(Stage &s, const VarMap &m) {
  for (auto &[axis, value] : s.axisValue)
    value = substitute(value, m);
  for (Expr &g : s.guards)
    g = substitute(g, m);
}

} // namespace

StageMap stageMap(const std::vector<Stage> &stages) {
  StageMap m;
  for (const Stage &st : stages)
    m[st.tensor.get()] = &st;
  return m;
}

Expr inlineStages(const Expr &e, const StageMap &stageOf) { return Inliner(stageOf).mutateExpr(e); }

std::pair<Expr, Expr> Schedule::split(Stage &s, Expr v, int64_t factor) {
  if (factor <= 0)
    fail("schedule: split factor must be positive, got ", factor);
  size_t pos;
  Leaf l = findLeaf(s, v, &pos);
  Expr outer = var(v->name + ".outer"), inner = var(v->name + ".inner");
  Expr value = outer * factor + inner;
  s.leaves[pos] = {inner, factor, ForKind::Serial, l.reduce};
  // A symbolic extent is split into ceil(E / factor) tiles, the last one guarded unless the
  // factor is 1 or divides it (an extent padded to a multiple, `n * c`): whether it divides is
  // otherwise known only at run time.
  int64_t c = 0;
  bool divides = l.size && l.size->kind == ExprKind::Binary && l.size->op == BinOp::Mul &&
                 constValue(l.size->args[1], &c) && c % factor == 0;
  if (divides)
    s.leaves.insert(s.leaves.begin() + pos,
                    {outer, 0, ForKind::Serial, l.reduce,
                     c == factor ? l.size->args[0] : l.size->args[0] * (c / factor)});
  else if (l.size)
    s.leaves.insert(s.leaves.begin() + pos,
                    {outer, 0, ForKind::Serial, l.reduce,
                     factor == 1 ? l.size : (l.size + (factor - 1)) / factor});
  else
    s.leaves.insert(s.leaves.begin() + pos,
                    {outer, (l.extent + factor - 1) / factor, ForKind::Serial, l.reduce});
  rewriteAxes(s, {{v.get(), value}});
  if (l.size ? factor != 1 && !divides : l.extent % factor != 0)
    s.guards.push_back(lt(value, leafExtent(l)));
  log_.push_back(s.buffer + ": split " + v->name + " by " + std::to_string(factor));
  return {outer, inner};
}

std::pair<Expr, Expr> Schedule::splitTiles(Stage &s, Expr v, int64_t factor) {
  const Leaf &l = findLeaf(s, v, nullptr);
  // A symbolic extent may be smaller than one tile: its tail is guarded instead of shifted.
  return l.size || l.extent % factor == 0 ? split(s, v, factor) : splitShifted(s, v, factor);
}

std::pair<Expr, Expr> Schedule::splitShifted(Stage &s, Expr v, int64_t factor) {
  size_t pos;
  Leaf l = findLeaf(s, v, &pos);
  if (l.size)
    fail("schedule: a shifted split of ", v->name, " needs a constant extent, not ",
         printExpr(l.size));
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
  if (la.size || lb.size)
    s.leaves[pa] = {fused, 0, ForKind::Serial, la.reduce, leafExtent(la) * leafExtent(lb)};
  else
    s.leaves[pa] = {fused, la.extent * lb.extent, ForKind::Serial, la.reduce};
  s.leaves.erase(s.leaves.begin() + pb);
  if (lb.size)
    rewriteAxes(s, {{a.get(), fused / lb.size}, {b.get(), fused % lb.size}});
  else
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
  Leaf &l = findLeaf(s, v, nullptr);
  if (l.size)
    fail("schedule: cannot vectorize ", v->name, ": its extent ", printExpr(l.size),
         " is symbolic");
  l.kind = ForKind::Vectorized;
  log_.push_back(s.buffer + ": vectorize " + v->name);
}

void Schedule::unroll(Stage &s, Expr v) {
  Leaf &l = findLeaf(s, v, nullptr);
  if (l.size)
    fail("schedule: cannot unroll ", v->name, ": its extent ", printExpr(l.size), " is symbolic");
  l.kind = ForKind::Unrolled;
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

void Schedule::skipUpdatesOutside(Stage &s, loop::Expr cond, const std::string &why) {
  if (!s.body || s.body->kind != loop::ExprKind::Reduce)
    fail("schedule: ", s.buffer, " is not a reduction; only its updates can be skipped");
  log_.push_back(s.buffer + ": updates only where " + loop::printExpr(cond) + " (" + why + ")");
  s.updateWithin.push_back(std::move(cond));
}

void Schedule::knob(const std::string &name, int64_t value, const std::string &why) {
  knobs_.push_back(name + " = " + std::to_string(value) + "  (" + why + ")");
}

int64_t Schedule::define(const std::string &name, std::vector<int64_t> candidates, int64_t rule,
                         const std::string &doc) {
  if (space.find(name))
    fail("schedule: knob ", name, " is declared twice");
  candidates.push_back(rule);
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  space.knobs.push_back({name, candidates, rule, doc});
  if (config)
    if (auto it = config->find(name);
        it != config->end() &&
        std::find(candidates.begin(), candidates.end(), it->second) != candidates.end())
      return it->second;
  return rule;
}

void Schedule::limit(std::vector<std::string> knobs, int64_t cap) {
  space.limits.push_back({std::move(knobs), cap});
}

std::string Schedule::describe() const {
  std::string out;
  if (!configSource.empty())
    out += "tuned: " + configSource + "\n";
  for (const std::string &k : knobs_)
    out += "knob " + k + "\n";
  for (const std::string &l : log_)
    out += l + "\n";
  return out;
}

namespace {

// Walks an expression with the reads of inlined stages followed into their bodies, calling `at`
// for each expression with the node of the stage it belongs to: a stage's code by node.
class ByNode : public IRVisitor {
public:
  using Visit = std::function<void(const Expr &, const std::string &node)>;
  ByNode(const StageMap &stageOf, std::string node, Visit at)
      : stageOf_(stageOf), node_(std::move(node)), at_(std::move(at)) {}
  void visitExpr(const Expr &e) override {
    if (e->kind == ExprKind::TensorRead) {
      auto it = stageOf_.find(e->tensor.get());
      if (it != stageOf_.end() && it->second->inlined) {
        std::string outer = node_;
        node_ = e->tensor->node;
        visitExpr(it->second->body);
        node_ = outer;
      }
    }
    at_(e, node_);
    IRVisitor::visitExpr(e);
  }

private:
  const StageMap &stageOf_;
  std::string node_;
  Visit at_;
};

// Whether `e` is a tensor's value (a read, possibly converted), not index arithmetic.
bool isValue(const Expr &e) {
  return e->kind == ExprKind::TensorRead ||
         (e->kind == ExprKind::Cast && e->args[0]->kind == ExprKind::TensorRead);
}

// The operations `e` counts: floating-point arithmetic and math calls (not index arithmetic, not
// padding selects; dot2's two products and their sum), and integer products of tensor values — a
// quantized kernel's multiplies, dot4's four and the three adds between them — so that integer
// kernels report GOP/s as float kernels report GFLOP/s.
int64_t opsOf(const Expr &e, bool integerOnly = false) {
  if (integerOnly && dtypeIsFloat(e->dtype))
    return 0;
  if (e->kind == ExprKind::Binary && e->op <= BinOp::Max && e->op != BinOp::Mod &&
      e->dtype != kBool)
    return dtypeIsFloat(e->dtype) ||
           (e->op == BinOp::Mul && isValue(e->args[0]) && isValue(e->args[1]));
  if (e->kind == ExprKind::Call && e->name == "dot4")
    return 7;
  if (e->kind == ExprKind::Call && e->name == "dot2") // two products and their sum
    return integerOnly ? 0 : 3;
  return e->kind == ExprKind::Call && dtypeIsFloat(e->dtype) && e->name != "tvm_if_then_else" &&
         e->name != "likely";
}

// A generic kernel's extent at `sizes` (its size symbols' values); 0 when one is unbound.
int64_t boundExtent(const Expr &size, const SymBindings &sizes) {
  VarMap values;
  for (const auto &[name, v] : sizes)
    values.push_back({sizeVar(name).get(), intImm(v)});
  int64_t n = 0;
  return constValue(substitute(size, values), &n) ? n : 0;
}

// The operations of every stage by graph node (integerOnly: the integer ones); a generic
// kernel's at `sizes`.
std::map<std::string, int64_t> countOpsByNode(const Schedule &s, bool integerOnly,
                                              const SymBindings &sizes) {
  StageMap stageOf = stageMap(s.stages);
  std::map<std::string, int64_t> total;
  for (const Stage &st : s.stages) {
    if (st.inlined)
      continue;
    const Expr &body = st.body;
    std::map<std::string, int64_t> count;
    ByNode(stageOf, st.tensor->node, [&](const Expr &e, const std::string &node) {
      count[node] += opsOf(e, integerOnly);
    }).visitExpr(body);
    int64_t extent = numElements(st.tensor->shape.bound(sizes));
    if (body->kind == ExprKind::Reduce) {
      count[st.tensor->node] += !integerOnly || !dtypeIsFloat(body->dtype); // the combine
      for (const IterVar &r : body->reduceAxes)
        extent *= r.size ? boundExtent(r.size, sizes) : r.extent;
    }
    for (const auto &[node, per] : count)
      if (per)
        total[node] += per * extent;
  }
  return total;
}

} // namespace

std::map<std::string, int64_t> countFlopsByNode(const Schedule &s, const SymBindings &sizes) {
  return countOpsByNode(s, false, sizes);
}

int64_t countIntegerOps(const Schedule &s, const SymBindings &sizes) {
  int64_t total = 0;
  for (const auto &[node, ops] : countOpsByNode(s, true, sizes))
    total += ops;
  return total;
}

int64_t countFlops(const Schedule &s, const SymBindings &sizes) {
  int64_t total = 0;
  for (const auto &[node, flops] : countFlopsByNode(s, sizes))
    total += flops;
  return total;
}

int64_t longestReduction(const Schedule &s) {
  int64_t longest = 1;
  for (const Stage &st : s.stages) {
    if (st.tensor->placeholder || st.body->kind != ExprKind::Reduce)
      continue;
    int64_t terms = 1;
    for (const IterVar &r : st.body->reduceAxes)
      terms *= r.extent;
    longest = std::max(longest, terms);
  }
  return longest;
}

std::map<std::string, std::vector<std::string>>
nodesByBuffer(const Schedule &s, const std::vector<std::string> &order) {
  StageMap stageOf = stageMap(s.stages);
  std::map<std::string, std::vector<std::string>> out;
  for (const Stage &st : s.stages) {
    if (st.inlined || st.tensor->placeholder)
      continue;
    std::set<std::string> names;
    ByNode(stageOf, st.tensor->node, [&](const Expr &, const std::string &node) {
      if (!node.empty())
        names.insert(node);
    }).visitExpr(st.body);
    std::vector<std::string> &list = out[st.buffer];
    for (const std::string &n : order)
      if (names.count(n))
        list.push_back(n);
  }
  return out;
}
} // namespace loupe::backend
