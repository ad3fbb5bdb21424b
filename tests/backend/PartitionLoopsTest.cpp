// PartitionLoopsTest: interval bounds and decided tests worked by hand, and padded loops split
// and unswitched into loops without their bounds tests that compute the same values.
#include "backend/loop/PartitionLoops.h"
#include "core/loop/Eval.h"
#include "core/loop/Visitor.h"

#include <gtest/gtest.h>

using namespace loupe::loop;

namespace {

int lazySelects(const Stmt &s) {
  struct Counter : IRVisitor {
    int n = 0;
    void visitExpr(const Expr &e) override {
      n += e->kind == ExprKind::Call && e->name == "tvm_if_then_else";
      IRVisitor::visitExpr(e);
    }
  } c;
  c.visitStmt(s);
  return c.n;
}

Expr lazy(Expr cond, Expr a, Expr b) { return call("tvm_if_then_else", {cond, a, b}, a->dtype); }

Buffers inputs(int64_t n, int64_t taps) {
  Buffers b;
  b["in"] = {0, {}};
  for (int64_t i = 0; i < n; ++i)
    b["in"].data.push_back(0.25 * static_cast<double>(i * i % 7) - 0.5);
  b["wt"] = {0, {}};
  for (int64_t k = 0; k < taps; ++k)
    b["wt"].data.push_back(1.5 - 0.75 * static_cast<double>(k));
  return b;
}

} // namespace

TEST(PartitionLoops, IntervalsAndDecisionsWorkedByHand) {
  Expr x = var("x"), f = var("f");
  VarRanges r{{x.get(), {1, 2}}, {f.get(), {0, 223}}};
  auto range = [&](const Expr &e) {
    std::optional<Interval> b = boundsOf(e, r);
    return b ? std::to_string(b->lo) + ".." + std::to_string(b->hi) : std::string("none");
  };
  EXPECT_EQ(range(x * 28 + 3), "31..59");
  EXPECT_EQ(range(intImm(5) - x * 2), "1..3");
  EXPECT_EQ(range(f % 112), "0..111");     // f crosses a multiple of 112
  EXPECT_EQ(range((x + 4) % 112), "5..6"); // it does not
  EXPECT_EQ(range(f / 112), "0..1");
  EXPECT_EQ(range(min(x, intImm(0)) - 1), "-1..-1");
  EXPECT_EQ(range(x % var("k")), "none");          // unknown divisor
  EXPECT_EQ(range(x * intImm(INT64_MAX)), "none"); // overflow gives up

  EXPECT_EQ(decide(le(intImm(1), x * 28), r), std::optional<bool>(true));
  EXPECT_EQ(decide(lt(x * 28 + 27, intImm(56)), r), std::nullopt); // 55 < 56, 83 >= 56
  EXPECT_EQ(decide(lt(x * 28 + 29, intImm(56)), r), std::optional<bool>(false));
  EXPECT_EQ(decide(land(ge(x, intImm(1)), lt(f % 112, intImm(112))), r), std::optional<bool>(true));
  EXPECT_EQ(decide(land(lt(f, intImm(3)), gt(x, intImm(5))), r), std::optional<bool>(false));
  EXPECT_EQ(decide(lor(lt(f, intImm(3)), lnot(gt(x, intImm(5)))), r), std::optional<bool>(true));
  EXPECT_EQ(decide(eq(x, intImm(3)), r), std::optional<bool>(false));
  EXPECT_EQ(decide(ne(x - x, intImm(0)), r), std::nullopt); // intervals do not see x - x = 0
}

TEST(PartitionLoops, APaddedRowSplitsIntoBordersAndAnInteriorWithoutTests) {
  // out[w] = sum over 3 taps of in[w + k - 1] (0 outside [0, 8)) * wt[k], w in [0, 8): the
  // taps unrolled, as the schedules leave them.
  const int64_t W = 8;
  Expr w = var("w");
  std::vector<Stmt> taps;
  for (int64_t k = 0; k < 3; ++k) {
    Expr at = w + (k - 1);
    Expr in = lazy(land(le(intImm(0), at), lt(at, intImm(W))), load("in", 0, at), floatImm(0, 0));
    taps.push_back(store("out", w, load("out", 0, w) + in * load("wt", 0, intImm(k))));
  }
  Stmt loop = forLoop(w, intImm(0), intImm(W), ForKind::Serial, seq(taps));
  Stmt split = partitionLoops(loop);

  // w = 0 would read in[-1] and w = 7 in[8]: the first and last iteration are loops of their
  // own, where the range of w decides their test too (the padding's tap drops out), the six
  // between read every tap.
  std::string text = printStmt(split);
  EXPECT_NE(text.find("for (w, 0, 1) {"), std::string::npos) << text;
  EXPECT_NE(text.find("for (w, 1, 6) {"), std::string::npos) << text;
  EXPECT_NE(text.find("for (w, 7, 1) {"), std::string::npos) << text;
  EXPECT_EQ(lazySelects(loop), 3);
  EXPECT_EQ(lazySelects(split), 0);
  EXPECT_EQ(text.find("in[-1]"), std::string::npos) << text;
  EXPECT_EQ(text.find("in[8]"), std::string::npos) << text;

  Buffers before = inputs(W, 3), after = inputs(W, 3);
  before["out"] = after["out"] = {0, std::vector<double>(W, 0.0)};
  run(loop, before);
  run(split, after); // Eval throws on a read out of bounds: the borders still test
  EXPECT_EQ(before["out"].data, after["out"].data);
  // Hand-worked: out[0] = 0 (padding) + in[0]*wt[1] + in[1]*wt[2] with wt = (1.5, 0.75, 0) and
  // in[i] = 0.25*(i*i % 7) - 0.5: in[0] = -0.5, in[1] = -0.25.
  EXPECT_DOUBLE_EQ(after["out"].data[0], -0.5 * 0.75 + -0.25 * 0.0);
}

TEST(PartitionLoops, IndexArithmeticUnderTheRangesNoLongerDependsOnTheLane) {
  // A fused loop over rows of 8 lanes, f in [0, 24), reading input f*8 + j < 32 ? a : b, as a
  // concatenate along the outer axis of (4, 8) and (20, 8) lowers after fusing its loops:
  // (f*8 + j)/32 is f/4 for every lane j in [0, 8), so the test is decided per row, not per
  // lane (the vector code then branches instead of computing both sides for every lane).
  Expr f = var("f"), j = var("j");
  Expr at = f * 8 + j;
  Expr v = lazy(lt(at / 32, intImm(1)), load("in", 0, at), load("in", 0, at % 32));
  Stmt inner = forLoop(j, intImm(0), intImm(8), ForKind::Vectorized, store("out", at, v));
  Stmt loop = forLoop(f, intImm(0), intImm(24), ForKind::Parallel, inner);
  std::string text = printStmt(partitionLoops(loop));
  EXPECT_NE(text.find("((f/4) < 1)"), std::string::npos) << text;
  EXPECT_EQ(text.find("/32"), std::string::npos) << text;
  EXPECT_NE(text.find("in[(((f % 4)*8) + j)]"), std::string::npos) << text; // (f*8 + j) % 32
  Buffers before = inputs(192, 0), after = inputs(192, 0);
  before["out"] = after["out"] = {0, std::vector<double>(192, 0.0)};
  run(loop, before);
  run(partitionLoops(loop), after);
  EXPECT_EQ(before["out"].data, after["out"].data);

  // Where the rest may reach the divisor (lanes of 16 past a step of 8) or the dividend may be
  // negative, nothing changes.
  Stmt overlap = forLoop(f, intImm(0), intImm(24), ForKind::Parallel,
                         forLoop(var("k"), intImm(0), intImm(16), ForKind::Vectorized,
                                 store("out", f,
                                       lazy(lt((f * 32 + var("k") * 3) / 32, intImm(1)),
                                            load("in", 0, f), load("in", 0, intImm(0))))));
  EXPECT_NE(printStmt(partitionLoops(overlap)).find("/32"), std::string::npos);
  Stmt negative = forLoop(f, intImm(-3), intImm(6), ForKind::Parallel,
                          forLoop(j, intImm(0), intImm(8), ForKind::Vectorized,
                                  store("out", f + 3,
                                        lazy(lt((f * 32 + j) / 32, intImm(1)), load("in", 0, j),
                                             load("in", 0, intImm(0))))));
  EXPECT_NE(printStmt(partitionLoops(negative)).find("/32"), std::string::npos);
}

TEST(PartitionLoops, ATestOfAnOuterVariableIsHoistedOutOfTheBody) {
  // The row of a tap (t + i, t unknown here) tested by two selects in the body of i: one `if`
  // around the body, which runs without them, the original body as its else branch.
  Expr t = var("t"), i = var("i");
  Expr row = t + i;
  Expr inside = land(le(intImm(0), row), lt(row, intImm(4)));
  Stmt body =
      seq({store("out", intImm(0),
                 load("out", 0, intImm(0)) + lazy(inside, load("in", 0, row), floatImm(0, 0))),
           store("out", intImm(1),
                 load("out", 0, intImm(1)) +
                     lazy(inside, load("in", 0, row), floatImm(0, 0)) * floatImm(2, 0))});
  Stmt loop = letStmt(t, load("off", 4, intImm(0)),
                      forLoop(i, intImm(0), intImm(3), ForKind::Serial, body));
  Stmt hoisted = partitionLoops(loop);
  std::string text = printStmt(hoisted);
  EXPECT_NE(text.find("if (((0 <= (t + i)) && ((t + i) < 4))) {"), std::string::npos) << text;
  EXPECT_EQ(lazySelects(hoisted), 2); // only in the else branch

  for (int off = -4; off <= 5; ++off) {
    SCOPED_TRACE("off = " + std::to_string(off));
    Buffers before = inputs(4, 0), after = inputs(4, 0);
    before["off"] = after["off"] = {4, {static_cast<double>(off)}};
    before["out"] = after["out"] = {0, {0.0, 0.0}};
    run(loop, before);
    run(hoisted, after);
    EXPECT_EQ(before["out"].data, after["out"].data);
  }
}

TEST(PartitionLoops, LoopsWithoutTestsOrWithUndecidableOnesAreLeftAlone) {
  Expr i = var("i"), j = var("j");
  Stmt plain = forLoop(i, intImm(0), intImm(4), ForKind::Serial,
                       store("out", i, load("in", 0, i) * floatImm(2, 0)));
  EXPECT_EQ(partitionLoops(plain), plain); // the same node: nothing rebuilt
  // A data-dependent test (a load in the condition) is never decided or hoisted.
  Stmt data = forLoop(
      i, intImm(0), intImm(4), ForKind::Serial,
      seq({store("out", i,
                 lazy(lt(load("idx", 4, i), intImm(4)), load("in", 0, i), floatImm(0, 0))),
           store("out", i + 4,
                 lazy(lt(load("idx", 4, i), intImm(4)), load("in", 0, i), floatImm(0, 0)))}));
  EXPECT_EQ(printStmt(partitionLoops(data)), printStmt(data));
}

// simplifyIndices on the index a packed dense's epilogue reads through a reshape, worked by
// hand: X = (f/12)·48 + (f%12)·4 + l over rows of 48 units packed in tiles of 16 is read at
// ((X/48)·3 + (X%48)/16)·16 + (X%48)%16. Under f in [0, 24) and l in [0, 4), X/48 is f/12, X%48 is
// (f%12)·4 + l, whose /16 and %16 are (f%12)/4 and ((f%12)%4)·4 + l: no division of X is left,
// and l's coefficient is 1 (a vector load). A division the ranges do not resolve ((f·5 + l)/48)
// stays, and both statements store the same values.
TEST(PartitionLoops, SimplifyIndicesResolvesDivisionsTheLoopRangesDecide) {
  Expr f = var("f"), l = var("l");
  Expr x = (f / intImm(12)) * intImm(48) + ((f % intImm(12)) * intImm(4) + l);
  Expr packed = ((x / intImm(48)) * intImm(3) + (x % intImm(48)) / intImm(16)) * intImm(16) +
                (x % intImm(48)) % intImm(16);
  Expr other = (f * intImm(5) + l) / intImm(48);
  Stmt body = forLoop(f, intImm(0), intImm(24), ForKind::Serial,
                      forLoop(l, intImm(0), intImm(4), ForKind::Vectorized,
                              seq({store("out", x, load("in", 0, packed)),
                                   store("other", f * intImm(4) + l, load("in", 0, other))})));
  Stmt simple = simplifyIndices(body);
  std::string text = printStmt(simple);
  EXPECT_NE(
      text.find("out[(((f/12)*48) + (((f % 12)*4) + l))] = in[(((((f/12)*3) + ((f % 12)/4))*16) "
                "+ ((((f % 12) % 4)*4) + l))]"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("other[((f*4) + l)] = in[(((f*5) + l)/48)]"), std::string::npos) << text;
  Buffers a = inputs(96, 0), b = inputs(96, 0);
  for (Buffers *bufs : {&a, &b}) {
    (*bufs)["out"] = {0, std::vector<double>(96, 0.0)};
    (*bufs)["other"] = {0, std::vector<double>(96, 0.0)};
  }
  run(body, a);
  run(simple, b);
  EXPECT_EQ(a["out"].data, b["out"].data);
  EXPECT_EQ(a["other"].data, b["other"].data);
  for (int64_t i = 0; i < 96; ++i) // the packed layout read back in order
    EXPECT_EQ(b["out"].data[static_cast<size_t>(i)], b["in"].data[static_cast<size_t>(i)]) << i;
}
