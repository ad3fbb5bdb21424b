// PartitionLoops: loops split where the bounds tests of their lazy selects are decided, and
// loop-invariant tests hoisted out of loop bodies.
#include "backend/loop/PartitionLoops.h"

#include "core/DType.h"
#include "core/loop/Visitor.h"

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

namespace loupe::loop {

namespace {

bool isInt(const Expr &e) { return e->dtype != kBool && !dtypeIsFloat(e->dtype); }

bool isLazySelect(const Expr &e) {
  return e->kind == ExprKind::Call && e->name == "tvm_if_then_else";
}

bool boolConst(const Expr &e, bool *v) {
  if (e->kind != ExprKind::IntImm || e->dtype != kBool)
    return false;
  *v = e->intValue != 0;
  return true;
}

// Interval arithmetic that gives up (nothing) on overflow.
std::optional<Interval> combine(BinOp op, Interval a, Interval b) {
  int64_t c[4];
  switch (op) {
  case BinOp::Add:
    if (__builtin_add_overflow(a.lo, b.lo, &c[0]) || __builtin_add_overflow(a.hi, b.hi, &c[1]))
      return std::nullopt;
    return Interval{c[0], c[1]};
  case BinOp::Sub:
    if (__builtin_sub_overflow(a.lo, b.hi, &c[0]) || __builtin_sub_overflow(a.hi, b.lo, &c[1]))
      return std::nullopt;
    return Interval{c[0], c[1]};
  case BinOp::Mul:
    if (__builtin_mul_overflow(a.lo, b.lo, &c[0]) || __builtin_mul_overflow(a.lo, b.hi, &c[1]) ||
        __builtin_mul_overflow(a.hi, b.lo, &c[2]) || __builtin_mul_overflow(a.hi, b.hi, &c[3]))
      return std::nullopt;
    return Interval{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
  case BinOp::Div: // truncating division by a positive constant is monotonic
    if (b.lo != b.hi || b.lo <= 0)
      return std::nullopt;
    return Interval{a.lo / b.lo, a.hi / b.lo};
  case BinOp::Mod: {
    if (b.lo != b.hi || b.lo <= 0)
      return std::nullopt;
    int64_t k = b.lo;
    if (a.lo >= 0)
      return a.lo / k == a.hi / k ? Interval{a.lo % k, a.hi % k} : Interval{0, k - 1};
    // Truncating: the remainder takes the dividend's sign.
    return Interval{std::max(a.lo, 1 - k), a.hi >= 0 ? std::min(a.hi, k - 1) : 0};
  }
  case BinOp::Min:
    return Interval{std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
  case BinOp::Max:
    return Interval{std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
  default:
    return std::nullopt;
  }
}

bool contains(const std::vector<Expr> &set, const Expr &e) {
  return std::any_of(set.begin(), set.end(), [&](const Expr &x) { return sameExpr(x, e); });
}

bool hasLazySelect(const Expr &e) {
  return e && (isLazySelect(e) || std::any_of(e->args.begin(), e->args.end(),
                                              [](const Expr &a) { return hasLazySelect(a); }));
}

bool hasLazySelect(const Stmt &s) {
  return s && (hasLazySelect(s->a) || hasLazySelect(s->b) ||
               std::any_of(s->body.begin(), s->body.end(),
                           [](const Stmt &c) { return hasLazySelect(c); }));
}

// The conjuncts of every lazy select's condition in a statement, each once, with how many
// selects test each.
struct TestCollector : IRVisitor {
  std::vector<Expr> tests;
  std::vector<int> uses;
  void visitExpr(const Expr &e) override {
    if (isLazySelect(e)) {
      std::vector<Expr> cs;
      conjuncts(e->args[0], &cs);
      for (const Expr &c : cs) {
        size_t i = 0;
        while (i < tests.size() && !sameExpr(tests[i], c))
          ++i;
        if (i == tests.size()) {
          tests.push_back(c);
          uses.push_back(0);
        }
        ++uses[i];
      }
    }
    IRVisitor::visitExpr(e);
  }
};

// The constant ranges of the loops inside a statement, every variable it binds, its stores.
struct BindingCollector : IRVisitor {
  VarRanges ranges;
  std::set<const ExprNode *> bound;
  size_t stores = 0;
  void visitStmt(const Stmt &s) override {
    int64_t m, e;
    if (s->kind == StmtKind::For || s->kind == StmtKind::LetStmt)
      bound.insert(s->var.get());
    if (s->kind == StmtKind::For && constValue(s->a, &m) && constValue(s->b, &e) && e > 0)
      ranges[s->var.get()] = {m, m + e - 1};
    if (s->kind == StmtKind::Store)
      ++stores;
    IRVisitor::visitStmt(s);
  }
};

// Whether an expression is integer arithmetic on variables and constants only (no loads or
// calls, whose values the body could change).
bool pureIndex(const Expr &e) {
  if (e->kind == ExprKind::Load || e->kind == ExprKind::Call || e->kind == ExprKind::TensorRead ||
      e->kind == ExprKind::Reduce)
    return false;
  return std::all_of(e->args.begin(), e->args.end(), [](const Expr &a) { return pureIndex(a); });
}

/// Rewrites lazy selects whose conditions the ranges of the enclosing loops (or tests known
/// to hold or fail) decide.
class Simplifier : public IRMutator {
public:
  Simplifier(VarRanges ranges, std::vector<Expr> holds, std::vector<Expr> fails = {})
      : ranges_(std::move(ranges)), holds_(std::move(holds)), fails_(std::move(fails)) {}

  Expr mutateExpr(const Expr &e) override {
    if (e->kind == ExprKind::Binary && (e->op == BinOp::Div || e->op == BinOp::Mod))
      return divMod(IRMutator::mutateExpr(e));
    if (!isLazySelect(e))
      return IRMutator::mutateExpr(e);
    Expr c = condition(e->args[0]);
    bool v;
    // Undecided: its index arithmetic simplified under the ranges may decide it, or show that
    // it does not depend on an inner vector lane (a fused loop's (q·512 + lane)/512).
    if (!boolConst(c, &v)) {
      Expr simpler = IRMutator::mutateExpr(c);
      if (simpler != c)
        c = condition(simpler);
    }
    if (boolConst(c, &v))
      return mutateExpr(e->args[v ? 1 : 2]);
    Expr a = mutateExpr(e->args[1]), b = mutateExpr(e->args[2]);
    if (c == e->args[0] && a == e->args[1] && b == e->args[2])
      return e;
    return withArgs(e, {c, a, b});
  }

  Stmt mutateStmt(const Stmt &s) override {
    int64_t m, n;
    if (s->kind != StmtKind::For || !constValue(s->a, &m) || !constValue(s->b, &n) || n <= 0)
      return IRMutator::mutateStmt(s);
    ranges_[s->var.get()] = {m, m + n - 1};
    Stmt out = IRMutator::mutateStmt(s);
    ranges_.erase(s->var.get());
    return out;
  }

private:
  // (q·c + r) / c as q and (q·c + r) % c as r, for a constant c > 0, where the terms of the
  // dividend with a multiple of c as their factor make q and the rest r, when the ranges
  // bound r to [0, c) and the dividend to 0 or more (where / and % of C and of floor agree);
  // and (a·k + r) with k a divisor of c likewise (below).
  Expr divMod(const Expr &e) {
    int64_t c;
    if (e->kind != ExprKind::Binary || !isInt(e) || !constValue(e->args[1], &c) || c <= 0)
      return e;
    std::vector<Expr> terms;
    std::function<void(const Expr &)> flatten = [&](const Expr &x) {
      if (x->kind == ExprKind::Binary && x->op == BinOp::Add) {
        flatten(x->args[0]);
        flatten(x->args[1]);
      } else {
        terms.push_back(x);
      }
    };
    flatten(e->args[0]);
    Expr q, r;
    auto add = [](Expr &sum, const Expr &t) { sum = sum ? sum + t : t; };
    for (const Expr &t : terms) {
      int64_t k;
      if (constValue(t, &k) && k % c == 0)
        add(q, intImm(k / c, t->dtype));
      else if (t->kind == ExprKind::Binary && t->op == BinOp::Mul && constValue(t->args[1], &k) &&
               k % c == 0)
        add(q, k == c ? t->args[0] : t->args[0] * intImm(k / c, t->dtype));
      else
        add(r, t);
    }
    std::optional<Interval> all = boundsOf(e->args[0], ranges_);
    if (!r || !all || all->lo < 0)
      return e;
    std::optional<Interval> rb = boundsOf(r, ranges_);
    if (q && rb && rb->lo >= 0 && rb->hi < c)
      return e->op == BinOp::Div ? q : r;
    // (a·k + r) with k dividing c and r in [0, k) (a fused row index times its width plus the
    // lane): / c is a / (c/k), % c is (a % (c/k))·k + r.
    int64_t k;
    if (q || r->kind != ExprKind::Binary || r->op != BinOp::Add)
      return e;
    for (int side : {0, 1}) {
      const Expr &t = r->args[side], &rest = r->args[1 - side];
      if (t->kind != ExprKind::Binary || t->op != BinOp::Mul || !constValue(t->args[1], &k) ||
          k <= 1 || k >= c || c % k != 0)
        continue;
      std::optional<Interval> restB = boundsOf(rest, ranges_), aB = boundsOf(t->args[0], ranges_);
      if (!restB || !aB || restB->lo < 0 || restB->hi >= k || aB->lo < 0)
        continue;
      Expr per = intImm(c / k, e->dtype);
      return e->op == BinOp::Div ? t->args[0] / per : (t->args[0] % per) * t->args[1] + rest;
    }
    return e;
  }

  Expr condition(const Expr &c) {
    if (contains(holds_, c))
      return boolImm(true);
    if (contains(fails_, c))
      return boolImm(false);
    if (std::optional<bool> d = decide(c, ranges_))
      return boolImm(*d);
    if (c->kind == ExprKind::Call && c->name == "likely") {
      Expr inner = condition(c->args[0]);
      bool v;
      if (boolConst(inner, &v))
        return inner;
      return inner == c->args[0] ? c : call("likely", {inner}, kBool);
    }
    if (c->kind != ExprKind::Binary || (c->op != BinOp::And && c->op != BinOp::Or))
      return c;
    bool isAnd = c->op == BinOp::And;
    Expr l = condition(c->args[0]), r = condition(c->args[1]);
    bool lv, rv;
    // A decided side either decides the whole (false for and, true for or) or drops out.
    if (boolConst(l, &lv))
      return lv == isAnd ? r : l;
    if (boolConst(r, &rv))
      return rv == isAnd ? l : r;
    if (l == c->args[0] && r == c->args[1])
      return c;
    return isAnd ? land(l, r) : lor(l, r);
  }

  VarRanges ranges_;
  std::vector<Expr> holds_, fails_;
};

/// Largest loop whose iterations are examined one by one for a partition.
constexpr int64_t kMaxPartitionExtent = 4096;
/// Largest body (in stores) duplicated by hoisting a test out of it.
constexpr size_t kMaxUnswitchStores = 4096;

class Partitioner {
public:
  Stmt visit(const Stmt &s) {
    if (!hasLazySelect(s)) // most of a convolution's loops: nothing to do below
      return s;
    if (s->kind != StmtKind::For)
      return visitChildren(s);
    int64_t m, n;
    if (!constValue(s->a, &m) || !constValue(s->b, &n) || n <= 0)
      return visitChildren(s);
    if (s->forKind == ForKind::Serial && n >= 2 && n <= kMaxPartitionExtent) {
      Split split = partition(*s, {m, m + n - 1});
      if (!split.holds.empty() || !split.fails.empty())
        return emit(*s, split);
    }
    return visitBody(s, m, n);
  }

private:
  /// How a loop splits: its pieces, and the tests decided on the steady one.
  struct Split {
    std::vector<Interval> pieces;
    size_t steady = 0;
    std::vector<Expr> holds, fails;
  };

  // A loop kept whole: its body simplified under the loop's range, visited, and unswitched.
  Stmt visitBody(const Stmt &s, int64_t m, int64_t n) {
    ranges_[s->var.get()] = {m, m + n - 1};
    Stmt body = Simplifier(ranges_, {}).mutateStmt(s->body[0]);
    body = visit(body);
    if (s->forKind != ForKind::Vectorized && s->forKind != ForKind::Scalarized)
      body = unswitch(s->var.get(), body);
    ranges_.erase(s->var.get());
    if (body == s->body[0])
      return s;
    auto out = std::make_shared<StmtNode>(*s);
    out->body = {body};
    return out;
  }

  Stmt visitChildren(const Stmt &s) {
    bool changed = false;
    std::vector<Stmt> body;
    for (const Stmt &c : s->body) {
      body.push_back(c ? visit(c) : c);
      changed |= body.back() != c;
    }
    if (!changed)
      return s;
    auto out = std::make_shared<StmtNode>(*s);
    out->body = std::move(body);
    return out;
  }

  // The iteration ranges a loop splits into: the longest run of iterations on which every
  // test of its variable is decided, and the same way, with the iterations before and after;
  // the whole loop when that run is less than half of it.
  Split partition(const StmtNode &loop, Interval whole) {
    Split split{{whole}, 0, {}, {}};
    BindingCollector inner;
    inner.visitStmt(loop.body[0]);
    VarRanges ranges = ranges_;
    for (const auto &[v, r] : inner.ranges)
      ranges[v] = r;
    const ExprNode *v = loop.var.get();
    ranges[v] = whole;
    TestCollector found;
    found.visitStmt(loop.body[0]);
    std::vector<Expr> tests;
    for (const Expr &t : found.tests)
      if (usesVar(t, v) && !decide(t, ranges))
        tests.push_back(t);
    if (tests.empty())
      return split;
    // Per iteration, each test's outcome: 1 holds, 0 fails, -1 undecided.
    int64_t n = whole.hi - whole.lo + 1;
    std::vector<std::vector<int8_t>> outcome(static_cast<size_t>(n));
    for (int64_t x = 0; x < n; ++x) {
      ranges[v] = {whole.lo + x, whole.lo + x};
      for (const Expr &t : tests) {
        std::optional<bool> d = decide(t, ranges);
        outcome[x].push_back(d ? static_cast<int8_t>(*d) : int8_t{-1});
      }
    }
    int64_t bestLo = 0, bestLen = 0;
    for (int64_t i = 0; i < n;) {
      int64_t j = i + 1;
      while (j < n && outcome[j] == outcome[i])
        ++j;
      bool decided = std::find(outcome[i].begin(), outcome[i].end(), -1) == outcome[i].end();
      if (decided && j - i > bestLen) {
        bestLo = i;
        bestLen = j - i;
      }
      i = j;
    }
    // A steady run shorter than half the loop is not worth a copy of the body per piece (a
    // 3x3 kernel's row taps: only the middle one is decided; unswitching serves them better).
    if (bestLen == 0 || 2 * bestLen < n)
      return split;
    for (size_t k = 0; k < tests.size(); ++k)
      (outcome[bestLo][k] ? split.holds : split.fails).push_back(tests[k]);
    split.pieces.clear();
    if (bestLo > 0)
      split.pieces.push_back({whole.lo, whole.lo + bestLo - 1});
    split.steady = split.pieces.size();
    split.pieces.push_back({whole.lo + bestLo, whole.lo + bestLo + bestLen - 1});
    if (bestLo + bestLen < n)
      split.pieces.push_back({whole.lo + bestLo + bestLen, whole.hi});
    return split;
  }

  // The loop as consecutive loops over its pieces, each with a variable of its own; the steady
  // piece without the tests it decides. The border pieces are visited again: their first or
  // last iterations may still differ (each is shorter than the loop, so this ends).
  Stmt emit(const StmtNode &s, const Split &split) {
    std::vector<Stmt> loops;
    for (size_t k = 0; k < split.pieces.size(); ++k) {
      const Interval &p = split.pieces[k];
      Stmt body = s.body[0];
      if (k == split.steady)
        body = Simplifier({}, split.holds, split.fails).mutateStmt(body);
      Expr v = var(s.var->name, s.var->dtype);
      body = substitute(body, {{s.var.get(), v}});
      Stmt piece = forLoop(v, intImm(p.lo, s.a->dtype), intImm(p.hi - p.lo + 1, s.b->dtype),
                           s.forKind, body);
      loops.push_back(k == split.steady ? visitBody(piece, p.lo, p.hi - p.lo + 1) : visit(piece));
    }
    return seq(std::move(loops));
  }

  // `if (tests) body-without-them else body` for the tests of `v` that nothing in the body
  // changes, when at least two lazy selects use them.
  Stmt unswitch(const ExprNode *v, const Stmt &body) {
    BindingCollector inside;
    inside.visitStmt(body);
    if (inside.stores > kMaxUnswitchStores)
      return body;
    TestCollector found;
    found.visitStmt(body);
    std::vector<Expr> hoisted;
    int selects = 0;
    for (size_t i = 0; i < found.tests.size(); ++i) {
      const Expr &t = found.tests[i];
      if (!usesVar(t, v) || usesAnyVar(t, inside.bound) || !pureIndex(t) || decide(t, ranges_))
        continue;
      hoisted.push_back(t);
      selects = std::max(selects, found.uses[i]);
    }
    if (hoisted.empty() || selects < 2)
      return body;
    Expr all = hoisted[0];
    for (size_t i = 1; i < hoisted.size(); ++i)
      all = land(all, hoisted[i]);
    Stmt fast = Simplifier(ranges_, hoisted).mutateStmt(body);
    return ifThenElse(all, fast, body);
  }

  VarRanges ranges_; ///< the enclosing loops' variables
};

} // namespace

std::optional<Interval> boundsOf(const Expr &e, const VarRanges &ranges) {
  switch (e->kind) {
  case ExprKind::IntImm:
    if (!isInt(e))
      return std::nullopt;
    return Interval{e->intValue, e->intValue};
  case ExprKind::Var: {
    auto it = ranges.find(e.get());
    if (it == ranges.end())
      return std::nullopt;
    return it->second;
  }
  case ExprKind::Binary: {
    if (!isInt(e) || !isInt(e->args[0]) || !isInt(e->args[1]))
      return std::nullopt;
    std::optional<Interval> a = boundsOf(e->args[0], ranges);
    std::optional<Interval> b = a ? boundsOf(e->args[1], ranges) : std::nullopt;
    if (!b)
      return std::nullopt;
    return combine(e->op, *a, *b);
  }
  default:
    return std::nullopt;
  }
}

std::optional<bool> decide(const Expr &c, const VarRanges &ranges) {
  bool v;
  if (boolConst(c, &v))
    return v;
  if (c->kind == ExprKind::Not) {
    std::optional<bool> d = decide(c->args[0], ranges);
    return d ? std::optional<bool>(!*d) : std::nullopt;
  }
  if (c->kind == ExprKind::Call && c->name == "likely")
    return decide(c->args[0], ranges);
  if (c->kind != ExprKind::Binary)
    return std::nullopt;
  if (c->op == BinOp::And || c->op == BinOp::Or) {
    bool isAnd = c->op == BinOp::And;
    std::optional<bool> l = decide(c->args[0], ranges), r = decide(c->args[1], ranges);
    // and: false if either side is; or: true if either side is.
    if ((l && *l != isAnd) || (r && *r != isAnd))
      return !isAnd;
    if (l && r)
      return isAnd;
    return std::nullopt;
  }
  if (c->op < BinOp::EQ || !isInt(c->args[0]) || !isInt(c->args[1]))
    return std::nullopt;
  std::optional<Interval> a = boundsOf(c->args[0], ranges);
  std::optional<Interval> b = a ? boundsOf(c->args[1], ranges) : std::nullopt;
  if (!b)
    return std::nullopt;
  auto when = [](bool holds, bool fails) -> std::optional<bool> {
    if (holds)
      return true;
    if (fails)
      return false;
    return std::nullopt;
  };
  switch (c->op) {
  case BinOp::LT:
    return when(a->hi < b->lo, a->lo >= b->hi);
  case BinOp::LE:
    return when(a->hi <= b->lo, a->lo > b->hi);
  case BinOp::GT:
    return when(a->lo > b->hi, a->hi <= b->lo);
  case BinOp::GE:
    return when(a->lo >= b->hi, a->hi < b->lo);
  case BinOp::EQ:
  case BinOp::NE: {
    bool equal = a->lo == a->hi && b->lo == b->hi && a->lo == b->lo;
    bool apart = a->hi < b->lo || b->hi < a->lo;
    return c->op == BinOp::EQ ? when(equal, apart) : when(apart, equal);
  }
  default:
    return std::nullopt;
  }
}

Stmt partitionLoops(const Stmt &s) { return s ? Partitioner().visit(s) : s; }

Stmt simplifyIndices(const Stmt &s) { return s ? Simplifier({}, {}).mutateStmt(s) : s; }

} // namespace loupe::loop
