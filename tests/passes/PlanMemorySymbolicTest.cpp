// PlanMemory over size symbols: storage sizes are expressions, the plan is valid at every
// binding, and a graph of one size class plans as it does at any bound size.
#include "TestUtil.h"

#include "backend/GraphExecutor.h"
#include "passes/Symbols.h"

#include <gtest/gtest.h>

#include <random>

using namespace loupe;
using namespace loupe::test;
using V = std::vector<int64_t>;

namespace {

/// `g` planned at binding `b`: the symbols replaced, shapes inferred again, PlanMemory applied.
Graph plannedAt(const Graph &g, const SymBindings &b) {
  return applyPasses(bindSymbols(g, b), {"InferShape", "InferType", "PlanMemory"});
}

/// Checks that `plan` (a symbolic plan) is a valid plan at binding `b`: every storage holds the
/// bytes of each entry in it at those sizes, and no two entries live at once share one.
void expectValidAt(const Graph &plan, const SymBindings &b, const std::string &where) {
  const auto &sid = plan.attr("storage_id")->ints;
  const auto &shapes = plan.attr("shape")->shapes;
  std::map<int64_t, int64_t> capacity;
  for (const backend::StorageSlot &s : backend::storageSlots(plan))
    if (s.id >= 0)
      capacity[s.id] = s.size.eval(b);
  for (size_t a = 0; a < sid.size(); ++a) {
    if (sid[a] >= 0) {
      EXPECT_GE(capacity[sid[a]], elementCount(shapes[a]).eval(b) * 4)
          << where << ": entry " << a << " outgrows storage " << sid[a];
    }
  }
  expectNoLiveSharing(plan, where);
}

} // namespace

TEST(PlanMemorySymbolic, SizesAreExpressionsOfTheSymbols) {
  // Worked by hand. exp's output (batch*8 floats, 32·batch bytes) takes block 0; the row sums
  // (4·batch bytes, the same size class) find block 0 live: block 1; the product writes in place
  // over `a` (its block's last reader: broadcast_mul's in-place option), and relu over the
  // product. Total 32·batch + 4·batch = 36·batch bytes.
  Graph g = applyPasses(inferred(symVar("x", "(batch, 8)") +
                                 "a = exp(x)\nb = sum(a, axis=1, keepdims=True)\n"
                                 "y = relu(broadcast_mul(a, b))"),
                        {"PlanMemory"});
  EXPECT_EQ(g.attr("storage_id")->ints, (V{-1, 0, 1, 0, 0}));
  EXPECT_EQ(g.attr("storage_inplace_index")->ints, (V{-1, -1, -1, 0, 0}));
  const GraphAttr *total = g.attr("storage_allocated_bytes");
  ASSERT_EQ(total->type, GraphAttr::Type::Str);
  EXPECT_EQ(total->str, "batch*36");
  std::vector<std::string> sizes;
  for (const backend::StorageSlot &s : backend::storageSlots(g))
    if (s.id >= 0)
      sizes.push_back(s.size.str());
  EXPECT_EQ(sizes, (std::vector<std::string>{"batch*32", "batch*4"}));
  // At batch = 5 the plan is the plan of the bound graph, and its total is 36·5 bytes.
  Graph at5 = plannedAt(g, {{"batch", 5}});
  EXPECT_EQ(at5.attr("storage_id")->ints, g.attr("storage_id")->ints);
  EXPECT_EQ(at5.attr("storage_allocated_bytes")->num, 36 * 5);
}

TEST(PlanMemorySymbolic, OneSizeClassPlansAsEveryBoundSize) {
  // Random graphs whose every size is a multiple of `batch` ((batch, 8) and (batch, 1)): the
  // ratio of any two sizes is the same at every binding, so the symbolic plan must be the plan
  // PlanMemory makes of the graph at each bound size, and its total that plan's bytes.
  std::mt19937 rng(99);
  const char *unary[] = {"relu", "exp", "negative", "sigmoid"};
  for (int trial = 0; trial < 30; ++trial) {
    std::string prog = symVar("s0", "(batch, 8)");
    int n = 20;
    for (int i = 1; i < n; ++i) {
      std::uniform_int_distribution<int> pick(0, i - 1), kind(0, 3);
      std::string sa = "s" + std::to_string(pick(rng)), sb = "s" + std::to_string(pick(rng));
      std::string expr;
      switch (kind(rng)) {
      case 0:
        expr = std::string(unary[pick(rng) % 4]) + "(" + sa + ")";
        break;
      case 1:
        expr = "broadcast_add(" + sa + ", " + sb + ")";
        break;
      case 2:
        expr = "sum(" + sa + ", axis=1, keepdims=True)";
        break;
      default:
        expr = sa + " * 2";
      }
      prog += "s" + std::to_string(i) + " = " + expr + "\n";
    }
    std::string heads = "Group([s" + std::to_string(n - 1) + ", s" + std::to_string(n / 2) + "])";
    Graph g = applyPasses(inferred(prog, heads), {"PlanMemory"});
    SymExpr total = SymExpr::parse(g.attr("storage_allocated_bytes")->str);
    for (int64_t batch : {1, 3, 64}) {
      SymBindings b{{"batch", batch}};
      std::string where = "trial " + std::to_string(trial) + ", batch " + std::to_string(batch);
      Graph bound = plannedAt(g, b);
      EXPECT_EQ(bound.attr("storage_id")->ints, g.attr("storage_id")->ints) << where;
      EXPECT_EQ(bound.attr("storage_inplace_index")->ints, g.attr("storage_inplace_index")->ints)
          << where;
      EXPECT_EQ(bound.attr("storage_allocated_bytes")->num, total.eval(b)) << where;
    }
  }
}

TEST(PlanMemorySymbolic, MixedSizeClassesPlanValidlyAtEverySize) {
  // An attention head: activations of batch·seq·16 floats, scores of batch·seq·seq. The two
  // classes never share a block (no binding-free order compares them), so the plan holds at
  // every size, including those where a concrete plan would have shared them.
  std::string prog = symVar("x", "(batch, seq, 16)") +
                     "q = reshape(dense(x, units=16), shape=(0, 0, 2, 8))\n"
                     "k = reshape(dense(x, units=16), shape=(0, 0, 2, 8))\n"
                     "v = reshape(dense(x, units=16), shape=(0, 0, 2, 8))\n"
                     "s = batch_matmul(transpose(q, axes=(0, 2, 1, 3)), "
                     "transpose(k, axes=(0, 2, 3, 1)))\n"
                     "p = softmax(s * 0.35, axis=-1)\n"
                     "o = batch_matmul(p, transpose(v, axes=(0, 2, 1, 3)))\n"
                     "y = relu(dense(reshape(transpose(o, axes=(0, 2, 1, 3)), shape=(0, 0, 16)), "
                     "units=16))";
  Graph g = applyPasses(inferred(prog), {"PlanMemory"});
  EXPECT_EQ(g.attr("storage_num_not_allocated")->num, 0);
  std::set<std::string> classes;
  for (const backend::StorageSlot &s : backend::storageSlots(g)) {
    if (s.id < 0)
      continue;
    SymExpr primitive;
    s.size.content(&primitive);
    classes.insert(primitive.str());
  }
  EXPECT_EQ(classes, (std::set<std::string>{"batch*seq", "batch*seq*seq"}));
  for (int64_t batch : {1, 4})
    for (int64_t seq : {1, 2, 16, 100}) {
      SymBindings b{{"batch", batch}, {"seq", seq}};
      expectValidAt(g, b, bindingsText(b));
    }
}
