// ViewModelTest: the viewer's models without ImGui — dot layout, neighbourhoods and search,
// step diffs, fusion groups and their colours on the seed 001 graph, PlanMemory's buffer chart
// on the seed 000 build, and script stepping.
#include "TestUtil.h"

#include "core/Dot.h"
#include "core/Error.h"
#include "core/Interrupt.h"
#include "repl/TextFile.h"
#include "report/Report.h"
#include "view/BufferChart.h"
#include "view/CodeLines.h"
#include "view/Elide.h"
#include "view/FusionView.h"
#include "view/GraphSvg.h"
#include "view/Overview.h"
#include "view/ProfileView.h"
#include "view/Scopes.h"
#include "view/StepDiff.h"
#include "view/Viewer.h"

#include <graphviz/cgraph.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <thread>
#include <unistd.h>

using namespace loupe;
using namespace loupe::gui;

namespace {

const char *kSeed000 = "x = Variable(\"x\")\nw = Variable(\"w\")\nb = Variable(\"b\")\n"
                       "z = conv2d(data=x, weight=w, bias=b, channels=3, kernel_size=(5,5))\n"
                       "z = z + conv2d(data=z, weight=w, bias=b, channels=3, kernel_size=(5,5), "
                       "padding=[2,2])\n:graph z";

const char *kSeed001 = "x = Variable(\"x\", shape=(1,13,100,100), dtype=1)\n"
                       "z = conv2d(data=x, channels=13, kernel_size=(3,3), padding=[1,1])\n"
                       "z = relu(data=z)\n"
                       "z = conv2d(data=z, channels=13, kernel_size=(3,3), padding=[1,1])\n"
                       "z = relu(data=z)\nz = x + z\nz = flatten(z)\nz = dense(data=z, units=10)\n"
                       "z = softmax(data=z)\nz = sum(z, keepdims=True)\n:graph z";

void runAll(Viewer &v, const std::string &program) {
  std::istringstream in(program);
  std::string line;
  while (std::getline(in, line))
    ASSERT_TRUE(v.run(line)) << line << "\n" << v.console();
}

} // namespace

TEST(GraphLayout, TopToBottomWithLabelsAndNoOverlaps) {
  Viewer v;
  v.metrics.foldInputs = false; // every node a box of its own
  runAll(v, kSeed001);
  runAll(v, ":apply InferShape InferType");
  const Graph &g = v.engine().current()->graph;
  const GraphLayout &l = v.layout(v.engine().history().size() - 1);
  ASSERT_EQ(l.nodes.size(), g.index().numNodes());
  size_t edges = 0;
  for (const auto &n : g.index().nodes)
    edges += n.inputs.size();
  EXPECT_EQ(l.edges.size(), edges);
  // dot puts every producer above its consumers, and edges start at the producer's box.
  for (const LaidEdge &e : l.edges) {
    const LaidNode &a = l.nodes[l.find(e.from)], &b = l.nodes[l.find(e.to)];
    EXPECT_LT(a.y, b.y) << a.name << " -> " << b.name;
    ASSERT_GE(e.points.size(), 4u);
    // dot clips edges at the boxes: the curve starts on the producer's box and its arrowhead
    // ends on the consumer's.
    auto onBox = [](const Point &p, const LaidNode &n) {
      bool inside = std::abs(p.x - n.x) <= n.w / 2 + 2 && std::abs(p.y - n.y) <= n.h / 2 + 2;
      bool edge = std::abs(p.x - n.x) >= n.w / 2 - 2 || std::abs(p.y - n.y) >= n.h / 2 - 2;
      return inside && edge;
    };
    EXPECT_TRUE(onBox(e.points.front(), a)) << a.name << " -> " << b.name;
    EXPECT_TRUE(onBox(e.head, b)) << a.name << " -> " << b.name;
  }
  for (size_t i = 0; i < l.nodes.size(); ++i)
    for (size_t j = i + 1; j < l.nodes.size(); ++j) {
      const LaidNode &a = l.nodes[i], &b = l.nodes[j];
      bool apart = std::abs(a.x - b.x) >= (a.w + b.w) / 2 || std::abs(a.y - b.y) >= (a.h + b.h) / 2;
      EXPECT_TRUE(apart) << a.name << " overlaps " << b.name;
    }
  // Labels: op, name, then shape and dtype; params apart from the input x.
  const LaidNode &conv = l.nodes[l.find(g.index().findByName("conv2d0"))];
  EXPECT_EQ(conv.lines, (std::vector<std::string>{"conv2d", "conv2d0", "3×3 pad 1, 13 ch",
                                                  "(1, 13, 100, 100) float64"}));
  EXPECT_EQ(l.nodes[l.find(g.index().findByName("conv2d0_weight"))].kind, NodeKind::Param);
  EXPECT_EQ(l.nodes[l.find(g.index().findByName("x"))].kind, NodeKind::Input);
  EXPECT_EQ(l.nodes[l.find(g.index().findByName("x"))].lines[0], "input");
  // Boxes are as wide as the longest line at the given metrics (dot rounds to whole points).
  EXPECT_NEAR(conv.w, 25 * v.metrics.charWidth + 2 * v.metrics.padding, 1.0);
  // Cached: the same snapshot gives the same object.
  EXPECT_EQ(&l, &v.layout(v.engine().history().size() - 1));
}

// Large graphs, by either engine (past kBoundedBoxes dot's work is bounded): every producer
// above its consumers, no two boxes overlapping (a ladder of relu and add with skip edges, the
// shape that made dot take minutes); the layered layout draws this planar ladder without a
// crossing, as dot does.
TEST(GraphLayout, LargeGraphsAreStillLaidOutTopToBottomWithoutOverlaps) {
  std::string program = "a = Variable(\"x\", shape=(1, 8))\nb = relu(a)\n";
  for (size_t i = 0; i < kBoundedBoxes / 2 + 10; ++i)
    program += "c = relu(b) + a\na = b\nb = c\n";
  Engine e;
  test::run(e, program + ":graph b");
  const Graph &g = e.current()->graph;
  for (LayoutEngine engine : {LayoutEngine::Layered, LayoutEngine::Dot}) {
    LayoutOptions o;
    o.foldInputs = true;
    o.engine = engine;
    GraphLayout l = layoutGraph(g, o);
    ASSERT_GT(l.nodes.size(), kBoundedBoxes);
    for (const LaidEdge &edge : l.edges)
      EXPECT_LT(l.nodes[l.find(edge.from)].y, l.nodes[l.find(edge.to)].y);
    std::vector<const LaidNode *> byY;
    for (const LaidNode &n : l.nodes)
      byY.push_back(&n);
    std::sort(byY.begin(), byY.end(), [](auto *a, auto *b) { return a->y < b->y; });
    for (size_t i = 0; i < byY.size(); ++i) // boxes on one rank share a y; compare neighbours
      for (size_t j = i + 1; j < byY.size() && byY[j]->y - byY[i]->y < 200; ++j) {
        const LaidNode &a = *byY[i], &b = *byY[j];
        EXPECT_TRUE(std::abs(a.x - b.x) >= (a.w + b.w) / 2 - 0.5 ||
                    std::abs(a.y - b.y) >= (a.h + b.h) / 2 - 0.5)
            << a.name << " overlaps " << b.name;
      }
    if (engine == LayoutEngine::Layered) {
      EXPECT_EQ(l.crossings(), 0u);
    }
  }
}

// The viewer makes layouts on layout threads: nothing at first, the layout once made (the same
// boxes as a layout made in place), cached; two views asked for in one frame are made side by
// side (the timeline's two canvases); a layout no canvas asked for in the last frame is dropped
// (the user moved on) and made again when asked for again.
TEST(Viewer, LayoutsAreMadeOnLayoutThreads) {
  Viewer v;
  std::string program = "x = Variable(\"x\", shape=(1, 8))\n";
  for (int i = 0; i < 3000; ++i)
    program += "x = relu(x) + sigmoid(x)\n";
  runAll(v, program + ":graph x");
  v.newFrame();
  EXPECT_EQ(v.layoutSoon(0), nullptr);
  EXPECT_EQ(v.layingOut(), 9001u);
  EXPECT_EQ(v.layoutSoon(0, 5, 2), nullptr); // another view in the same frame
  v.waitForLayout();
  EXPECT_EQ(v.layingOut(), 0u);
  const GraphLayout *part = v.layoutSoon(0, 5, 2), *whole = v.layoutSoon(0);
  ASSERT_NE(part, nullptr);
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(part, &v.layout(0, 5, 2));
  EXPECT_EQ(whole, &v.layout(0));
  EXPECT_EQ(whole->nodes.size(), 9001u);
  EXPECT_EQ(whole->crossings(), 0u);
  // Another view (inputs not folded), asked for in one frame; a frame that does not ask for it
  // drops it unfinished.
  v.metrics.foldInputs = false;
  EXPECT_EQ(v.layoutSoon(0), nullptr);
  v.newFrame(); // it was asked for in the frame before: kept
  EXPECT_GT(v.layingOut(), 0u);
  v.newFrame(); // not asked for since: cancelled
  v.waitForLayout();
  EXPECT_EQ(v.layingOut(), 0u);
  EXPECT_EQ(v.layoutSoon(0), nullptr); // not made: asked again, made again
  v.waitForLayout();
  ASSERT_NE(v.layoutSoon(0), nullptr);
  EXPECT_EQ(v.layoutSoon(0)->nodes.size(), 9001u);
}

// The viewer's default: a variable that feeds exactly one op is drawn inside that op's box, a
// line with its name, shape and dtype; one read by two ops (seed 000's shared w and b, seed
// 001's x, read by the first convolution and the residual add) keeps its box. Edges from folded
// inputs are gone; finding a folded input finds the box it is drawn in.
TEST(GraphLayout, ParamsThatFeedOneOpAreFoldedIntoIt) {
  Viewer v;
  runAll(v, kSeed001);
  runAll(v, ":apply InferShape InferType");
  const Graph &g = v.engine().current()->graph;
  const IndexedGraph &idx = g.index();
  const GraphLayout &l = v.layout(v.engine().history().size() - 1);
  // 16 nodes: x, 6 params folded into conv2d0, conv2d1 and dense0; 10 boxes.
  EXPECT_EQ(idx.numNodes(), 16u);
  EXPECT_EQ(l.nodes.size(), 10u);
  const LaidNode &conv = l.nodes[l.find(idx.findByName("conv2d0"))];
  EXPECT_EQ(conv.lines, (std::vector<std::string>{"conv2d", "conv2d0", "3×3 pad 1, 13 ch",
                                                  "(1, 13, 100, 100) float64",
                                                  "conv2d0_weight (13, 13, 3, 3) float64",
                                                  "conv2d0_bias (13,) float64"}));
  EXPECT_EQ(conv.folded,
            (std::vector<uint32_t>{static_cast<uint32_t>(idx.findByName("conv2d0_weight")),
                                   static_cast<uint32_t>(idx.findByName("conv2d0_bias"))}));
  EXPECT_EQ(l.find(idx.findByName("conv2d0_weight")), l.find(idx.findByName("conv2d0")));
  EXPECT_EQ(l.nodes[l.find(idx.findByName("x"))].nid, static_cast<uint32_t>(idx.findByName("x")));
  uint32_t x = static_cast<uint32_t>(idx.findByName("x"));
  for (const LaidEdge &e : l.edges)
    EXPECT_FALSE(idx.nodes[e.from].node->isVariable() && e.from != x);
  EXPECT_EQ(l.edges.size(), 10u); // 16 inputs of ops, less the 6 from folded params
  // Seed 000: w and b feed both convolutions and stay boxes; x feeds one but is the graph's data
  // input (the convolution's first operand; nothing is bound), so it keeps its box too.
  Viewer v0;
  runAll(v0, kSeed000);
  const Graph &g0 = v0.engine().current()->graph;
  const GraphLayout &l0 = v0.layout(0);
  EXPECT_EQ(l0.nodes[l0.find(g0.index().findByName("w"))].nid,
            static_cast<uint32_t>(g0.index().findByName("w")));
  EXPECT_EQ(l0.nodes[l0.find(g0.index().findByName("b"))].nid,
            static_cast<uint32_t>(g0.index().findByName("b")));
  EXPECT_EQ(l0.nodes[l0.find(g0.index().findByName("x"))].nid,
            static_cast<uint32_t>(g0.index().findByName("x")));
  // The toggle lays the graph out again with every box.
  v.metrics.foldInputs = false;
  EXPECT_EQ(v.layout(v.engine().history().size() - 1).nodes.size(), 16u);
}

// A param several ops read — an exporter's shared initializer — is a line in each reader's box
// instead of a hub of edges; an input several ops read keeps its box. Collapsed groups hold it
// as a member wherever one of its readers is.
TEST(GraphLayout, ParamsThatSeveralOpsReadAreFoldedIntoEach) {
  Engine e;
  test::run(e, "x = Variable(\"x\", shape=(1, 4))\nb = Variable(\"shared.bias\", shape=(1, 4))\n"
               "y = relu(x + b) + b\n:graph y\n:apply InferShape InferType");
  const Graph &g = e.current()->graph;
  const IndexedGraph &idx = g.index();
  auto id = [&](const char *name) { return static_cast<uint32_t>(idx.findByName(name)); };
  LayoutOptions o;
  o.foldInputs = true;
  GraphLayout plain = layoutGraph(g, o); // not a param: its own box, read by both adds
  EXPECT_EQ(plain.nodes.size(), 5u);     // x (the data input keeps its box), b, relu, two adds
  EXPECT_EQ(plain.nodes[plain.find(id("shared.bias"))].nid, id("shared.bias"));
  o.params = {"shared.bias"};
  GraphLayout l = layoutGraph(g, o);
  ASSERT_EQ(l.nodes.size(), 4u); // x, the two adds and relu
  for (const char *add : {"__add_symbol__0", "__add_symbol__1"}) {
    const LaidNode &box = l.nodes[l.find(id(add))];
    EXPECT_NE(std::find(box.folded.begin(), box.folded.end(), id("shared.bias")), box.folded.end())
        << add;
    EXPECT_EQ(box.lines.back(), "shared.bias (1, 4)"); // no dtype given, none inferred
  }
  EXPECT_EQ(l.edges.size(), 3u); // x → add0 → relu → add1: no edge from the shared bias
  // Each add collapsed into a box of its own: the bias is a member of both.
  o.collapsed = {{{id("__add_symbol__0")}, {"first"}, ""},
                 {{id("__add_symbol__1")}, {"second"}, ""}};
  GraphLayout c = layoutGraph(g, o);
  for (const LaidNode &box : c.nodes) {
    if (box.members.empty())
      continue;
    EXPECT_NE(std::find(box.members.begin(), box.members.end(), id("shared.bias")),
              box.members.end());
  }
}

// The viewer counts a loaded model's initializers as params: in PyTorch's GRU tagger, unrolled
// over time, each recurrent weight is read at every step, and is drawn inside each reader.
TEST(GraphLayout, ALoadedModelsSharedInitializersAreFolded) {
  Viewer v;
  runAll(v, ":load " LOUPE_SOURCE_DIR "/tests/onnx/data/exports/test_torch_gru_tagger/model.onnx");
  const Graph &g = v.engine().current()->graph;
  const IndexedGraph &idx = g.index();
  const GraphLayout &l = v.layout(0);
  std::vector<int> readers(idx.numNodes(), 0);
  for (const auto &n : idx.nodes)
    for (const auto &e : n.inputs)
      ++readers[e.nodeId];
  int shared = 0;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    if (!n.isVariable() || !v.engine().modelParams().count(n.name))
      continue;
    shared += readers[nid] > 1;
    EXPECT_NE(l.nodes[static_cast<size_t>(l.find(nid))].nid, nid) << n.name; // inside a reader
  }
  EXPECT_GE(shared, 3); // the tagger's recurrent weights, each read at every time step
  for (const LaidEdge &e : l.edges)
    EXPECT_FALSE(v.engine().modelParams().count(idx.nodes[e.from].node->name));
}

// Seed 001's partition with its groups collapsed (by hand from `:groups`): conv2d0+relu0 and
// conv2d1+relu1+add become one box each (their folded weights and biases inside); flatten,
// dense, softmax and sum are groups of one and stay as they are; x feeds two groups and keeps
// its box: 7 boxes, and 7 edges (x to both boxes, box to box, then the chain to sum0).
TEST(GraphLayout, CollapsedGroupsAreOneBoxEach) {
  Viewer v;
  runAll(v, kSeed001);
  runAll(v, ":apply InferShape InferType GraphFusePartition");
  size_t step = v.engine().history().size() - 1;
  const Graph &g = v.engine().current()->graph;
  const IndexedGraph &idx = g.index();
  auto id = [&](const char *name) { return static_cast<uint32_t>(idx.findByName(name)); };
  std::set<std::string> roots;
  for (const GroupView &gv : v.groups())
    roots.insert(gv.rootName);
  const GraphLayout &l = v.layout(step, -1, -1, roots);
  EXPECT_EQ(l.nodes.size(), 7u);
  EXPECT_EQ(l.edges.size(), 7u);
  const LaidNode &first = l.nodes[static_cast<size_t>(l.find(id("conv2d0")))];
  EXPECT_EQ(first.nid, id("relu0"));
  EXPECT_EQ(first.lines,
            (std::vector<std::string>{"fuse_conv2d_relu", "OutEWiseFusable", "2 ops: conv2d, relu",
                                      "(1, 13, 100, 100) float64"}));
  EXPECT_EQ(first.members, (std::vector<uint32_t>{id("conv2d0_weight"), id("conv2d0_bias"),
                                                  id("conv2d0"), id("relu0")}));
  const LaidNode &second = l.nodes[static_cast<size_t>(l.find(id("relu1")))];
  EXPECT_EQ(second.nid, id("__add_symbol__0"));
  EXPECT_EQ(second.lines[2], "3 ops: conv2d, relu, broadcast_add");
  EXPECT_EQ(l.find(id("conv2d1_bias")), l.find(id("__add_symbol__0")));
  std::set<std::pair<uint32_t, uint32_t>> edges;
  for (const LaidEdge &e : l.edges)
    edges.insert({e.from, e.to});
  EXPECT_EQ(edges, (std::set<std::pair<uint32_t, uint32_t>>{{id("x"), id("relu0")},
                                                            {id("x"), id("__add_symbol__0")},
                                                            {id("relu0"), id("__add_symbol__0")},
                                                            {id("__add_symbol__0"), id("flatten0")},
                                                            {id("flatten0"), id("dense0")},
                                                            {id("dense0"), id("softmax0")},
                                                            {id("softmax0"), id("sum0")}}));
  // No region is drawn around a collapsed group; expanded again, the layout is the full one.
  EXPECT_TRUE(groupRegions(v.groups(), l, 8).empty());
  EXPECT_EQ(v.layout(step, -1, -1, {}).nodes.size(), 10u);
  EXPECT_EQ(groupRegions(v.groups(), v.layout(step), 8).size(), 2u);
  // One group only.
  EXPECT_EQ(v.layout(step, -1, -1, {"relu0"}).nodes.size(), 9u);
}

// Key attributes in short form: window, stride and padding when not 1 and 0, channels, groups.
TEST(GraphLayout, KeyAttributesInShortForm) {
  Engine e;
  loupe::test::run(e,
                   "x = Variable(\"x\")\n"
                   "a = conv2d(x, channels=64, kernel_size=(7,7), strides=(2,2), padding=(3,3))\n"
                   "b = conv2d(a, channels=64, groups=64, kernel_size=(3,3), padding=(1,1))\n"
                   "c = conv2d(b, channels=8, groups=2, kernel_size=(1,3), padding=(0,1))\n"
                   "d = max_pool2d(c, pool_size=(3,3), strides=(2,2))\n"
                   "y = dense(flatten(avg_pool2d(d, pool_size=(2,2))), units=1000)\n:graph y");
  const Graph &g = e.current()->graph;
  std::vector<std::string> keys;
  for (const auto &n : g.index().nodes)
    if (std::string k = keyAttributes(*n.node); !k.empty())
      keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"7×7 /2 pad 3, 64 ch", "3×3 pad 1, 64 ch, depthwise",
                                            "1×3 pad 0,1, 8 ch, 2 groups", "3×3 /2", "2×2",
                                            "1000 units"}));
}

TEST(GraphLayout, NeighbourhoodAndSearch) {
  Viewer v;
  runAll(v, "x = Variable(\"x\")\ny = exp(tanh(relu(sigmoid(x))))\n:graph y");
  const Graph &g = v.engine().current()->graph;
  const IndexedGraph &idx = g.index();
  uint32_t relu = static_cast<uint32_t>(idx.findByName("relu0"));
  std::vector<std::string> names;
  for (uint32_t nid : neighbourhood(g, relu, 1))
    names.push_back(idx.nodes[nid].node->name);
  EXPECT_EQ(names, (std::vector<std::string>{"sigmoid0", "relu0", "tanh0"}));
  EXPECT_EQ(neighbourhood(g, relu, 0).size(), 1u);
  EXPECT_EQ(neighbourhood(g, relu, 10).size(), 5u);
  const GraphLayout &part = v.layout(0, static_cast<int>(relu), 1);
  EXPECT_EQ(part.nodes.size(), 3u);
  EXPECT_EQ(part.edges.size(), 2u);
  std::vector<uint32_t> found = searchNodes(g, "TANH");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(idx.nodes[found[0]].node->name, "tanh0");
  EXPECT_TRUE(searchNodes(g, "nothing").empty());
  // By op too: a node named otherwise is found by what it computes.
  runAll(v, "a = Variable(\"a\")\nb = relu(a, name=\"/blk/Act\")\n:graph b");
  const Graph &g2 = v.engine().current()->graph;
  EXPECT_EQ(searchNodes(g2, "relu"),
            std::vector<uint32_t>{static_cast<uint32_t>(g2.index().findByName("/blk/Act"))});
  EXPECT_EQ(searchNodes(g2, "blk").size(), 1u); // and by scope, part of its name
}

namespace {

// relu(batch_norm(x)) through SimplifyInference in `v`: the diff of its two steps.
StepDiff batchNormStep(Viewer &v) {
  runAll(v, "x = Variable(\"x\", shape=(1, 4, 3, 3))\ny = relu(batch_norm(x, name=\"bn\"))\n"
            ":graph y\n:apply InferShape SimplifyInference");
  const auto &h = v.engine().history();
  return diffGraphs(h[0].graph, h[1].graph, "step 0", "step 1");
}

} // namespace

TEST(StepDiff, SimplifyInferenceRewritesBatchNorm) {
  Viewer v;
  StepDiff d = batchNormStep(v);
  const auto &h = v.engine().history();
  EXPECT_EQ(d.of("bn"), Change::Removed);
  EXPECT_EQ(d.of("relu0"), Change::Changed);
  EXPECT_EQ(d.of("x"), Change::Same);
  ASSERT_LT(d.index.at("relu0"), d.nodes.size());
  const NodeChange &relu = d.nodes[d.index.at("relu0")];
  ASSERT_EQ(relu.details.size(), 1u);
  EXPECT_EQ(relu.details[0].rfind("inputs: bn.0 -> ", 0), 0u) << relu.details[0];
  size_t added = std::count_if(d.nodes.begin(), d.nodes.end(),
                               [](const NodeChange &c) { return c.change == Change::Added; });
  EXPECT_GE(added, 2u); // at least the scale multiply and the shift add
  EXPECT_NE(d.irDiff.find("--- step 0"), std::string::npos);
  EXPECT_NE(d.irDiff.find("-  %5 = batch_norm("), std::string::npos) << d.irDiff;
  // The viewer computes a step's diff once and keeps it.
  const StepDiff &cached = v.diff(1);
  EXPECT_EQ(&cached, &v.diff(1));
  EXPECT_EQ(cached.irDiff, d.irDiff);
  EXPECT_EQ(cached.nodes.size(), d.nodes.size());
  // An unchanged step has no differences.
  StepDiff same = diffGraphs(h[1].graph, h[1].graph);
  EXPECT_TRUE(same.nodes.empty());
  EXPECT_TRUE(same.irDiff.empty());
}

TEST(StepDiff, AttributeChangesAreListed) {
  Viewer v;
  runAll(v, "x = Variable(\"x\", shape=(1,3,8,8), dtype=0)\n"
            "y = conv2d(x, channels=16, kernel_size=(3,3), padding=(1,1), name=\"conv\")\n"
            ":graph y\n:apply InferShape InferType AlterOpLayout");
  const auto &h = v.engine().history();
  StepDiff d = diffGraphs(h[0].graph, h[1].graph);
  ASSERT_EQ(d.of("conv"), Change::Changed);
  const auto &det = d.nodes[d.index.at("conv")].details;
  EXPECT_EQ(det[0], "op conv2d -> _contrib_conv2d_NCHWc");
  EXPECT_NE(std::find(det.begin(), det.end(), "attr layout: (unset) -> NCHW3c"), det.end());
  EXPECT_NE(std::find(det.begin(), det.end(), "attr out_layout: (unset) -> NCHW8c"), det.end());
}

TEST(StepDiff, RowsListChangesThenTheIRDiff) {
  Viewer v;
  StepDiff d = batchNormStep(v);
  const auto &h = v.engine().history();
  const std::vector<ChangeRow> &rows = d.rows;
  // Each node change is a row, followed by one row per detail.
  size_t details = 0;
  for (const NodeChange &c : d.nodes)
    details += c.details.size();
  size_t diffLines = std::count(d.irDiff.begin(), d.irDiff.end(), '\n') +
                     (d.irDiff.empty() || d.irDiff.back() == '\n' ? 0 : 1);
  ASSERT_EQ(rows.size(), d.nodes.size() + details + 1 + diffLines);
  auto relu = std::find_if(rows.begin(), rows.end(),
                           [](const ChangeRow &r) { return r.text == "changed relu0"; });
  ASSERT_NE(relu, rows.end());
  EXPECT_EQ(relu->kind, RowKind::Changed);
  EXPECT_EQ((relu + 1)->kind, RowKind::Detail);
  EXPECT_EQ((relu + 1)->text.rfind("inputs: bn.0 -> ", 0), 0u);
  auto bn = std::find_if(rows.begin(), rows.end(),
                         [](const ChangeRow &r) { return r.text == "removed bn"; });
  ASSERT_NE(bn, rows.end());
  EXPECT_EQ(bn->kind, RowKind::Removed);
  auto sep = std::find_if(rows.begin(), rows.end(),
                          [](const ChangeRow &r) { return r.kind == RowKind::Separator; });
  ASSERT_EQ(sep - rows.begin(), static_cast<ptrdiff_t>(d.nodes.size() + details));
  EXPECT_EQ((sep + 1)->text, "--- step 0");
  EXPECT_EQ((sep + 1)->kind, RowKind::DiffRemoved);
  EXPECT_EQ((sep + 2)->text, "+++ step 1");
  EXPECT_EQ((sep + 2)->kind, RowKind::DiffAdded);
  auto removedLine = std::find_if(sep, rows.end(), [](const ChangeRow &r) {
    return r.text.rfind("-  %5 = batch_norm(", 0) == 0;
  });
  ASSERT_NE(removedLine, rows.end());
  EXPECT_EQ(removedLine->kind, RowKind::DiffRemoved);
  EXPECT_TRUE(
      std::any_of(sep, rows.end(), [](const ChangeRow &r) { return r.kind == RowKind::DiffSame; }));
  // An unchanged step: one row that says so and the separator.
  StepDiff same = diffGraphs(h[1].graph, h[1].graph);
  ASSERT_EQ(same.rows.size(), 2u);
  EXPECT_EQ(same.rows[0].kind, RowKind::None);
  EXPECT_EQ(same.rows[0].text, "No node changed.");
  EXPECT_EQ(same.rows[1].kind, RowKind::Separator);
}

TEST(FusionView, Seed001GroupsKeepTheirColoursOnTheDeployGraph) {
  Viewer v;
  runAll(v, kSeed001);
  runAll(v, ":apply InferShape InferType\n:apply GraphFusePartition");
  const Graph &part = v.engine().current()->graph;
  ASSERT_TRUE(hasGroups(part));
  std::vector<GroupView> groups = fusionGroups(part);
  // The six op groups of `:groups` (plus one per variable, which GraphFusePartition gives a
  // root of its own but no function).
  std::vector<std::string> functions;
  for (const GroupView &gv : groups)
    functions.push_back(gv.function);
  EXPECT_EQ(functions,
            (std::vector<std::string>{"fuse_conv2d_relu", "fuse_conv2d_relu_broadcast_add",
                                      "fuse_flatten", "fuse_dense", "fuse_softmax", "fuse_sum"}));
  // (Names are this program's: the seed's session made two convolutions before.)
  EXPECT_EQ(groups[1].rootName, "__add_symbol__0");
  EXPECT_EQ(groups[1].masterName, "conv2d1");
  EXPECT_EQ(groups[1].pattern, "OutEWiseFusable");
  EXPECT_EQ(groups[1].memberNames,
            (std::vector<std::string>{"conv2d1", "relu1", "__add_symbol__0"}));
  // The viewer's per-snapshot copy is the same list, computed once.
  EXPECT_EQ(v.groups().size(), groups.size());
  EXPECT_EQ(&v.groups(), &v.groups());
  std::set<uint32_t> colours;
  for (const GroupView &gv : groups)
    colours.insert(gv.colour);
  EXPECT_EQ(colours.size(), 6u);

  // Regions: only the two multi-node groups, each around exactly its members' boxes.
  const GraphLayout &l = v.layout(v.engine().history().size() - 1);
  std::vector<GroupRegion> regions = groupRegions(groups, l, 8);
  ASSERT_EQ(regions.size(), 2u);
  EXPECT_EQ(regions[0].group, 0);
  EXPECT_EQ(regions[1].group, 1);
  for (const GroupRegion &r : regions) {
    // Every member's box lies inside, and the region is tight: 8 units from the outermost ones.
    double left = 1e9, top = 1e9, right = -1e9, bottom = -1e9;
    for (uint32_t m : groups[static_cast<size_t>(r.group)].members) {
      const LaidNode &n = l.nodes[static_cast<size_t>(l.find(m))];
      EXPECT_GE(n.x - n.w / 2, r.x0) << n.name;
      EXPECT_LE(n.x + n.w / 2, r.x1) << n.name;
      EXPECT_GE(n.y - n.h / 2, r.y0) << n.name;
      EXPECT_LE(n.y + n.h / 2, r.y1) << n.name;
      left = std::min(left, n.x - n.w / 2);
      top = std::min(top, n.y - n.h / 2);
      right = std::max(right, n.x + n.w / 2);
      bottom = std::max(bottom, n.y + n.h / 2);
    }
    EXPECT_DOUBLE_EQ(r.x0, left - 8);
    EXPECT_DOUBLE_EQ(r.y0, top - 8);
    EXPECT_DOUBLE_EQ(r.x1, right + 8);
    EXPECT_DOUBLE_EQ(r.y1, bottom + 8);
  }

  runAll(v, ":setattr target llvm str\n:apply GraphFuseCompile");
  std::vector<GroupView> deploy = fusionGroups(v.engine().current()->graph);
  ASSERT_EQ(deploy.size(), groups.size());
  for (size_t i = 0; i < groups.size(); ++i) {
    EXPECT_EQ(deploy[i].function, groups[i].function);
    EXPECT_EQ(deploy[i].colour, groups[i].colour);
    EXPECT_EQ(deploy[i].rootName, groups[i].rootName);
    std::vector<std::string> a = deploy[i].memberNames, b = groups[i].memberNames;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b) << groups[i].function;
  }
  EXPECT_FALSE(hasGroups(v.engine().history()[0].graph));
}

TEST(BufferChart, Seed000BuildMatchesBuffersCommand) {
  Viewer v;
  runAll(v, kSeed000);
  runAll(v, ":build shape x=(7,3,11,13)");
  BufferChart c = bufferChart(v.engine().current()->graph);
  // :buffers of seed 000: five slots, 23508 bytes planned and naive.
  ASSERT_EQ(c.rows.size(), 5u);
  EXPECT_EQ(c.planned, 23508);
  EXPECT_EQ(c.naive, 23508);
  std::vector<int64_t> bytes;
  for (const BufferRow &r : c.rows)
    bytes.push_back(r.bytes);
  EXPECT_EQ(bytes, (std::vector<int64_t>{5292, 5292, 12012, 900, 12}));
  // storage 2 holds x from node 0 to its last reader, node 3 (the first tvm_op).
  ASSERT_EQ(c.rows[2].bars.size(), 1u);
  EXPECT_EQ(c.rows[2].bars[0].name, "x");
  EXPECT_EQ(c.rows[2].bars[0].first, 0u);
  EXPECT_EQ(c.rows[2].bars[0].last, 3u);
  // The output lives to the end.
  EXPECT_EQ(c.rows[1].bars[0].last, c.steps - 1);
}

TEST(BufferChart, PlannedSlotsNeverHoldTwoLiveEntries) {
  Viewer v;
  runAll(v, kSeed001);
  runAll(v, ":build");
  BufferChart c = bufferChart(v.engine().current()->graph);
  EXPECT_LT(c.planned, c.naive); // seed 001 reuses storage
  for (const BufferRow &r : c.rows)
    for (size_t i = 0; i + 1 < r.bars.size(); ++i)
      // An entry may start where the previous one ends (in place), never before.
      EXPECT_LE(r.bars[i].last, r.bars[i + 1].first) << r.bars[i].name;
  Viewer none;
  runAll(none, kSeed000);
  EXPECT_THROW(bufferChart(none.engine().current()->graph), Error);
  // A plan over size symbols has no sizes to draw: the chart says so, naming the symbols.
  Viewer sym;
  runAll(sym, "x = Variable(\"x\", shape=\"(batch, 8)\")\ny = exp(x)\n:graph y\n"
              ":apply InferShape InferType PlanMemory");
  try {
    bufferChart(sym.engine().current()->graph);
    ADD_FAILURE() << "a symbolic plan drew";
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()), "the sizes are expressions of batch; :buffers prints them, "
                                     "and a :run at a size has a variant whose buffers draw");
  }
}

TEST(Viewer, StepsThroughASessionForwardAndBack) {
  Viewer v;
  ASSERT_EQ(v.open(LOUPE_SOURCE_DIR "/sessions/seed001/fusion.session"), "");
  ASSERT_GT(v.script().size(), 15u);
  EXPECT_EQ(v.engine().history().size(), 0u);
  v.runTo(17); // the 16 statements and :graph z
  EXPECT_EQ(v.engine().history().size(), 1u);
  ASSERT_TRUE(v.stepForward()); // :apply InferShape InferType
  EXPECT_EQ(v.engine().history().size(), 2u);
  const Graph *applied = &v.engine().history()[1].graph;
  // Back: the snapshot of step 0 becomes current again; nothing runs.
  ASSERT_TRUE(v.stepBack());
  EXPECT_EQ(v.scriptPos(), 17u);
  EXPECT_EQ(v.engine().history().size(), 2u);
  EXPECT_EQ(v.engine().cursor(), 0u);
  EXPECT_NE(v.console().find("loupe> :graph z\nstep 0: graph z"), std::string::npos);
  EXPECT_NE(v.console().find("# at input 17 of"), std::string::npos);
  EXPECT_EQ(v.console().find("# replaying"), std::string::npos);
  // Forward again: the same snapshot, not a second run of the input.
  ASSERT_TRUE(v.stepForward());
  EXPECT_EQ(v.engine().cursor(), 1u);
  EXPECT_EQ(&v.engine().history()[1].graph, applied);
  EXPECT_EQ(v.scriptRun(), 18u);
  // A console input made at an earlier position replaces what came after it: stepping
  // forward then runs the script's next input anew.
  ASSERT_TRUE(v.stepBack());
  ASSERT_TRUE(v.run(":apply InferShape"));
  EXPECT_EQ(v.scriptRun(), 17u);
  ASSERT_TRUE(v.stepForward());
  EXPECT_EQ(v.scriptRun(), 18u);
  EXPECT_EQ(v.engine().history().size(), 3u);
  // Before the first graph step there is no snapshot: those positions are replayed.
  v.runTo(3);
  EXPECT_EQ(v.scriptPos(), 3u);
  EXPECT_TRUE(v.engine().history().empty());
  EXPECT_NE(v.console().find("# replaying"), std::string::npos);
  v.runTo(0);
  EXPECT_FALSE(v.stepBack());
  size_t inputs = v.script().size();
  EXPECT_EQ(v.open("/nonexistent.session"),
            "/nonexistent.session: cannot open: No such file or directory");
  EXPECT_EQ(v.script().size(), inputs); // a failed open changes nothing
  // A graph file goes through :load, whose one-line error comes back without its prefix.
  EXPECT_EQ(v.open("/nonexistent.json"),
            "/nonexistent.json: cannot open: No such file or directory");
}

namespace {

// Polls a viewer's work the way a frame loop does, until it ends (or a minute passes).
bool waitForWork(Viewer &v) {
  for (int i = 0; i < 6000; ++i) {
    if (v.poll())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

} // namespace

TEST(Viewer, RunsABuildOnAWorkerThreadWithProgress) {
  Viewer v;
  v.startWork([](Viewer &w) {
    w.run(":model squeezenet1.1 classes=10");
    w.run(":build opt_level=3");
  });
  ASSERT_TRUE(waitForWork(v));
  EXPECT_FALSE(v.busy());
  ASSERT_EQ(v.engine().history().size(), 2u) << v.console();
  EXPECT_NE(v.console().find("step 1: build opt_level=3"), std::string::npos);
  // The last status the build reported stays on show: every kernel done.
  auto [status, fraction] = v.progress();
  EXPECT_NE(status.find(" kernels, "), std::string::npos) << status;
  EXPECT_EQ(fraction, 1.0);
}

TEST(Viewer, StopInterruptsTheWorkAndKeepsTheState) {
  Viewer v;
  ASSERT_TRUE(v.run(":model resnet-18"));
  v.startWork([](Viewer &w) { w.run(":build opt_level=3"); });
  v.interrupt(); // the Stop button: the build ends at its next safe point
  ASSERT_TRUE(waitForWork(v));
  EXPECT_NE(v.console().find("loupe> :build opt_level=3\ninterrupted\n"), std::string::npos)
      << v.console();
  EXPECT_EQ(v.engine().history().size(), 1u);
  EXPECT_FALSE(interruptRequested()); // the request ends with the work it stopped
  ASSERT_TRUE(v.run(":history"));
}

// After :profile the built step keeps each tvm_op's median time; the viewer colours each kernel
// by its share of the run, white (none) to red (the largest share).
TEST(ProfileView, KernelsColouredByTheirShareOfTheRun) {
  Viewer v;
  runAll(v, kSeed001);
  runAll(v, ":build opt_level=2");
  runAll(v, ":profile 3");
  const Step &st = *v.engine().current();
  const Graph &g = st.graph;
  const IndexedGraph &idx = g.index();
  size_t calls = 0;
  for (const auto &n : idx.nodes)
    calls += !n.node->isVariable() && n.node->op->name == "tvm_op";
  ASSERT_EQ(st.profile.size(), calls);
  std::vector<double> share = timeShares(g, st.profile);
  double sum = 0;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    bool kernel = !idx.nodes[nid].node->isVariable();
    EXPECT_EQ(share[nid] >= 0, kernel) << idx.nodes[nid].node->name;
    if (kernel)
      sum += share[nid];
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);
  // Shares are times over their sum, exactly.
  std::map<uint32_t, KernelTime> made = {{1, {3.0, 0, 0}}, {4, {1.0, 0, 0}}};
  std::vector<double> s2 = timeShares(g, made);
  EXPECT_EQ(s2[1], 0.75);
  EXPECT_EQ(s2[4], 0.25);
  EXPECT_EQ(s2[0], -1);
  std::vector<double> none = timeShares(g, {});
  EXPECT_TRUE(std::all_of(none.begin(), none.end(), [](double x) { return x == -1; }));
  // The scale: white at no time, red (200, 30, 30) at the largest share, halfway between.
  EXPECT_EQ(heatColour(0, 0.5), 0xffffffffu);
  EXPECT_EQ(heatColour(0.5, 0.5), 0xc81e1effu);
  EXPECT_EQ(heatColour(0.25, 0.5), 0xe48f8fffu);
}

// The overview map, by hand: a 1000 x 4000 layout in an 800 x 600 canvas at zoom 1 does not
// fit, so the map is shown, 180 px on its longer side (scale 180/4000 = 0.045: 45 x 180) 10 px
// from the bottom-right corner; the window (layout 0..800 x 0..600) is 36 x 27 map pixels at its
// top-left. A click at map (767.5, 500) is layout point (500, 2000), which the pan centres.
TEST(Overview, MapWindowAndClickByHand) {
  gui::CanvasWindow w{800, 600, 1, 0, 0};
  gui::Overview o = gui::overviewOf(1000, 4000, w);
  ASSERT_TRUE(o.shown);
  EXPECT_DOUBLE_EQ(o.scale, 0.045);
  EXPECT_DOUBLE_EQ(o.map.x0, 745);
  EXPECT_DOUBLE_EQ(o.map.y0, 410);
  EXPECT_DOUBLE_EQ(o.map.x1, 790);
  EXPECT_DOUBLE_EQ(o.map.y1, 590);
  EXPECT_DOUBLE_EQ(o.window.x0, 745);
  EXPECT_DOUBLE_EQ(o.window.y0, 410);
  EXPECT_DOUBLE_EQ(o.window.x1, 781);
  EXPECT_DOUBLE_EQ(o.window.y1, 437);
  gui::centreOn(o, 767.5, 500, w);
  EXPECT_DOUBLE_EQ(w.panX, 400 - 500);
  EXPECT_DOUBLE_EQ(w.panY, 300 - 2000);
  // Zoomed to 0.5 there, the window is twice as large on the map and centred on the point.
  w.zoom = 0.5;
  w.panX = 400 - 500 * 0.5;
  w.panY = 300 - 2000 * 0.5;
  o = gui::overviewOf(1000, 4000, w);
  EXPECT_DOUBLE_EQ(o.window.y0, 410 + (2000 - 600) * 0.045);
  EXPECT_DOUBLE_EQ(o.window.y1, 410 + (2000 + 600) * 0.045);
  // A click past the map's edge centres on the layout's edge.
  gui::centreOn(o, 0, 10000, w);
  EXPECT_DOUBLE_EQ(w.panX, 400 - 0);
  EXPECT_DOUBLE_EQ(w.panY, 300 - 4000 * 0.5);
}

TEST(Overview, NotShownWhenTheWholeGraphIsInView) {
  EXPECT_FALSE(gui::overviewOf(300, 200, {800, 600, 1, 10, 10}).shown);
  EXPECT_TRUE(gui::overviewOf(300, 200, {800, 600, 1, 10, -1}).shown); // its top is cut off
  EXPECT_FALSE(gui::overviewOf(0, 0, {800, 600, 1, 0, 0}).shown);      // nothing laid out
}

// After :build, a tvm_op maps to the source nodes it computes (by hand from seed 001's groups:
// relu0 computes conv2d0 and relu0; __add_symbol__0 computes conv2d1, relu1 and the add), and
// a source node to its kernel. Variables run in no kernel.
TEST(FusionView, DeployKernelsMapToTheirSourceNodes) {
  Viewer v;
  runAll(v, kSeed001);
  runAll(v, ":build");
  const auto &h = v.engine().history();
  const Graph &src = h[h.size() - 2].graph, &dep = h.back().graph;
  auto sid = [&](const char *n) { return static_cast<uint32_t>(src.index().findByName(n)); };
  auto did = [&](const char *n) { return static_cast<uint32_t>(dep.index().findByName(n)); };
  EXPECT_EQ(sourceNodesOf(dep, did("relu0"), src),
            (std::vector<uint32_t>{sid("conv2d0"), sid("relu0")}));
  EXPECT_EQ(sourceNodesOf(dep, did("__add_symbol__0"), src),
            (std::vector<uint32_t>{sid("conv2d1"), sid("relu1"), sid("__add_symbol__0")}));
  EXPECT_EQ(sourceNodesOf(dep, did("dense0"), src), (std::vector<uint32_t>{sid("dense0")}));
  EXPECT_TRUE(sourceNodesOf(dep, did("x"), src).empty());
  EXPECT_EQ(kernelOf(dep, src, sid("relu1")), static_cast<int>(did("__add_symbol__0")));
  EXPECT_EQ(kernelOf(dep, src, sid("conv2d0")), static_cast<int>(did("relu0")));
  EXPECT_EQ(kernelOf(dep, src, sid("conv2d0_weight")), -1);
}

// Squeezenet's fire modules share fused functions (one fuse_conv2d_relu_2 for many groups):
// each tvm_op still maps to its own convolution and relu, the ones its name says.
TEST(FusionView, SharedFunctionsMapEachKernelToItsOwnNodes) {
  Viewer v;
  runAll(v, ":model squeezenet1.0\n:build");
  const auto &h = v.engine().history();
  const Graph &src = h[h.size() - 2].graph, &dep = h.back().graph;
  const IndexedGraph &di = dep.index(), &si = src.index();
  int checked = 0;
  std::map<std::string, int> uses;
  for (uint32_t k = 0; k < di.numNodes(); ++k) {
    const Node &n = *di.nodes[k].node;
    if (n.isVariable() || n.name.rfind("squeezenet0_relu", 0) != 0)
      continue;
    ++uses[n.parsed.getStr("func_name")];
    std::string index = n.name.substr(std::string("squeezenet0_relu").size());
    EXPECT_EQ(
        sourceNodesOf(dep, k, src),
        (std::vector<uint32_t>{static_cast<uint32_t>(si.findByName("squeezenet0_conv" + index)),
                               static_cast<uint32_t>(si.findByName(n.name))}))
        << n.name;
    ++checked;
  }
  EXPECT_EQ(checked, 26); // every convolution of squeezenet 1.0 is followed by a relu
  int shared = 0;
  for (const auto &[f, count] : uses)
    shared += count > 1;
  EXPECT_GT(shared, 0); // the point of the test: some functions serve several kernels
}

// The bar chart of a profile, by hand: three kernels of 2, 5 and 1 ms are listed longest first
// with shares 5/8, 2/8 and 1/8, labelled with their masters and functions (relu0's kernel by
// conv2d0, the convolution it leads with). The functions' times are the calls' sums, and the
// Loops panel opens on the hottest.
TEST(ProfileView, KernelBarsLongestFirst) {
  Viewer v;
  runAll(v, kSeed001);
  runAll(v, ":build");
  const Graph &g = v.engine().current()->graph;
  auto id = [&](const char *n) { return static_cast<uint32_t>(g.index().findByName(n)); };
  std::map<uint32_t, KernelTime> profile = {
      {id("relu0"), {2, 0, 0}}, {id("dense0"), {5, 0, 0}}, {id("sum0"), {1, 0, 0}}};
  std::vector<KernelBar> bars = kernelBars(g, profile);
  ASSERT_EQ(bars.size(), 3u);
  EXPECT_EQ(bars[0].nid, id("dense0"));
  EXPECT_EQ(bars[0].label, "dense0  fuse_dense");
  EXPECT_DOUBLE_EQ(bars[0].share, 5.0 / 8);
  EXPECT_EQ(bars[1].label, "conv2d0  fuse_conv2d_relu");
  EXPECT_DOUBLE_EQ(bars[1].ms, 2);
  EXPECT_EQ(bars[2].nid, id("sum0"));
  EXPECT_DOUBLE_EQ(bars[2].share, 1.0 / 8);
  EXPECT_EQ(
      functionMillis(g, profile),
      (std::map<std::string, double>{{"fuse_conv2d_relu", 2}, {"fuse_dense", 5}, {"fuse_sum", 1}}));
  EXPECT_EQ(hottestFunction(g, profile), "fuse_dense");
  profile[id("relu0")].ms = 9;
  EXPECT_EQ(hottestFunction(g, profile), "fuse_conv2d_relu");
  EXPECT_EQ(hottestFunction(g, {}), "");
}

// Seed 001 partitioned twice, the second time with `:set nofuse broadcast_add` (by hand from
// `:groups`): the default's {conv2d1, relu1, add} is not in the second, whose {conv2d1, relu1}
// and {add} are not in the first; the other five groups are the same in both.
TEST(FusionView, ComparingTwoPartitionsMarksTheGroupsThatDiffer) {
  Viewer v;
  runAll(v, kSeed001);
  runAll(v, ":apply InferShape InferType GraphFusePartition\n:set nofuse broadcast_add\n"
            ":apply GraphFusePartition");
  size_t last = v.engine().history().size() - 1;
  const std::vector<GroupView> &a = v.groupsAt(last - 1), &b = v.groupsAt(last);
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(b.size(), 7u);
  PartitionDiff d = comparePartitions(a, b);
  ASSERT_EQ(d.onlyA.size(), 1u);
  EXPECT_EQ(a[static_cast<size_t>(*d.onlyA.begin())].rootName, "__add_symbol__0");
  std::set<std::string> roots;
  for (int i : d.onlyB)
    roots.insert(b[static_cast<size_t>(i)].rootName);
  EXPECT_EQ(roots, (std::set<std::string>{"relu1", "__add_symbol__0"}));
  EXPECT_TRUE(comparePartitions(a, a).onlyA.empty());
}

// A long name keeps its two ends around "…" in as many characters as fit, the suffix one longer.
TEST(Elide, KeepsBothEndsOfALongName) {
  EXPECT_EQ(elideMiddle("fuse_relu", 20), "fuse_relu");
  EXPECT_EQ(elideMiddle("fuse__contrib_conv2d_NCHWc_broadcast_add_relu_3", 20),
            "fuse__con…add_relu_3");
  EXPECT_EQ(elideMiddle("fuse__contrib_conv2d_NCHWc_broadcast_add_relu_3", 20).size(),
            19 + std::string("…").size());
  EXPECT_EQ(elideMiddle("αβγδεζηθ", 5), "αβ…ηθ"); // code points, never half of one
  EXPECT_EQ(elideMiddle("abc", 1), "…");
}

// In a deploy graph two calls of one shared function are each their own group, named by the
// partition's nodes each computes (the function's body names only the first call's).
TEST(FusionView, SharedKernelCallsNameTheirOwnNodes) {
  Viewer v;
  runAll(v, "x = Variable(\"x\", shape=(1, 4, 8, 8))\n"
            "a = relu(conv2d(x, channels=4, kernel_size=(3, 3), padding=(1, 1), name=\"ca\"), "
            "name=\"ra\")\n"
            "b = relu(conv2d(a, channels=4, kernel_size=(3, 3), padding=(1, 1), name=\"cb\"), "
            "name=\"rb\")\n"
            ":graph b\n:build opt_level=2");
  std::vector<GroupView> groups = fusionGroups(v.engine().current()->graph);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].function, groups[1].function); // one function, called twice
  EXPECT_EQ(groups[0].memberNames, (std::vector<std::string>{"ca", "ra"}));
  EXPECT_EQ(groups[1].memberNames, (std::vector<std::string>{"cb", "rb"}));
  EXPECT_EQ(groups[1].pattern, "OutEWiseFusable");
  EXPECT_EQ(groups[1].masterName, "cb");
}

// The SVG picture draws what the canvas draws: a box per laid-out node with its lines, an edge
// per input, a region per group of two or more, R and M badges; names from a model are text.
TEST(GraphSvg, BoxesEdgesRegionsAndBadgesWithNamesAsText) {
  Engine e;
  loupe::test::run(e, kSeed001);
  loupe::test::run(e, ":apply InferShape InferType GraphFusePartition");
  const Graph &g = e.current()->graph;
  LayoutOptions o;
  o.params = paramNames(g);
  GraphLayout l = layoutGraph(g, o);
  std::vector<GroupView> groups = fusionGroups(g);
  SvgOptions so;
  so.groups = &groups;
  std::string svg = graphSvg(g, l, so);
  auto count = [&](const std::string &what) {
    size_t n = 0;
    for (size_t at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(count("<g class=\"node\">"), g.index().numNodes());
  EXPECT_EQ(count("marker-end=\"url(#arrow)\""), l.edges.size());
  // Two groups have two or more members (conv2d0+relu0, conv2d1+relu1+__add_symbol__0).
  EXPECT_EQ(count("<rect class=\"group\""), 2u);
  EXPECT_NE(svg.find("<title>fuse_conv2d_relu\npattern OutEWiseFusable\nroot relu0\nmaster "
                     "conv2d0</title>"),
            std::string::npos);
  EXPECT_EQ(count(">RM</text>"), 4u); // flatten0, dense0, softmax0, sum0 are both
  EXPECT_EQ(count(">M</text>"), 2u);  // conv2d0, conv2d1
  EXPECT_EQ(count(">R</text>"), 2u);  // relu0, __add_symbol__0
  for (const LaidNode &n : l.nodes)
    for (const std::string &line : n.lines)
      EXPECT_NE(svg.find(">" + xmlEscaped(line) + "</text>"), std::string::npos) << line;

  // A hostile name is shown as the characters it is.
  Engine h;
  loupe::test::run(h, "v = Variable(\"<script>alert('x')</script>&\", shape=(2,))\n"
                      "y = relu(v)\n:graph y");
  std::string bad = graphSvg(h.current()->graph);
  EXPECT_EQ(bad.find("<script"), std::string::npos);
  EXPECT_NE(bad.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;"), std::string::npos);
  EXPECT_EQ(xmlEscaped("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
}

// The front end readies every engine the viewer makes: loupe-gui's console has :report, also
// after opening a script starts a fresh engine.
TEST(Viewer, ThePreparedCommandsSurviveAFreshEngine) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(::testing::TempDir()) / ("loupe-viewer-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  Viewer v;
  v.setPrepare(report::addViewCommands);
  runAll(v, "x = Variable(\"x\", shape=(2,))\ny = relu(x)\n:graph y");
  std::string out;
  ASSERT_TRUE(v.run(":report " + (dir / "a.html").string(), &out)) << out;
  EXPECT_TRUE(fs::exists(dir / "a.html"));
  loupe::writeTextFile((dir / "s.loupe").string(), "x = Variable(\"x\", shape=(2,))\n:graph x\n");
  ASSERT_EQ(v.open((dir / "s.loupe").string()), "");
  v.runTo(2);
  ASSERT_TRUE(v.run(":report " + (dir / "b.html").string(), &out)) << out;
  EXPECT_TRUE(fs::exists(dir / "b.html"));
  fs::remove_all(dir);
}

// The Loops panel's rows: `:lower FUNC nodes` parsed back into numbered rows with the nodes each
// store computes, and `:asm FUNC` into instructions under the line and nodes of their comment.
TEST(CodeLines, LoopAndAssemblyRowsKnowTheirLinesAndNodes) {
  Engine e;
  loupe::test::run(e, "x = Variable(\"x\", shape=(1, 3, 9, 9))\n"
                      "w = Variable(\"w\", shape=(4, 3, 3, 3))\n"
                      "y = relu(conv2d(x, w, channels=4, kernel_size=(3,3), use_bias=False))\n"
                      ":graph y\n:build opt_level=2");
  std::string listing = loupe::test::output(e, ":lower fuse_conv2d_relu nodes");
  std::vector<CodeRow> loops = loopRows(listing);
  // Every line of the listing, in order, after the header.
  ASSERT_EQ(loops.size(),
            static_cast<size_t>(std::count(listing.begin(), listing.end(), '\n') - 1));
  for (size_t i = 0; i < loops.size(); ++i)
    ASSERT_EQ(loops[i].line, static_cast<int>(i + 1));
  EXPECT_EQ(loops[0].text, "// attr [compute] storage_scope = \"global\"");
  EXPECT_TRUE(loops[0].nodes.empty());
  EXPECT_EQ(loops[2].text, "produce compute {");
  EXPECT_EQ(loops[2].nodes, std::vector<std::string>{"conv2d0"});
  auto relu = std::find_if(loops.begin(), loops.end(), [](const CodeRow &r) {
    return r.text.find("compute_1[") != std::string::npos;
  });
  ASSERT_NE(relu, loops.end());
  EXPECT_EQ(relu->nodes, std::vector<std::string>{"relu0"});
  EXPECT_EQ(relu->text.find("//"), std::string::npos); // the mark is gone from the text
  int conv = 0, reluRows = 0;
  for (const CodeRow &r : loops) {
    conv += rowOf(r, "conv2d0");
    reluRows += rowOf(r, "relu0");
  }
  EXPECT_EQ(conv, 11);    // produce, the zero, nine taps
  EXPECT_EQ(reluRows, 2); // produce, the store

  std::vector<CodeRow> code = assemblyRows(loupe::test::output(e, ":asm fuse_conv2d_relu"));
  size_t comments = 0, reluInstructions = 0;
  for (const CodeRow &r : code) {
    comments += r.comment;
    if (r.comment && r.text.find("# line ") != std::string::npos) {
      EXPECT_GT(r.line, 0);
    }
    if (!r.comment && rowOf(r, "relu0")) {
      ++reluInstructions;
      EXPECT_EQ(loops[static_cast<size_t>(r.line - 1)].nodes.empty() ||
                    rowOf(loops[static_cast<size_t>(r.line - 1)], "relu0"),
                true);
    }
  }
  EXPECT_GT(comments, 0u);
  EXPECT_GT(reluInstructions, 0u);
}

// The three kinds of comment `:asm` writes, read back: a statement's line and nodes, a loop's
// own code (its set-up and copies), and code of no single line; a new function starts afresh.
TEST(CodeLines, AssemblyCommentsGiveEachInstructionItsLineAndNodes) {
  std::vector<CodeRow> rows = assemblyRows("# instructions from a loop line …\n"
                                           "f:\n"
                                           "\tpushq\t%rbx\n"
                                           "\t# line 4: for (i, 0, 8) { [conv, relu] (set-up "
                                           "and copies of this loop)\n"
                                           "\tvxorps\t%xmm0, %xmm0, %xmm0\n"
                                           ".LBB0_1:\n"
                                           "\t# line 7: out[i] = max(… [relu, +2 more]\n"
                                           "\tvmaxps\t%ymm0, %ymm1, %ymm1\n"
                                           "\t# no loop line (made by LLVM for no single "
                                           "statement)\n"
                                           "\tpopq\t%rbx\n"
                                           "f_parallel0:\n"
                                           "\tmovq\t(%rsi), %rax\n");
  ASSERT_EQ(rows.size(), 12u);
  auto check = [&](size_t i, int line, std::vector<std::string> nodes, bool comment) {
    EXPECT_EQ(rows[i].line, line) << i << ": " << rows[i].text;
    EXPECT_EQ(rows[i].nodes, nodes) << i << ": " << rows[i].text;
    EXPECT_EQ(rows[i].comment, comment) << i << ": " << rows[i].text;
  };
  check(0, 0, {}, false);              // the coverage header
  check(2, 0, {}, false);              // before the first comment
  check(3, 4, {"conv", "relu"}, true); // the loop's own code
  check(4, 4, {"conv", "relu"}, false);
  check(5, 0, {}, false);       // a label
  check(7, 7, {"relu"}, false); // "+2 more" is not a node
  check(8, 0, {}, true);
  check(9, 0, {}, false);  // no loop line
  check(11, 0, {}, false); // a new function starts with nothing
  EXPECT_TRUE(rowOf(rows[4], "conv"));
  EXPECT_FALSE(rowOf(rows[7], "conv"));
  EXPECT_FALSE(rowOf(rows[9], ""));
}

// Scopes come from names: an exporter's '/' paths, the zoo's digit-ended '_' prefixes.
TEST(Scopes, NamesGiveTheirScopes) {
  using V = std::vector<std::string>;
  EXPECT_EQ(scopeOf("/features/features.1/features.1.0/block/block.2/Sub"),
            (V{"features", "features.1", "features.1.0", "block", "block.2"}));
  EXPECT_EQ(scopeOf("/Conv"), V{});
  EXPECT_EQ(scopeOf("a//b/c"), (V{"a", "b"}));
  EXPECT_EQ(scopeOf("stage2_unit3_conv1"), (V{"stage2", "unit3"}));
  EXPECT_EQ(scopeOf("densenet0_stage1_conv0_weight"), (V{"densenet0", "stage1", "conv0"}));
  EXPECT_EQ(scopeOf("broadcast_add0"), V{});
  EXPECT_EQ(scopeOf("conv0"), V{});
  EXPECT_EQ(scopeOf("Identity_7"), V{});
  EXPECT_EQ(scopePath({"enc", "layer.0", "attn"}, 2), "enc/layer.0");
}

namespace {

const char *kScoped = "x = Variable(\"x\", shape=(1, 8))\n"
                      "a = relu(x, name=\"/enc/layer.0/Relu\")\n"
                      "b = sigmoid(a, name=\"/enc/layer.0/Sigmoid\")\n"
                      "c = relu(b, name=\"/enc/layer.1/Relu\")\n"
                      "d = tanh(c, name=\"/head/Tanh\")\n"
                      ":graph d\n:apply InferShape InferType";

} // namespace

// Folding by scope: a box per scope at the depth, its ops counted and the shapes leaving it;
// an unfolded scope shows its own scopes folded; revealing a node unfolds what hides it; the
// viewer lays the folded graph out with a box per scope.
TEST(Scopes, AGraphFoldsIntoABoxPerScope) {
  Viewer v;
  runAll(v, kScoped);
  const Graph &g = v.engine().current()->graph;
  auto id = [&](const char *name) { return static_cast<uint32_t>(g.index().findByName(name)); };
  EXPECT_EQ(scopeDepth(g), 2);
  std::vector<CollapsedBox> one = scopeBoxes(g, {1, {}});
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(one[0].scope, "enc");
  EXPECT_EQ(one[0].members,
            (std::vector<uint32_t>{id("/enc/layer.0/Relu"), id("/enc/layer.0/Sigmoid"),
                                   id("/enc/layer.1/Relu")}));
  EXPECT_EQ(one[0].lines,
            (std::vector<std::string>{"[+] enc", "3 ops: 2 relu, 1 sigmoid", "out (1, 8)"}));
  EXPECT_EQ(one[1].scope, "head");
  EXPECT_EQ(one[1].lines,
            (std::vector<std::string>{"[+] head", "1 op: 1 tanh", "in (1, 8)", "out (1, 8)"}));
  // Two deep: the layers are boxes, and the head's op (one deep only) is itself.
  std::vector<CollapsedBox> two = scopeBoxes(g, {2, {}});
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].scope, "enc/layer.0");
  EXPECT_EQ(two[1].scope, "enc/layer.1");
  EXPECT_EQ(two[1].lines.at(2), "in (1, 8)");
  EXPECT_EQ(foldedScope(g, id("/head/Tanh"), {2, {}}), "");
  // enc unfolded at depth 1: its layers fold in its place.
  ScopeFold open{1, {"enc"}};
  EXPECT_EQ(foldedScope(g, id("/enc/layer.1/Relu"), open), "enc/layer.1");
  EXPECT_EQ(scopeBoxes(g, open).size(), 3u);
  ScopeFold shown = revealing(g, id("/enc/layer.1/Relu"), {1, {}});
  EXPECT_EQ(shown.unfolded, (std::set<std::string>{"enc", "enc/layer.1"}));
  EXPECT_EQ(foldedScope(g, id("/enc/layer.1/Relu"), shown), "");
  EXPECT_EQ(foldedScope(g, id("/enc/layer.0/Relu"), shown), "enc/layer.0");
  // The viewer's layout: the input x and two scope boxes, an edge into each.
  const GraphLayout &l = v.layout(0, -1, -1, {}, {1, {}});
  ASSERT_EQ(l.nodes.size(), 3u);
  EXPECT_EQ(l.edges.size(), 2u);
  const LaidNode &enc = l.nodes[static_cast<size_t>(l.find(id("/enc/layer.0/Sigmoid")))];
  EXPECT_EQ(enc.kind, NodeKind::Scope);
  EXPECT_EQ(enc.scope, "enc");
  EXPECT_NE(l.find(id("x")), l.find(id("/enc/layer.0/Sigmoid")));
  EXPECT_EQ(v.layout(0).nodes.size(), 5u); // unfolded: x and the four ops
  // Unfolded scopes are outlined around their boxes, an outer outline around its inner ones.
  ScopeFold deep{1, {"enc", "enc/layer.0"}};
  const GraphLayout &ld = v.layout(0, -1, -1, {}, deep);
  std::vector<ScopeOutline> outlines = scopeOutlines(g, ld, deep, 8);
  ASSERT_EQ(outlines.size(), 2u);
  EXPECT_EQ(outlines[0].path, "enc");
  EXPECT_EQ(outlines[1].path, "enc/layer.0");
  auto inside = [](const LaidNode &n, const ScopeOutline &o) {
    return o.x0 < n.x - n.w / 2 && n.x + n.w / 2 < o.x1 && o.y0 < n.y - n.h / 2 &&
           n.y + n.h / 2 < o.y1;
  };
  const LaidNode &relu0 = ld.nodes[static_cast<size_t>(ld.find(id("/enc/layer.0/Relu")))];
  const LaidNode &layer1 = ld.nodes[static_cast<size_t>(ld.find(id("/enc/layer.1/Relu")))];
  const LaidNode &head = ld.nodes[static_cast<size_t>(ld.find(id("/head/Tanh")))];
  EXPECT_EQ(layer1.scope, "enc/layer.1"); // still folded: a box inside enc, outside layer.0
  EXPECT_TRUE(inside(relu0, outlines[1]));
  EXPECT_TRUE(inside(relu0, outlines[0]));
  EXPECT_TRUE(inside(layer1, outlines[0]));
  EXPECT_FALSE(inside(layer1, outlines[1]));
  EXPECT_FALSE(inside(head, outlines[0]));
  EXPECT_LT(outlines[0].x0, outlines[1].x0);
  EXPECT_LT(outlines[0].y0, outlines[1].y0);
  EXPECT_TRUE(scopeOutlines(g, l, {1, {}}, 8).empty()); // nothing unfolded, nothing outlined
  // find's index answers as its search over the boxes does, for every node.
  GraphLayout searched = l;
  searched.boxOf.clear();
  for (uint32_t nid = 0; nid < g.index().numNodes() + 2; ++nid)
    EXPECT_EQ(l.find(nid), searched.find(nid)) << nid;
}

// An exporter's Identity of a shared initializer (imported as copy) is drawn as the param it
// copies, inside each reader's box, instead of as an op read by many.
TEST(GraphLayout, CopiesOfParamsAreFoldedLikeTheParam) {
  Engine e;
  test::run(e, "x = Variable(\"x\", shape=(1, 8))\nw = Variable(\"w\", shape=(8,))\n"
               "c = copy(w, name=\"Identity_3\")\ny = (x + c) * c\n:graph y\n"
               ":apply InferShape InferType");
  const Graph &g = e.current()->graph;
  LayoutOptions o;
  o.foldInputs = true;
  o.params = {"w"};
  GraphLayout l = layoutGraph(g, o);
  ASSERT_EQ(l.nodes.size(), 3u); // x (the data input), the add and the multiply
  EXPECT_EQ(l.edges.size(), 2u);
  for (const LaidNode &n : l.nodes) {
    if (n.nid != static_cast<uint32_t>(g.index().findByName("x"))) {
      EXPECT_EQ(n.lines.back(), "w (8,)") << n.name; // its name and shape (no dtype given)
    }
  }
  int copy = g.index().findByName("Identity_3"), w = g.index().findByName("w");
  EXPECT_EQ(l.find(static_cast<uint32_t>(copy)), l.find(static_cast<uint32_t>(w)));
  EXPECT_GE(l.find(static_cast<uint32_t>(w)), 0);
  // Not a param: the copy is an op of its own box, and with nothing bound w, the copy's first
  // operand, is taken for data: x, w, the copy, the add and the multiply.
  o.params.clear();
  EXPECT_EQ(layoutGraph(g, o).nodes.size(), 5u);
}

// `:dot FILE placed`: the DOT text carries the viewer's layout — every node's centre (y up, in
// points) and size, every edge's spline ending at its arrowhead — and Graphviz parses it back
// with those positions.
TEST(GraphLayout, DotPlacementCarriesTheViewersPositions) {
  Engine e;
  test::run(e, kSeed001);
  test::run(e, ":apply InferShape InferType GraphFusePartition");
  const Graph &g = e.current()->graph;
  LayoutOptions o;
  o.params = paramNames(g);
  DotPlacement p = dotPlacement(g, o);
  LayoutOptions every = o;
  every.foldInputs = false;
  GraphLayout l = layoutGraph(g, every);
  ASSERT_EQ(p.nodes.size(), g.index().numNodes()); // every node placed, none folded
  EXPECT_DOUBLE_EQ(p.height, l.height);
  for (const LaidNode &n : l.nodes) {
    EXPECT_DOUBLE_EQ(p.nodes.at(n.nid).x, n.x);
    EXPECT_DOUBLE_EQ(p.nodes.at(n.nid).y, l.height - n.y);
  }
  std::string text = graphToDot(g, &p);
  Agraph_t *parsed = agmemread(text.c_str());
  ASSERT_NE(parsed, nullptr) << text;
  for (Agnode_t *n = agfstnode(parsed); n; n = agnxtnode(parsed, n)) {
    uint32_t nid = static_cast<uint32_t>(std::stoul(std::string(agnameof(n)).substr(1)));
    const DotPlacement::Box &b = p.nodes.at(nid);
    char want[64];
    std::snprintf(want, sizeof want, "%.2f,%.2f!", b.x, b.y);
    EXPECT_EQ(std::string(agget(n, const_cast<char *>("pos"))), want) << agnameof(n);
    for (Agedge_t *ed = agfstout(parsed, n); ed; ed = agnxtout(parsed, ed))
      EXPECT_EQ(std::string(agget(ed, const_cast<char *>("pos"))).substr(0, 2), "e,");
  }
  EXPECT_EQ(agnedges(parsed), static_cast<int>(l.edges.size()));
  agclose(parsed);
}
