// GraphTest: node ids by post-order DFS, node_row_ptr and entry ids, shared immutable nodes.
#include "TestUtil.h"

using namespace loupe;
using namespace loupe::test;

TEST(Graph, PostOrderIdsMatchTheSeed) {
  // Seed 001: x, w, b get ids 0-2, the first conv2d id 3 — `%3 = conv2d(%x, %w, %b …)`.
  Engine e;
  run(e, "x = Variable(\"x\")\nw = Variable(\"w\")\nb = Variable(\"b\")\n"
         "z = conv2d(data=x, weight=w, bias=b, channels=3, kernel_size=(5,5))\n"
         "z = z + conv2d(data=z, weight=w, bias=b, channels=3, kernel_size=(5,5), padding=[2,2])\n"
         ":graph z");
  const IndexedGraph &idx = e.current()->graph.index();
  ASSERT_EQ(idx.numNodes(), 6u);
  std::vector<std::string> names;
  for (const auto &n : idx.nodes)
    names.push_back(n.node->name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"x", "w", "b", "conv2d0", "conv2d1", "__add_symbol__0"}));
  EXPECT_EQ(idx.argNodes, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(idx.rowPtr, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6}));
  ASSERT_EQ(idx.heads.size(), 1u);
  EXPECT_EQ(idx.heads[0].nodeId, 5u);
  // conv2d1 reads conv2d0 (id 3), then the shared w and b.
  EXPECT_EQ(idx.nodes[4].inputs[0].nodeId, 3u);
  EXPECT_EQ(idx.nodes[4].inputs[1].nodeId, 1u);
}

TEST(Graph, MultiOutputNodesShiftEntryIds) {
  Engine e;
  run(e, "x = Variable(\"x\")\ns = split(x, indices_or_sections=3)\n"
         "y = relu(s[2])\n:graph Group([y, s[0]])");
  const IndexedGraph &idx = e.current()->graph.index();
  // ids: x 0, split0 1 (3 outputs), relu 2
  ASSERT_EQ(idx.numNodes(), 3u);
  EXPECT_EQ(idx.rowPtr, (std::vector<uint32_t>{0, 1, 4, 5}));
  EXPECT_EQ(idx.numEntries(), 5u);
  EXPECT_EQ(idx.entryId(1, 2), 3u);
  EXPECT_EQ(idx.entryId(2, 0), 4u);
  ASSERT_EQ(idx.heads.size(), 2u);
  EXPECT_EQ(idx.heads[1].nodeId, 1u);
  EXPECT_EQ(idx.heads[1].index, 0u);
}

TEST(Graph, BatchNormMutationBumpsVersions) {
  // nnvm-spec §1.1: inputs [[d,0,0],[g,0,0],[b,0,0],[mm,0,1],[mv,0,1]].
  Engine e;
  run(e, "d = Variable(\"d\")\ny = batch_norm(d)\n:graph y");
  const IndexedGraph &idx = e.current()->graph.index();
  const auto &bn = idx.nodes.back();
  ASSERT_EQ(bn.inputs.size(), 5u);
  std::vector<uint32_t> versions;
  for (const auto &in : bn.inputs)
    versions.push_back(in.version);
  EXPECT_EQ(versions, (std::vector<uint32_t>{0, 0, 0, 1, 1}));
  EXPECT_EQ(bn.node->numOutputs(), 3u);
  EXPECT_EQ(idx.heads.size(), 1u); // one visible output
}

TEST(Graph, ApplyingAnAnalysisSharesEveryNode) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(2,3))\ny = relu(x)\n:graph y");
  const Graph &before = e.current()->graph;
  Graph after = applyPasses(before, {"InferShape"});
  EXPECT_EQ(after.outputs()[0].node.get(), before.outputs()[0].node.get());
  EXPECT_EQ(before.attr("shape"), nullptr); // the input graph is untouched
  EXPECT_NE(after.attr("shape"), nullptr);
}

TEST(Graph, ImplicitVariablesCopyTheOpAttributes) {
  Engine e;
  run(e, "x = Variable(\"x\")\ny = dense(x, units=10)\n:graph y");
  const IndexedGraph &idx = e.current()->graph.index();
  const Node &w = *idx.nodes[1].node;
  EXPECT_EQ(w.name, "dense0_weight");
  ASSERT_EQ(w.attrs.size(), 1u);
  EXPECT_EQ(w.attrs[0], (std::pair<std::string, std::string>{"units", "10"}));
}

TEST(Graph, NameCountersArePerHint) {
  Engine e;
  run(e, "x = Variable(\"x\")\na = relu(x)\nb = relu(a)\nc = a + b\nd = c * 2\nf = -d\n"
         "g = 2 - f\nh = 1 / g\n:graph h");
  std::vector<std::string> names;
  for (const auto &n : e.current()->graph.index().nodes)
    names.push_back(n.node->name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"x", "relu0", "relu1", "__add_symbol__0", "__mul_scalar__0",
                                      "__mul_scalar__1", "__rsub_scalar__0", "__rdiv_scalar__0"}));
  const Node &neg = *e.current()->graph.index().nodes[5].node;
  EXPECT_EQ(*findAttr(neg.attrs, "scalar"), "-1.0");
}
