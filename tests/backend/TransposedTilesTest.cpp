// TransposedTilesTest: the tiles of strided vector copies the code generator emits as row loads
// and shuffles — matched on hand-built loops, refused when any statement breaks the pattern, and
// compiled: transposing copies at opt_level 3 equal the reference interpreter's exactly, for
// every lane count, with no gather left in the machine code.
#include "backend/loop/TransposedTiles.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

using namespace loupe::loop;
using loupe::Engine;
using loupe::kFloat32;
using loupe::test::output;
using loupe::test::run;

namespace {

// Statement c of a tile of `lanes` copying rows r0 + c of a (rows, columns) block: out[(r0 + c)
// * columns + q0 + v] = in[(q0 + v) * stride + r0 + c + shift(c)], one vector loop each.
std::vector<Stmt> tileCopies(int64_t lanes, int64_t stride, const Expr &r0, const Expr &q0,
                             const std::function<int64_t(int64_t)> &shift = nullptr,
                             const std::string &dst = "out") {
  std::vector<Stmt> body;
  for (int64_t c = 0; c < lanes; ++c) {
    Expr v = var("v");
    Expr read = load("in", kFloat32, (q0 + v) * stride + r0 + c + (shift ? shift(c) : 0));
    body.push_back(forLoop(v, intImm(0), intImm(lanes), ForKind::Vectorized,
                           store(dst, (r0 + c) * 64 + q0 + v, read)));
  }
  return body;
}

} // namespace

// The matcher finds a tile of 4, 8 or 16 copies reading consecutive columns, and gives the first
// source row and each statement's first destination with the lane at 0.
TEST(TransposedTiles, MatchesSquareTilesOfStridedCopies) {
  Expr r0 = var("r0"), q0 = var("q0");
  for (int64_t lanes : {4, 8, 16}) {
    SCOPED_TRACE(lanes);
    std::vector<Stmt> body = tileCopies(lanes, 40, r0, q0);
    std::optional<TransposedTile> t = matchTransposedTile(body, 0);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->lanes, lanes);
    EXPECT_EQ(t->rowStride, 40);
    EXPECT_EQ(t->src, "in");
    EXPECT_EQ(t->dst, "out");
    EXPECT_EQ(t->dtype, kFloat32);
    ASSERT_EQ(t->columnStarts.size(), static_cast<size_t>(lanes));
    ASSERT_EQ(t->at.size(), static_cast<size_t>(lanes));
    EXPECT_EQ(t->at.back(), body.back().get());
    // (q0 + 0) * 40 + r0 at lane 0, and rows r0 + c of the output.
    EXPECT_TRUE(sameExpr(canonicalIndex(t->firstRow), canonicalIndex(q0 * 40 + r0)))
        << printExpr(t->firstRow);
    EXPECT_TRUE(sameExpr(canonicalIndex(t->columnStarts[2]), canonicalIndex((r0 + 2) * 64 + q0)))
        << printExpr(t->columnStarts[2]);
  }
  // After a statement that is no copy, the tile starts at the next one.
  std::vector<Stmt> body = tileCopies(4, 40, r0, q0);
  body.insert(body.begin(), store("out", intImm(0), floatImm(1, kFloat32)));
  EXPECT_FALSE(matchTransposedTile(body, 0));
  EXPECT_TRUE(matchTransposedTile(body, 1));
  EXPECT_FALSE(matchTransposedTile(body, 2)); // three copies left, not four
}

// Anything else stays as it is: columns not consecutive, rows closer than a vector, a buffer
// copied onto itself, too few statements, a guarded store, or stores that are not consecutive.
TEST(TransposedTiles, RefusesWhatIsNotATransposition) {
  Expr r0 = var("r0"), q0 = var("q0");
  EXPECT_FALSE(
      matchTransposedTile(tileCopies(4, 40, r0, q0, [](int64_t c) { return c == 3 ? 1 : 0; }), 0));
  EXPECT_FALSE(matchTransposedTile(tileCopies(8, 4, r0, q0), 0)); // stride 4 < 8 lanes
  EXPECT_FALSE(matchTransposedTile(tileCopies(4, 40, r0, q0, nullptr, "in"), 0));
  EXPECT_FALSE(matchTransposedTile(tileCopies(3, 40, r0, q0), 0)); // no 3-lane vectors
  std::vector<Stmt> short4 = tileCopies(4, 40, r0, q0);
  short4.pop_back();
  EXPECT_FALSE(matchTransposedTile(short4, 0));

  std::vector<Stmt> guarded = tileCopies(4, 40, r0, q0);
  guarded[1] = forLoop(guarded[1]->var, intImm(0), intImm(4), ForKind::Vectorized,
                       ifThenElse(lt(r0, intImm(9)), guarded[1]->body[0]));
  EXPECT_FALSE(matchTransposedTile(guarded, 0));

  std::vector<Stmt> scattered;
  for (int64_t c = 0; c < 4; ++c) {
    Expr v = var("v");
    scattered.push_back(forLoop(v, intImm(0), intImm(4), ForKind::Vectorized,
                                store("out", v * 2 + c, load("in", kFloat32, v * 40 + c))));
  }
  EXPECT_FALSE(matchTransposedTile(scattered, 0));
}

// Transposes of the last two axes at opt_level 3 are tiled (the schedule unrolls the rows of a
// tile and vectorises its columns) and compiled without gathers on AVX-512 (16 float32 or 8
// float64 lanes) and AVX2 (8 or 4); axes that are no multiple of the lanes end with a tile
// shifted back. A copy whose rows are fewer than the lanes keeps the gathering schedule. Every
// output equals the reference interpreter's exactly.
TEST(TransposedTiles, TransposingCopiesCompileToShufflesAndMatchTheReference) {
  struct Case {
    const char *cpu, *shape, *dtype;
    bool tiled;
  };
  for (Case c : {Case{"skylake-avx512", "(3, 37, 21)", "float32", true},
                 Case{"skylake-avx512", "(2, 32, 48)", "float32", true},
                 Case{"skylake-avx512", "(2, 40, 9)", "float64", true},
                 Case{"skylake-avx512", "(2, 12, 9, 20)", "int32", false},
                 Case{"skylake-avx512", "(3, 37, 10)", "float32", false},
                 Case{"znver3", "(3, 37, 21)", "float32", true},
                 Case{"znver3", "(5, 4, 13)", "float64", true}}) {
    SCOPED_TRACE(std::string(c.cpu) + " " + c.shape + " " + c.dtype);
    std::string shape = c.shape;
    bool rank4 = std::count(shape.begin(), shape.end(), ',') == 3;
    Engine e;
    run(e, loupe::test::var("x", c.shape) +
               "y = transpose(x, axes=" + (rank4 ? "(0, 2, 3, 1)" : "(0, 2, 1)") +
               ")\n:graph y\n:set target llvm -mcpu=" + c.cpu);
    run(e, std::string(":build opt_level=3 dtype=") + c.dtype);
    std::string steps = output(e, ":schedule fuse_transpose");
    std::string code = output(e, ":asm fuse_transpose");
    std::string checked = output(e, ":run");
    EXPECT_EQ(steps.find("unroll ax1.inner") != std::string::npos, c.tiled) << steps;
    EXPECT_EQ(code.find("gather") == std::string::npos, c.tiled) << code.substr(0, 4000);
    EXPECT_NE(checked.find("max abs error 0.0e+00"), std::string::npos) << checked;
  }
}
