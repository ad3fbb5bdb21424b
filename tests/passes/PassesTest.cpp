// PassesTest: GraphFusePartition, PlanMemory and GraphFuseCompile on small graphs whose
// results are worked out by hand from nnvm-spec §5-7, plus randomized invariants.
#include "TestUtil.h"

#include "passes/Symbols.h"

#include "core/Error.h"

#include <random>

using namespace loupe;
using namespace loupe::test;

namespace {

struct Partition {
  std::vector<int64_t> root, master, pattern;
};

Partition partition(const std::string &program, const std::string &rules = "A",
                    const std::string &out = "y") {
  PassContext ctx;
  ctx.config["fusion_rules"] = rules;
  Graph g = applyPasses(inferred(program, out), {"GraphFusePartition"}, ctx);
  return {g.attr("group_root")->ints, g.attr("group_master")->ints, g.attr("pattern")->ints};
}

using V = std::vector<int64_t>;

const char *kDiamond = "x = Variable(\"x\", shape=(1,2,4,4))\n"
                       "r = relu(conv2d(x, channels=2, kernel_size=(1,1)))\n"
                       "y = exp(r) + log(r)";

} // namespace

TEST(GraphFusePartition, SeedTutorial) {
  // nnvm-spec §5.5, the seed's printed lists.
  Partition p =
      partition("x = Variable(\"x\", shape=(1,13,100,100), dtype=1)\n"
                "z = relu(conv2d(data=x, channels=13, kernel_size=(3,3), padding=[1,1]))\n"
                "z = relu(conv2d(data=z, channels=13, kernel_size=(3,3), padding=[1,1]))\n"
                "y = sum(softmax(dense(flatten(x + z), units=10)), keepdims=True)");
  EXPECT_EQ(p.root, (V{0, 1, 2, 4, 4, 5, 6, 9, 9, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(p.master, (V{-1, -1, -1, 3, 3, -1, -1, 7, 7, 7, 10, -1, -1, 13, 14, 15}));
}

TEST(GraphFusePartition, SeveralConsumersEndAGroup) {
  // ids: x0 w1 b2 conv3 relu4 exp5 log6 add7. relu4 has two readers, so it is realized with
  // the conv; exp, log and add form an elementwise group rooted at the output.
  Partition a = partition(kDiamond);
  EXPECT_EQ(a.root, (V{0, 1, 2, 4, 4, 7, 7, 7}));
  EXPECT_EQ(a.master, (V{-1, -1, -1, 3, 3, -1, -1, 7}));
  EXPECT_EQ(a.pattern, (V{8, 8, 8, 4, 4, 0, 0, 0}));
}

TEST(GraphFusePartition, RuleBFusesTheDiamond) {
  // Phase 3: relu4's single-input consumers (exp, log) share group 7, all elementwise, so the
  // conv group joins it and every member takes relu's pattern and master.
  Partition b = partition(kDiamond, "B");
  EXPECT_EQ(b.root, (V{0, 1, 2, 7, 7, 7, 7, 7}));
  EXPECT_EQ(b.master, (V{-1, -1, -1, 3, 3, 3, 3, 3}));
  EXPECT_EQ(b.pattern, (V{8, 8, 8, 4, 4, 4, 4, 4}));
}

TEST(GraphFusePartition, RuleCKeepsInjectiveProducersOutOfConvGroups) {
  // ids: x0 w1 b2 conv3 t4 transpose5 add6. Under A the add absorbs both the conv and the
  // transpose; under C it becomes its own master, the conv stays a group of its own, and the
  // transpose joins the add with master 6.
  std::string prog = "x = Variable(\"x\", shape=(1,2,3,3))\nt = Variable(\"t\", shape=(1,2,3,3))\n"
                     "y = conv2d(x, channels=2, kernel_size=(1,1)) + transpose(t, axes=(0,1,3,2))";
  Partition a = partition(prog);
  EXPECT_EQ(a.root, (V{0, 1, 2, 6, 4, 6, 6}));
  EXPECT_EQ(a.master, (V{-1, -1, -1, 3, -1, -1, 3}));
  Partition c = partition(prog, "C");
  EXPECT_EQ(c.root, (V{0, 1, 2, 3, 4, 6, 6}));
  EXPECT_EQ(c.master, (V{-1, -1, -1, 3, -1, 6, 6}));
}

TEST(GraphFusePartition, MultiOutputProducer) {
  // ids: x0 split1 relu2 relu3 add4. split has two readers: realized, its own master.
  Partition p = partition("x = Variable(\"x\", shape=(4,2))\n"
                          "s = split(x, indices_or_sections=2, axis=0)\n"
                          "y = relu(s[0]) + relu(s[1])");
  EXPECT_EQ(p.root, (V{0, 1, 4, 4, 4}));
  EXPECT_EQ(p.master, (V{-1, 1, -1, -1, 4}));
  EXPECT_EQ(p.pattern, (V{8, 2, 0, 0, 0}));
}

TEST(GraphFusePartition, ReductionsAndOpaqueOps) {
  // ids: x0 exp1 sum2 relu3. The reduce absorbs the elementwise exp and is its own master; the
  // relu after it cannot absorb a reduce, and turns Broadcast.
  Partition r = partition("x = Variable(\"x\", shape=(2,3))\ny = relu(sum(exp(x), axis=1))");
  EXPECT_EQ(r.root, (V{0, 2, 2, 3}));
  EXPECT_EQ(r.master, (V{-1, -1, 2, 3}));
  EXPECT_EQ(r.pattern, (V{8, 0, 3, 1}));
  // ids: x0 relu1 softmax2. Opaque absorbs nothing; its producer becomes its own master.
  Partition o = partition("x = Variable(\"x\", shape=(2,3))\ny = softmax(relu(x))");
  EXPECT_EQ(o.root, (V{0, 1, 2}));
  EXPECT_EQ(o.master, (V{-1, 1, 2}));
  EXPECT_EQ(o.pattern, (V{8, 0, 8}));
}

// Two convolutions' chains meet in an add (a quantized residual block's shape: each result
// narrowed to uint8, then widened back). The add takes the first chain's master; the second
// chain is cut where the add meets it at opt_level 2 (the float32 cast: 4 bytes an element
// stored and read back), at its narrowest value at opt_level 3 (the uint8 cast), whose widening
// then runs in the add's group.
TEST(GraphFusePartition, SecondChainCutAtItsNarrowestValueAtOptLevelThree) {
  Graph g = inferred("x = Variable(\"x\", shape=(1, 4, 4, 4))\n"
                     "a = conv2d(x, channels=4, kernel_size=(1, 1), use_bias=False, name=\"a\")\n"
                     "b = conv2d(x, channels=4, kernel_size=(1, 1), use_bias=False, name=\"b\")\n"
                     "a8 = cast(a, dtype=\"uint8\", name=\"a8\")\n"
                     "b8 = cast(b, dtype=\"uint8\", name=\"b8\")\n"
                     "y = elemwise_add(cast(a8, dtype=\"float32\", name=\"af\"), "
                     "cast(b8, dtype=\"float32\", name=\"bf\"), name=\"y\")");
  const IndexedGraph &idx = g.index();
  auto id = [&](const char *name) { return static_cast<size_t>(idx.findByName(name)); };
  for (int opt : {2, 3}) {
    SCOPED_TRACE(opt);
    Graph at = g;
    at.attrs["opt_level"] = GraphAttr::integer(opt);
    Graph p = applyPasses(at, {"GraphFusePartition"});
    const auto &root = p.attr("group_root")->ints, &master = p.attr("group_master")->ints;
    int64_t y = static_cast<int64_t>(id("y"));
    EXPECT_EQ(root[id("a")], y);
    EXPECT_EQ(root[id("af")], y);
    EXPECT_EQ(master[id("y")], static_cast<int64_t>(id("a")));
    EXPECT_EQ(root[id("b")], static_cast<int64_t>(id(opt == 3 ? "b8" : "bf")));
    EXPECT_EQ(root[id("bf")], opt == 3 ? y : static_cast<int64_t>(id("bf")));
  }
}

TEST(GraphFusePartition, OptLevelZeroAndNoFuse) {
  Graph g = inferred(kDiamond);
  g.attrs["opt_level"] = GraphAttr::integer(0);
  Graph p = applyPasses(g, {"GraphFusePartition"});
  EXPECT_EQ(p.attr("group_root")->ints, (V{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(p.attr("opt_level"), nullptr); // consumed, as in NNVM
  PassContext ctx;
  ctx.noFuse = {"exp"};
  Graph n = applyPasses(inferred(kDiamond), {"GraphFusePartition"}, ctx);
  // exp is now opaque: it stands alone and the add can no longer absorb it.
  EXPECT_EQ(n.attr("group_root")->ints, (V{0, 1, 2, 4, 4, 5, 7, 7}));
}

TEST(GraphFusePartition, NeedsShapes) {
  Engine e;
  run(e, "x = Variable(\"x\")\ny = relu(x)\n:graph y");
  try {
    applyPasses(e.current()->graph, {"GraphFusePartition"});
    FAIL() << "expected an error";
  } catch (const Error &err) {
    EXPECT_EQ(std::string(err.what()),
              "Graph attr dependency shape is required by pass GraphFusePartition but is not "
              "available. The attribute is provided by pass InferShape");
  }
}

namespace {
Graph compiled(const std::string &program, int optLevel, const std::string &rules = "A",
               const std::string &out = "y") {
  PassContext ctx;
  ctx.optLevel = optLevel;
  ctx.config["fusion_rules"] = rules;
  return applyPasses(inferred(program, out), {"GraphFusePartition", "GraphFuseCompile"}, ctx);
}
} // namespace

TEST(PlanMemory, SpecExamples) {
  // Seed 000's deploy graph: [x, w, b, fuse_conv2d, fuse_conv2d_broadcast_add].
  Graph s0 = compiled("x = Variable(\"x\", shape=(7,3,11,13), dtype=0)\nw = Variable(\"w\")\n"
                      "b = Variable(\"b\")\nz = conv2d(x, w, b, channels=3, kernel_size=(5,5))\n"
                      "y = z + conv2d(z, w, b, channels=3, kernel_size=(5,5), padding=(2,2))",
                      2);
  EXPECT_EQ(s0.attr("storage_id")->ints, (V{2, 3, 4, 0, 1}));
  // A chain of four same-size kernels ping-pongs between two blocks (tvm_op never in place).
  Graph chain =
      compiled("x = Variable(\"x\", shape=(8,8), dtype=0)\ny = sqrt(log(exp(relu(x))))", 0);
  EXPECT_EQ(chain.attr("storage_id")->ints, (V{2, 0, 1, 0, 1}));
  // The same chain before fusion writes in place all the way down.
  Graph plain = applyPasses(inferred("x = Variable(\"x\", shape=(8,8), dtype=0)\n"
                                     "y = sqrt(log(exp(relu(x))))"),
                            {"PlanMemory"});
  EXPECT_EQ(plain.attr("storage_id")->ints, (V{-1, 0, 0, 0, 0}));
  EXPECT_EQ(plain.attr("storage_inplace_index")->ints, (V{-1, -1, 0, 0, 0}));
  EXPECT_EQ(plain.attr("storage_allocated_bytes")->num, 8 * 8 * 4);
}

TEST(PlanMemory, RandomGraphsNeverShareALiveBuffer) {
  std::mt19937 rng(1234);
  const char *unary[] = {"relu", "exp", "negative", "sigmoid"};
  for (int trial = 0; trial < 40; ++trial) {
    // Symbols s0.. of shape (4,8) or (4,1); each new op reads one or two earlier symbols.
    std::string prog = "s0 = Variable(\"x\", shape=(4,8), dtype=0)\n";
    std::vector<bool> wide{true};
    int n = 25;
    for (int i = 1; i < n; ++i) {
      std::uniform_int_distribution<int> pick(0, i - 1), kind(0, 3);
      int a = pick(rng), b = pick(rng);
      std::string sa = "s" + std::to_string(a), sb = "s" + std::to_string(b), expr;
      bool w = wide[a];
      switch (kind(rng)) {
      case 0:
        expr = std::string(unary[pick(rng) % 4]) + "(" + sa + ")";
        break;
      case 1:
        expr = sa + " + " + sb; // broadcasting (4,8) with (4,1) stays (4,8)
        w = wide[a] || wide[b];
        break;
      case 2:
        expr = "sum(" + sa + ", axis=1, keepdims=True)";
        w = false;
        break;
      default:
        expr = sa + " * 2";
      }
      prog += "s" + std::to_string(i) + " = " + expr + "\n";
      wide.push_back(w);
    }
    std::string heads = "Group([s" + std::to_string(n - 1) + ", s" + std::to_string(n / 2) + "])";
    expectNoLiveSharing(applyPasses(inferred(prog, heads), {"PlanMemory"}),
                        "trial " + std::to_string(trial));
  }
}

TEST(GraphFuseCompile, DeployGraphComputesTheSameNumbers) {
  // The reference interpreter runs tvm_op through the module's functions, so the deploy graph
  // must equal the original graph exactly, at every opt level and with every rule set.
  std::string prog = "x = Variable(\"x\", shape=(1,3,6,6), dtype=1)\n"
                     "z = relu(conv2d(x, channels=3, kernel_size=(3,3), padding=(1,1)))\n"
                     "r = relu(x + z)\ny = exp(r) + log(r + 1)\n"
                     "y = sum(softmax(dense(flatten(max_pool2d(y, pool_size=(2,2))), units=4)), "
                     "axis=1, keepdims=True)";
  Graph original = inferred(prog);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::map<std::string, Tensor> inputs;
  const IndexedGraph &idx = original.index();
  for (uint32_t nid : idx.argNodes) {
    Tensor t(original.attr("shape")->shapes[idx.entryId(nid, 0)], kFloat64);
    for (double &v : t.data)
      v = u(rng);
    inputs[idx.nodes[nid].node->name] = t;
  }
  Tensor want = interpret(original, inputs).at(0);
  for (int opt : {0, 1, 2})
    for (const char *rules : {"A", "B", "C"}) {
      Graph deploy = compiled(prog, opt, rules);
      for (const auto &n : deploy.index().nodes)
        EXPECT_TRUE(n.node->isVariable() || n.node->op->name == "tvm_op");
      Tensor got = interpret(deploy, inputs).at(0);
      ASSERT_EQ(got.shape, want.shape);
      for (size_t i = 0; i < want.data.size(); ++i)
        EXPECT_EQ(got.data[i], want.data[i]) << "opt " << opt << " rules " << rules;
    }
}

TEST(GraphFuseCompile, NamesAreDeduplicatedAndSharedAcrossCompiles) {
  // Two different conv shapes: fuse_conv2d then fuse_conv2d_1; an identical kernel later
  // (another compile in the same session) keeps its name.
  FunctionNames names;
  PassContext ctx;
  ctx.optLevel = 0;
  ctx.functionNames = &names;
  std::string prog = "x = Variable(\"x\", shape=(1,2,5,5), dtype=0)\n"
                     "y = conv2d(conv2d(x, channels=2, kernel_size=(3,3)), channels=2, "
                     "kernel_size=(3,3))";
  Graph g = applyPasses(inferred(prog), {"GraphFusePartition", "GraphFuseCompile"}, ctx);
  std::vector<std::string> fnames;
  for (const auto &n : g.index().nodes)
    if (!n.node->isVariable())
      fnames.push_back(n.node->parsed.getStr("func_name"));
  EXPECT_EQ(fnames, (std::vector<std::string>{"fuse_conv2d", "fuse_conv2d_1"}));
  Graph again = applyPasses(inferred(prog), {"GraphFusePartition", "GraphFuseCompile"}, ctx);
  std::vector<std::string> second;
  for (const auto &n : again.index().nodes)
    if (!n.node->isVariable())
      second.push_back(n.node->parsed.getStr("func_name"));
  EXPECT_EQ(second, fnames);
}

TEST(GraphFuseCompile, FlattenDataAndArgumentOrder) {
  // An elementwise root gets flatten_data=1 and 1-D placeholders; arguments follow the DFS from
  // the root (x first, then the relu output), placeholders the id-order scan.
  Graph g = compiled("x = Variable(\"x\", shape=(2,3), dtype=0)\nw = Variable(\"w\", shape=(2,3), "
                     "dtype=0)\nr = relu(w)\ny = exp(x) + r * 2\n:graph y",
                     2);
  const IndexedGraph &idx = g.index();
  const Node &top = *idx.nodes[idx.heads[0].nodeId].node;
  EXPECT_EQ(*findAttr(top.attrs, "flatten_data"), "1");
  EXPECT_EQ(*findAttr(top.attrs, "func_name"), "fuse_exp_relu___mul_scalar___broadcast_add");
  ASSERT_EQ(top.inputs.size(), 2u);
  EXPECT_EQ(top.inputs[0].node->name, "x");
  EXPECT_EQ(top.inputs[1].node->name, "w");
}

TEST(GraphFuseCompile, BroadcastToItsOwnShapeIsNotFlattened) {
  // broadcast_to's shape attribute has the output's rank: its function keeps its input's shape
  // even when nothing stretches (PyTorch's RNN exports Expand a constant to its own shape).
  for (int opt : {0, 2}) {
    Graph g = compiled("x = Variable(\"x\", shape=(1,3,8), dtype=0)\n"
                       "y = relu(broadcast_to(x, shape=(1, 3, 8)))\n:graph y",
                       opt);
    const IndexedGraph &idx = g.index();
    int seen = 0;
    for (const auto &n : idx.nodes) {
      if (!n.node->op || n.node->op->name != "tvm_op" ||
          findAttr(n.node->attrs, "func_name")->find("broadcast_to") == std::string::npos)
        continue;
      EXPECT_EQ(*findAttr(n.node->attrs, "flatten_data"), "0") << opt;
      ++seen;
    }
    EXPECT_EQ(seen, 1) << opt;
  }
}

TEST(SimplifyInference, MatchesBatchNormAndDropoutNumerically) {
  for (const char *flags : {"", ", scale=False", ", center=False", ", axis=3, epsilon=0.001"}) {
    Engine e;
    run(e, std::string("x = Variable(\"x\")\ny = flatten(dropout(relu(batch_norm(x") + flags +
               "))))\n:graph y");
    Graph g = e.current()->graph;
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(0.5, 2);
    std::map<std::string, Tensor> in;
    for (uint32_t nid : g.index().argNodes) {
      const std::string &name = g.index().nodes[nid].node->name;
      int c = std::string(flags).find("axis=3") != std::string::npos ? 5 : 3;
      Tensor t(name == "x" ? Shape{2, 3, 4, 5} : Shape{c}, kFloat64);
      for (double &v : t.data)
        v = u(rng);
      in[name] = t;
    }
    Graph inferredG = withInputs(g, in);
    Tensor want = interpret(inferredG, in).at(0);
    Graph simple = applyPasses(inferredG, {"SimplifyInference"});
    EXPECT_TRUE(simple.attrs.empty());
    for (const auto &n : simple.index().nodes)
      EXPECT_TRUE(n.node->isVariable() ||
                  (n.node->op->name != "batch_norm" && n.node->op->name != "dropout"))
          << flags;
    Tensor got = interpret(withInputs(simple, in), in).at(0);
    ASSERT_EQ(got.shape, want.shape);
    for (size_t i = 0; i < want.data.size(); ++i)
      EXPECT_NEAR(got.data[i], want.data[i], 1e-12) << flags;
  }
}

TEST(SimplifyInference, SharesUntouchedNodes) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(2,3))\nr = relu(x)\ny = exp(dropout(r))\n:graph y");
  Graph g = applyPasses(e.current()->graph, {"InferShape"});
  Graph s = applyPasses(g, {"SimplifyInference"});
  const IndexedGraph &a = g.index(), &b = s.index();
  EXPECT_EQ(a.nodes[1].node.get(), b.nodes[1].node.get());         // relu kept as is
  EXPECT_EQ(b.numNodes(), 3u);                                     // x, relu, exp: dropout gone
  EXPECT_NE(a.nodes.back().node.get(), b.nodes.back().node.get()); // exp copied
}

namespace {
std::vector<std::string> opsOf(const Graph &g) {
  std::vector<std::string> ops;
  for (const auto &n : g.index().nodes)
    ops.push_back(n.node->isVariable() ? "var" : n.node->op->name);
  return ops;
}
} // namespace

TEST(FoldConstant, FoldsAllConstantSubtreesAndNothingElse) {
  Graph g = applyPasses(built("x = Variable(\"x\", shape=(2,2), dtype=0)\n"
                              "c = const([[1, 2], [3, 4]])\n"
                              "k = exp(c * 0) + c\n"     // folds: [[2, 3], [4, 5]]
                              "z = zeros(shape=(2,2))\n" // no inputs: kept
                              "d = dropout(c)\n"         // stateful: kept
                              "y = x + k + z + d"),
                        {"FoldConstant"});
  EXPECT_EQ(opsOf(g),
            (std::vector<std::string>{"var", "const", "broadcast_add", "zeros", "broadcast_add",
                                      "const", "dropout", "broadcast_add"}));
  const Node &folded = *g.index().nodes[1].node;
  EXPECT_EQ(*findAttr(folded.attrs, "data"), "[2.0, 3.0, 4.0, 5.0]");
  EXPECT_EQ(*findAttr(folded.attrs, "shape"), "(2, 2)");
  // The trailing InferType ran (Relay's FunctionPass does that).
  EXPECT_NE(g.attr("dtype"), nullptr);
}

TEST(FoldConstant, KeepsTheNumbers) {
  std::string prog = "x = Variable(\"x\", shape=(3,), dtype=1)\n"
                     "c = const([0.5, 1.5, 2.5], dtype=\"float64\")\n"
                     "y = x * sqrt(c + 1) - softmax(c)";
  Graph g = built(prog);
  std::map<std::string, Tensor> in{{"x", tensor({3}, {1, -2, 3}, kFloat64)}};
  Tensor want = interpret(applyPasses(g, {"InferShape", "InferType"}), in).at(0);
  Graph folded = applyPasses(g, {"FoldConstant", "InferShape", "InferType"});
  Tensor got = interpret(folded, in).at(0);
  for (size_t i = 0; i < want.data.size(); ++i)
    EXPECT_DOUBLE_EQ(got.data[i], want.data[i]);
  EXPECT_EQ(folded.index().numNodes(), 5u); // x, two folded constants, mul, sub
}

// shape_of of a known shape becomes a const and what reads it folds: x (2, 3, 4) plus the
// product of dims [1, 3) of its shape as float32 is x + 12 with no shape_of left; a shape_of
// whose input shape is unknown stays.
TEST(FoldShapeOf, ShapesBecomeConstantsAndTheirComputationsFold) {
  Graph g = applyPasses(built("x = Variable(\"x\", shape=(2, 3, 4), dtype=0)\n"
                              "n = cast(prod(shape_of(x, start=1)), dtype=\"float32\")\n"
                              "y = broadcast_add(x, n)"),
                        {"FoldShapeOf"});
  EXPECT_EQ(opsOf(g), (std::vector<std::string>{"var", "const", "broadcast_add"}));
  const Node &folded = *g.index().nodes[1].node;
  EXPECT_EQ(*findAttr(folded.attrs, "value"), "12.0");
  std::map<std::string, Tensor> in{{"x", tensor({2, 3, 4}, std::vector<double>(24, 1.0))}};
  Tensor got = interpret(applyPasses(g, {"InferShape", "InferType"}), in).at(0);
  EXPECT_EQ(got.data, std::vector<double>(24, 13.0));
  Graph unknown = applyPasses(built("x = Variable(\"x\")\ny = shape_of(x)"), {"FoldShapeOf"});
  EXPECT_EQ(opsOf(unknown), (std::vector<std::string>{"var", "shape_of"}));
}

// Of a symbolic shape, what the symbols allow folds: the constant dimensions a shape_of selects;
// one that selects a symbol stays (computed once the sizes are bound), and a remark says so.
TEST(FoldShapeOf, ConstantDimensionsOfASymbolicShapeFoldAndSymbolsStay) {
  Graph g = built("x = Variable(\"x\", shape=\"(batch, seq, 4)\", dtype=0)\n"
                  "n = cast(prod(shape_of(x, start=2)), dtype=\"float32\")\n"
                  "m = cast(prod(shape_of(x)), dtype=\"float32\")\n"
                  "y = broadcast_add(broadcast_add(x, n), m)");
  std::vector<std::string> remarks;
  PassContext ctx;
  ctx.remarks = &remarks;
  Graph folded = applyPasses(g, {"FoldShapeOf"}, ctx);
  EXPECT_EQ(opsOf(folded), (std::vector<std::string>{"var", "const", "broadcast_add", "shape_of",
                                                     "prod", "cast", "broadcast_add"}));
  EXPECT_EQ(remarks, (std::vector<std::string>{
                         "FoldShapeOf: shape_of1 reads batch, seq of (batch, seq, 4): computed "
                         "when the sizes are bound"}));
  // Bound, both fold: x + 4 + batch * seq * 4.
  Graph bound = applyPasses(bindSymbols(g, {{"batch", 2}, {"seq", 3}}), {"FoldShapeOf"});
  EXPECT_EQ(opsOf(bound),
            (std::vector<std::string>{"var", "const", "broadcast_add", "const", "broadcast_add"}));
  std::map<std::string, Tensor> in{{"x", tensor({2, 3, 4}, std::vector<double>(24, 1.0))}};
  Tensor got = interpret(applyPasses(bound, {"InferShape", "InferType"}), in).at(0);
  EXPECT_EQ(got.data, std::vector<double>(24, 1.0 + 4 + 24));
}

TEST(EliminateCommonSubexpr, MergesOnlyIdenticalComputations) {
  Graph g = applyPasses(built("x = Variable(\"x\", shape=(2,), dtype=0)\n"
                              "c1 = const(1.0, shape=(2,))\nc2 = const(1.0, shape=(2,))\n"
                              "a = exp(x) * 2\nb = exp(x) * 2\nd = exp(x) * 3\n"
                              "y = Group([a + b, d, c1 + c2, c1 + c2])",
                              "y"),
                        {"EliminateCommonSubexpr"});
  const IndexedGraph &idx = g.index();
  // exp merged (one), *2 merged, *3 kept; constants (no inputs) never merge; the two c1 + c2
  // merge because they read the same constant objects.
  std::map<std::string, int> count;
  for (const auto &n : idx.nodes)
    ++count[n.node->isVariable() ? "var" : n.node->op->name];
  EXPECT_EQ(count["exp"], 1);
  EXPECT_EQ(count["__mul_scalar__"], 2);
  EXPECT_EQ(count["const"], 2);
  EXPECT_EQ(count["broadcast_add"], 2);
  EXPECT_EQ(idx.heads[2].nodeId, idx.heads[3].nodeId);
  // a + b became a + a.
  const auto &sum = idx.nodes[idx.heads[0].nodeId];
  EXPECT_EQ(sum.inputs[0].nodeId, sum.inputs[1].nodeId);
}

namespace {
Partition fuseOps(const std::string &program, int level = 2) {
  PassContext ctx;
  ctx.config["fuse_opt_level"] = std::to_string(level);
  Graph g = applyPasses(inferred(program), {"FuseOps"}, ctx);
  return {g.attr("group_root")->ints, g.attr("group_master")->ints, g.attr("pattern")->ints};
}
} // namespace

TEST(FuseOps, DiamondFusesThroughThePostDominator) {
  // ids: x0 w1 b2 conv3 relu4 exp5 log6 add7. relu4's post-dominator is add7 and every path
  // is elementwise, so (unlike NNVM's rule A) the whole diamond is one group with the conv.
  Partition p = fuseOps(kDiamond);
  EXPECT_EQ(p.root, (V{0, 1, 2, 7, 7, 7, 7, 7}));
  EXPECT_EQ(p.master, (V{-1, -1, -1, 3, 3, 3, 3, 3}));
  EXPECT_EQ(p.pattern[7], kOutEWiseFusable);
  // fuse_opt_level 0: every node alone.
  Partition none = fuseOps(kDiamond, 0);
  EXPECT_EQ(none.root, (V{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(FuseOps, TwoAnchorsNeverShareAGroup) {
  // conv -> relu -> conv -> relu: each conv anchors its own group with its relu.
  // ids: x0 w1 b2 conv3 relu4 w5 b6 conv7 relu8
  Partition p = fuseOps("x = Variable(\"x\", shape=(1,2,5,5))\n"
                        "y = relu(conv2d(x, channels=2, kernel_size=(1,1)))\n"
                        "y = relu(conv2d(y, channels=2, kernel_size=(1,1)))");
  EXPECT_EQ(p.root, (V{0, 1, 2, 4, 4, 5, 6, 8, 8}));
  EXPECT_EQ(p.master, (V{-1, -1, -1, 3, 3, -1, -1, 7, 7}));
}

TEST(FuseOps, ReductionsReceiveButDoNotStartFusion) {
  // ids: x0 exp1 sum2 relu3. exp fuses into the sum (sink may be CommReduce); the sum never
  // fuses forward into relu.
  Partition p = fuseOps("x = Variable(\"x\", shape=(2,3))\ny = relu(sum(exp(x), axis=1))");
  EXPECT_EQ(p.root, (V{0, 2, 2, 3}));
  // Injective producers join in phase 1: transpose then exp then output.
  Partition q = fuseOps("x = Variable(\"x\", shape=(2,3))\ny = exp(transpose(x))");
  EXPECT_EQ(q.root, (V{0, 2, 2}));
}

TEST(FuseOps, FeedsGraphFuseCompile) {
  PassContext ctx;
  Graph g = applyPasses(inferred(kDiamond), {"FuseOps", "GraphFuseCompile"}, ctx);
  std::vector<std::string> names;
  for (const auto &n : g.index().nodes)
    if (!n.node->isVariable())
      names.push_back(n.node->parsed.getStr("func_name"));
  EXPECT_EQ(names, (std::vector<std::string>{"fuse_conv2d_relu_exp_log_broadcast_add"}));
}

TEST(PrecomputePrune, PrecomputedParamsGiveTheSameResult) {
  Engine e;
  run(e, "x = Variable(\"x\")\nw = Variable(\"w\")\ns = Variable(\"s\")\n"
         "b = split(s, indices_or_sections=3, axis=0)\n"
         "y = conv2d(x, w * 2, channels=3, kernel_size=(1,1), use_bias=False)\n"
         "y = y * b[1] + expand_dims(sqrt(b[0]), axis=1, num_newaxis=2)\n:graph y");
  Graph g = e.current()->graph;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0.1, 1);
  auto rand = [&](Shape s) {
    Tensor t(s, kFloat64);
    for (double &v : t.data)
      v = u(rng);
    return t;
  };
  std::map<std::string, Tensor> in{
      {"x", rand({1, 3, 2, 3})}, {"w", rand({3, 3, 1, 1})}, {"s", rand({9})}};
  Tensor want = interpret(withInputs(g, in), in).at(0);
  g.attrs["param_name_list"] = GraphAttr::listStr({"w", "s"});
  Graph pruned = applyPasses(g, {"PrecomputePrune"});
  ASSERT_NE(pruned.attr("precompute_graph"), nullptr);
  auto pre = std::static_pointer_cast<const Graph>(pruned.attr("precompute_graph")->opaque);
  const auto &names = pre->attr("output_names")->strs;
  // Cuts in id order; the multi-output split is cut at its output 1 and the variable says so,
  // while the split -> sqrt -> expand_dims chain is precomputed whole.
  EXPECT_EQ(names, (std::vector<std::string>{"__mul_scalar__0", "split0_output1", "expand_dims0"}));
  auto values = interpret(withInputs(*pre, in), in);
  std::map<std::string, Tensor> newParams{{"x", in["x"]}};
  for (size_t i = 0; i < names.size(); ++i)
    newParams[names[i]] = values[i];
  Graph main = pruned;
  main.attrs.clear();
  Tensor got = interpret(withInputs(main, newParams), newParams).at(0);
  for (size_t i = 0; i < want.data.size(); ++i)
    EXPECT_DOUBLE_EQ(got.data[i], want.data[i]);
  // Without params nothing is cut and the graph comes back unchanged.
  g.attrs["param_name_list"] = GraphAttr::listStr({});
  Graph same = applyPasses(g, {"PrecomputePrune"});
  EXPECT_EQ(same.outputs()[0].node, g.outputs()[0].node);
  EXPECT_EQ(same.attr("precompute_graph"), nullptr);
}

TEST(OrderMutation, ReadsAndWritesOfAVariableAreOrdered) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1,2,3,3))\nmm = Variable(\"mm\")\nbefore = mm * 2\n"
         "bn = batch_norm(data=x, moving_mean=mm)\nafter = mm + 1\n"
         ":graph Group([bn, before, after])");
  Graph g = applyPasses(e.current()->graph, {"OrderMutation"});
  const IndexedGraph &idx = g.index();
  auto byName = [&](const char *n) { return idx.nodes[idx.findByName(n)]; };
  // batch_norm writes version 1 of mm: after the version-0 read; the version-1 read after it.
  ASSERT_EQ(byName("batch_norm0").controlDeps.size(), 1u);
  EXPECT_EQ(idx.nodes[byName("batch_norm0").controlDeps[0]].node->name, "__mul_scalar__0");
  ASSERT_EQ(byName("__add_scalar__0").controlDeps.size(), 1u);
  EXPECT_EQ(idx.nodes[byName("__add_scalar__0").controlDeps[0]].node->name, "batch_norm0");
  EXPECT_EQ(byName("__add_scalar__0").inputs[0].version, 1u);
  EXPECT_TRUE(byName("__mul_scalar__0").controlDeps.empty());
  // Without mutation the graph comes back as it was.
  Engine f;
  run(f, "x = Variable(\"x\")\ny = relu(x)\n:graph y");
  Graph same = applyPasses(f.current()->graph, {"OrderMutation"});
  EXPECT_EQ(same.outputs()[0].node, f.current()->graph.outputs()[0].node);
}

TEST(PlaceDevice, CopiesCrossDeviceEdgesOnly) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(2,2), dtype=1)\na = relu(x, __ctx_group__=\"g1\")\n"
         "b = exp(a, __ctx_group__=\"g2\")\ny = a + b + b\n:graph y");
  Graph g = e.current()->graph;
  g.attrs["device_group_attr_key"] = GraphAttr::string("__ctx_group__");
  GraphAttr m;
  m.type = GraphAttr::Type::DictStrInt;
  m.dict = {{"g1", 0}, {"g2", 1}};
  g.attrs["device_assign_map"] = m;
  g.attrs["device_copy_op"] = GraphAttr::string("copy");
  Graph placed = applyPasses(g, {"PlaceDevice"});
  std::vector<std::string> copies;
  for (const auto &n : placed.index().nodes)
    if (!n.node->isVariable() && n.node->op->name == "copy")
      copies.push_back(n.node->name);
  // relu0 -> exp0 crosses to device 1; exp0 -> the adds crosses back once (shared copy).
  EXPECT_EQ(copies, (std::vector<std::string>{"relu0_0_copy", "exp0_0_copy"}));
  EXPECT_EQ(placed.attr("device")->ints.size(), placed.index().numNodes());
  std::map<std::string, Tensor> in{{"x", tensor({2, 2}, {-1, 0.5, 2, -3}, kFloat64)}};
  Tensor want = interpret(withInputs(g, in), in).at(0);
  Graph plain = placed;
  plain.attrs.clear();
  Tensor got = interpret(withInputs(plain, in), in).at(0);
  EXPECT_EQ(got.data, want.data);
}
