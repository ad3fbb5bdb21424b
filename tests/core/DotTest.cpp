// DotTest: `:dot`'s Graphviz text — exact for a small fused graph, and parsed back by
// Graphviz's own cgraph library to prove it is valid DOT with the nodes, edges and clusters.
#include "TestUtil.h"

#include "core/Dot.h"

#include <graphviz/cgraph.h>

using namespace loupe;
using namespace loupe::test;

namespace {

Graph partitioned() {
  return applyPasses(built("x = Variable(\"x\", shape=(1,3,8,8), dtype=0)\n"
                           "y = split(relu(conv2d(x, channels=4, kernel_size=(3,3), "
                           "padding=(1,1))), indices_or_sections=2, axis=1)\n"
                           "z = y[0] + y[1]",
                           "z"),
                     {"InferShape", "InferType", "GraphFusePartition"});
}

} // namespace

TEST(Dot, SmallFusedGraphExactly) {
  EXPECT_EQ(graphToDot(partitioned()),
            R"(digraph loupe {
  rankdir=TB;
  node [fontname="Helvetica", fontsize=10];
  edge [fontname="Helvetica", fontsize=9];
  subgraph cluster_4 {
    label="group relu0";
    style=rounded;
    n3 [label="conv2d0\nconv2d\n(1, 4, 8, 8) float32", shape=box];
    n4 [label="relu0\nrelu\n(1, 4, 8, 8) float32", shape=box];
  }
  n0 [label="x\n(1, 3, 8, 8) float32", shape=ellipse, style=filled, fillcolor="#eeeeee"];
  n1 [label="conv2d0_weight\n(4, 3, 3, 3) float32", shape=ellipse, style=filled, fillcolor="#eeeeee"];
  n2 [label="conv2d0_bias\n(4,) float32", shape=ellipse, style=filled, fillcolor="#eeeeee"];
  n5 [label="split0\nsplit\n(1, 2, 8, 8) float32\n(1, 2, 8, 8) float32", shape=box];
  n6 [label="__add_symbol__0\nbroadcast_add\n(1, 2, 8, 8) float32", shape=box];
  n0 -> n3;
  n1 -> n3;
  n2 -> n3;
  n3 -> n4;
  n4 -> n5;
  n5 -> n6 [label="0"];
  n5 -> n6 [label="1"];
}
)");
}

TEST(Dot, GraphvizParsesItBack) {
  // A name with a quote and a backslash must survive escaping.
  Graph g = built("x = Variable(\"we\\\"ird\\\\name\")\ny = relu(x)", "y");
  for (const Graph &graph : {partitioned(), g}) {
    std::string text = graphToDot(graph);
    Agraph_t *parsed = agmemread(text.c_str());
    ASSERT_NE(parsed, nullptr) << text;
    EXPECT_EQ(agnnodes(parsed), static_cast<int>(graph.index().numNodes()));
    int edges = 0;
    for (const auto &n : graph.index().nodes)
      edges += static_cast<int>(n.inputs.size());
    EXPECT_EQ(agnedges(parsed), edges);
    agclose(parsed);
  }
  Agraph_t *parsed = agmemread(graphToDot(g).c_str());
  Agnode_t *x = agnode(parsed, const_cast<char *>("n0"), 0);
  ASSERT_NE(x, nullptr);
  // cgraph undoes the quote's escape; a label's "\\" stays for the renderer to draw as "\".
  EXPECT_EQ(std::string(agget(x, const_cast<char *>("label"))), "we\"ird\\\\name");
  agclose(parsed);
}
