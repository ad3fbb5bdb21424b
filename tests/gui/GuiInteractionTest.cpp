// GuiInteractionTest: the viewer's panels driven by a simulated mouse in a headless ImGui
// context (no window, no GL): clicking selects a node, ctrl-clicking a second asks the engine
// `:why`, dragging pans, the wheel zooms around the pointer, and a panel tab can be chosen.
#include "TestUtil.h"

#include "gui/app/AppState.h"
#include "gui/app/Frame.h"
#include "gui/app/Panels.h"
#include "passes/Provenance.h"
#include "view/Elide.h"
#include "view/FusionView.h"
#include "view/Overview.h"
#include "view/ProfileView.h"

#include <imgui.h>

#include <set>

using namespace loupe;
using namespace loupe::gui;

namespace {

// A headless ImGui frame loop over an AppState.
class Headless {
public:
  Headless() {
    ImGui::CreateContext();
    ImGuiIO &io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(1600, 1000);
    io.DeltaTime = 1.0f / 60;
    unsigned char *pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h); // builds the font atlas
    ImFont *font = io.Fonts->Fonts[0];
    s.viewer.metrics.charWidth = font->CalcTextSizeA(font->FontSize, 1e9f, 0, "M").x;
  }
  ~Headless() { ImGui::DestroyContext(); }

  // One frame; when it asked for a layout, the frame again once the layout is made (what a
  // user sees a moment later).
  void frame() {
    draw();
    if (s.viewer.layingOut() > 0) {
      s.viewer.waitForLayout();
      draw();
    }
  }
  void draw() {
    ImGui::NewFrame();
    drawFrame(s, 1600, 1000);
    ImGui::Render();
  }
  // Moves the pointer, presses and releases the left button, a frame for each.
  void click(double x, double y, bool ctrl = false) {
    ImGuiIO &io = ImGui::GetIO();
    io.KeyCtrl = ctrl;
    io.MousePos = ImVec2(static_cast<float>(x), static_cast<float>(y));
    frame();
    io.MouseDown[0] = true;
    frame();
    io.MouseDown[0] = false;
    frame();
    io.KeyCtrl = false;
  }

  AppState s;
};

// The centre of node `name` on screen in the panel's canvas.
std::pair<double, double> nodeAt(AppState &s, Panel p, const std::string &name) {
  const Graph &g = s.viewer.engine().current()->graph;
  int nid = g.index().findByName(name);
  const gui::GraphLayout &l = s.viewer.layout(s.viewer.engine().history().size() - 1);
  const gui::LaidNode &n = l.nodes[static_cast<size_t>(l.find(static_cast<uint32_t>(nid)))];
  const CanvasView &cv = *s.canvasOf(p);
  return {cv.screenX(n.x), cv.screenY(n.y)};
}

const char *kProgram = "x = Variable(\"x\", shape=(1, 3, 8, 8))\n"
                       "y = relu(conv2d(x, channels=4, kernel_size=(3, 3), padding=(1, 1)))\n"
                       "z = softmax(flatten(y))\n:graph z\n:apply InferShape InferType\n"
                       ":apply GraphFusePartition";

void load(AppState &s) {
  std::istringstream in(kProgram);
  std::string line;
  while (std::getline(in, line))
    ASSERT_TRUE(s.viewer.run(line)) << s.viewer.console();
}

// Squeezenet in the graph panel, laid out and given its first view.
CanvasView &squeezenetInGraphPanel(Headless &h) {
  EXPECT_TRUE(h.s.viewer.run(":model squeezenet1.0"));
  h.frame();
  h.frame();
  return h.s.graph.canvas;
}

// Ops in scopes enc/layer.0, enc/layer.1 and head, folded one deep in the graph panel, laid out.
void scopedInGraphPanel(Headless &h) {
  for (const char *line :
       {"x = Variable(\"x\", shape=(1, 8))", "a = relu(x, name=\"/enc/layer.0/Relu\")",
        "b = sigmoid(a, name=\"/enc/layer.0/Sigmoid\")", "c = relu(b, name=\"/enc/layer.1/Relu\")",
        "d = tanh(c, name=\"/head/Tanh\")", ":graph d", ":apply InferShape InferType"})
    ASSERT_TRUE(h.s.viewer.run(line)) << h.s.viewer.console();
  h.s.graph.fold.depth = 1;
  h.s.panel = Panel::Graph;
  h.frame();
  h.frame();
}

} // namespace

TEST(GuiInteraction, ClickSelectsAndCtrlClickAsksWhy) {
  Headless h;
  load(h.s);
  h.s.panel = Panel::Fusion;
  h.frame(); // opens the Fusion tab
  h.frame(); // lays out and fits its graph
  auto [cx, cy] = nodeAt(h.s, Panel::Fusion, "conv2d0");
  h.click(cx, cy);
  const IndexedGraph &idx = h.s.viewer.engine().current()->graph.index();
  EXPECT_EQ(h.s.selection.node, idx.findByName("conv2d0"));
  auto [fx, fy] = nodeAt(h.s, Panel::Fusion, "flatten0");
  h.click(fx, fy, true);
  EXPECT_EQ(h.s.selection.second, idx.findByName("flatten0"));
  // The answer is the engine's, and the question went through the console like any command.
  EXPECT_NE(h.s.viewer.console().find("loupe> :why conv2d0 flatten0\n"), std::string::npos);
  Engine e;
  test::run(e, kProgram);
  EXPECT_EQ(h.s.selection.why, test::output(e, ":why conv2d0 flatten0"));
  // A plain click elsewhere on a node starts a new selection.
  h.click(fx, fy);
  EXPECT_EQ(h.s.selection.node, idx.findByName("flatten0"));
  EXPECT_EQ(h.s.selection.second, -1);
}

TEST(GuiInteraction, DragPansAndWheelZoomsAroundThePointer) {
  Headless h;
  load(h.s);
  h.frame();
  CanvasView &cv = h.s.graph.canvas;
  double pan = cv.panX, zoom = cv.zoom;
  ImGuiIO &io = ImGui::GetIO();
  // Press on empty canvas (left edge), drag 100 px right, release: the graph moves with it.
  io.MousePos = ImVec2(static_cast<float>(cv.originX + 20), static_cast<float>(cv.originY + 20));
  h.frame();
  io.MouseDown[0] = true;
  h.frame();
  for (int i = 1; i <= 4; ++i) {
    io.MousePos.x += 25;
    h.frame();
  }
  io.MouseDown[0] = false;
  h.frame();
  EXPECT_NEAR(cv.panX, pan + 100, 1e-6);
  EXPECT_EQ(h.s.selection.node, -1); // a drag is not a click
  // One wheel notch zooms by 1.15 and keeps the layout point under the pointer in place.
  auto [nx, ny] = nodeAt(h.s, Panel::Graph, "relu0");
  io.MousePos = ImVec2(static_cast<float>(nx), static_cast<float>(ny));
  h.frame();
  io.MouseWheel = 1;
  h.frame();
  io.MouseWheel = 0;
  EXPECT_NEAR(cv.zoom, zoom * 1.15, 1e-9);
  // The node's offset from the pointer grows by the zoom factor (the pointer, a float, sits a
  // fraction of a pixel from the node's centre).
  double px = io.MousePos.x, py = io.MousePos.y;
  auto [nx2, ny2] = nodeAt(h.s, Panel::Graph, "relu0");
  EXPECT_NEAR(nx2 - px, (nx - px) * 1.15, 1e-3);
  EXPECT_NEAR(ny2 - py, (ny - py) * 1.15, 1e-3);
  EXPECT_NEAR(nx2, nx, 1.0);
  EXPECT_NEAR(ny2, ny, 1.0);
}

// A network too tall to fit legibly (squeezenet, 120 nodes) opens at zoom 1 — labels at the
// font's size — with its input at the top centre, not shrunk to a column of specks; Fit still
// shows it all. Selecting a node far below (as --select or Enter in the search box does) pans
// it into the middle of the canvas; selecting one already in view leaves the view alone.
TEST(GuiInteraction, LargeGraphsOpenLegibleAndSelectionComesIntoView) {
  Headless h;
  CanvasView &cv = squeezenetInGraphPanel(h);
  EXPECT_EQ(cv.zoom, 1.0);
  auto [dx, dy] = nodeAt(h.s, Panel::Graph, "data");
  EXPECT_NEAR(dx, cv.originX + 800, 400); // the canvas is 1,100 px wide at most
  EXPECT_LT(dy - cv.originY, 80);
  const Graph &g = h.s.viewer.engine().current()->graph;
  h.s.selection.node = g.index().findByName("squeezenet0_conv20");
  h.frame();
  auto [cx, cy] = nodeAt(h.s, Panel::Graph, "squeezenet0_conv20");
  EXPECT_GT(cy, cv.originY);
  EXPECT_LT(cy, cv.originY + 900);
  double panY = cv.panY;
  h.s.selection.node = g.index().findByName("squeezenet0_relu20");
  h.frame();
  EXPECT_EQ(cv.panY, panY); // the next node down was already in view
  cv.fitPending = true;
  h.frame();
  EXPECT_LT(cv.zoom, 0.5);
  (void)cx;
}

// The overview map of a graph larger than the canvas: pressing on it at the bottom of the graph
// moves the view there (the network's last node comes into view), dragging on it keeps moving
// the view, and neither selects a node.
TEST(GuiInteraction, OverviewMapMovesTheView) {
  Headless h;
  CanvasView &cv = squeezenetInGraphPanel(h);
  const gui::GraphLayout &l = h.s.viewer.layout(h.s.viewer.engine().history().size() - 1);
  ImGuiIO &io = ImGui::GetIO();
  gui::Overview o =
      gui::overviewOf(l.width, l.height, {cv.width, cv.height, cv.zoom, cv.panX, cv.panY});
  ASSERT_TRUE(o.shown);
  auto [sx, sy] = nodeAt(h.s, Panel::Graph, "squeezenet0_flatten0");
  EXPECT_GT(sy, cv.originY + 1000); // far below the canvas at first
  double mx = (o.map.x0 + o.map.x1) / 2, my = o.map.y1 - 1;
  h.click(cv.originX + mx, cv.originY + my);
  auto [fx, fy] = nodeAt(h.s, Panel::Graph, "squeezenet0_flatten0");
  EXPECT_GT(fy, cv.originY);
  EXPECT_LT(fy, cv.originY + cv.height);
  EXPECT_EQ(h.s.selection.node, -1);
  // Drag on the map from its bottom to its top: the view follows to the graph's inputs.
  io.MousePos = ImVec2(static_cast<float>(cv.originX + mx), static_cast<float>(cv.originY + my));
  io.MouseDown[0] = true;
  h.frame();
  for (int i = 0; i < 20; ++i) {
    io.MousePos.y -= static_cast<float>((o.map.y1 - o.map.y0) / 20);
    h.frame();
  }
  io.MouseDown[0] = false;
  h.frame();
  auto [dx, dy] = nodeAt(h.s, Panel::Graph, "data");
  EXPECT_GT(dy, cv.originY - 200);
  EXPECT_LT(dy, cv.originY + cv.height);
  EXPECT_EQ(h.s.selection.node, -1);
  (void)sx, (void)fx, (void)dx;
}

// Double-clicking a node of a fusion group collapses the group into one box named by its
// function (the box stays where the click was), and double-clicking that box expands it.
TEST(GuiInteraction, DoubleClickCollapsesAndExpandsAGroup) {
  Headless h;
  load(h.s);
  h.s.panel = Panel::Fusion;
  h.frame();
  h.frame();
  size_t step = h.s.viewer.engine().history().size() - 1;
  size_t full = h.s.viewer.layout(step).nodes.size();
  auto [cx, cy] = nodeAt(h.s, Panel::Fusion, "conv2d0");
  h.click(cx, cy);
  h.click(cx, cy); // the second click of a double click
  EXPECT_EQ(h.s.fusion.collapsed, (std::set<std::string>{"relu0"}));
  h.frame();
  const gui::GraphLayout &l = h.s.viewer.layout(step, -1, -1, h.s.fusion.collapsed);
  EXPECT_EQ(l.nodes.size(), full - 1); // conv2d0 and relu0 are one box
  const Graph &g = h.s.viewer.engine().current()->graph;
  const gui::LaidNode &box =
      l.nodes[static_cast<size_t>(l.find(static_cast<uint32_t>(g.index().findByName("conv2d0"))))];
  EXPECT_EQ(box.lines.at(0), "fuse_conv2d_relu");
  CanvasView &cv = h.s.fusion.canvas;
  double bx = cv.screenX(box.x), by = cv.screenY(box.y);
  EXPECT_GT(by, cv.originY);
  EXPECT_LT(by, cv.originY + cv.height);
  h.click(bx, by);
  h.click(bx, by);
  EXPECT_TRUE(h.s.fusion.collapsed.empty());
  // A single click selects and collapses nothing.
  h.frame();
  h.frame();
  auto [fx, fy] = nodeAt(h.s, Panel::Fusion, "flatten0");
  for (int i = 0; i < 20; ++i) // past the double-click time (0.3 s at 60 frames a second)
    h.frame();
  h.click(fx, fy);
  EXPECT_TRUE(h.s.fusion.collapsed.empty());
  EXPECT_EQ(h.s.selection.node, g.index().findByName("flatten0"));
}

// The timeline at :build: clicking a kernel in the after canvas highlights the nodes it computes
// in the before canvas, and clicking a source node highlights its kernel.
TEST(GuiInteraction, TimelineMapsKernelsToTheirSourceNodes) {
  Headless h;
  load(h.s);
  ASSERT_TRUE(h.s.viewer.run(":build"));
  size_t step = h.s.viewer.engine().history().size() - 1;
  h.s.panel = Panel::Timeline;
  h.s.selectPanel = true;
  h.frame();
  h.frame();
  h.frame();
  const Graph &dep = h.s.viewer.engine().history()[step].graph;
  const Graph &src = h.s.viewer.engine().history()[step - 1].graph;
  auto centre = [&](const Graph &g, size_t at, CanvasView &cv, const char *name) {
    const gui::GraphLayout &l = h.s.viewer.layout(at);
    const gui::LaidNode &n =
        l.nodes[static_cast<size_t>(l.find(static_cast<uint32_t>(g.index().findByName(name))))];
    return std::pair{cv.screenX(n.x), cv.screenY(n.y)};
  };
  // relu0's group: conv2d0 and relu0 (the kernel is named after its root).
  auto [ax, ay] = centre(dep, step, h.s.timeline.after, "relu0");
  h.click(ax, ay);
  auto sid = [&](const char *n) { return static_cast<uint32_t>(src.index().findByName(n)); };
  EXPECT_EQ(h.s.timeline.pairBefore, (std::vector<uint32_t>{sid("conv2d0"), sid("relu0")}));
  EXPECT_EQ(h.s.timeline.pairText,
            "kernel relu0 computes conv2d0, relu0 of step " + std::to_string(step - 1));
  auto [bx, by] = centre(src, step - 1, h.s.timeline.before, "conv2d0");
  h.click(bx, by);
  EXPECT_EQ(h.s.timeline.pairAfter,
            (std::vector<uint32_t>{static_cast<uint32_t>(dep.index().findByName("relu0"))}));
  EXPECT_EQ(h.s.timeline.pairText, "conv2d0 runs in kernel relu0 (fuse_conv2d_relu)");
}

// After :profile the graph panel lists the kernels by time; clicking the first bar selects the
// slowest kernel (and brings it into view).
TEST(GuiInteraction, ClickingAKernelBarSelectsIt) {
  Headless h;
  load(h.s);
  ASSERT_TRUE(h.s.viewer.run(":build"));
  ASSERT_TRUE(h.s.viewer.run(":profile 3"));
  h.s.panel = Panel::Graph;
  h.frame();
  h.frame();
  const Step &cur = *h.s.viewer.engine().current();
  std::vector<gui::KernelBar> bars = gui::kernelBars(cur.graph, cur.profile);
  ASSERT_FALSE(bars.empty());
  h.click(h.s.graph.barsX + 60, h.s.graph.barsY + 5);
  EXPECT_EQ(h.s.selection.node, static_cast<int>(bars.front().nid));
}

// The fusion view compared with another partition: both are drawn side by side (the compared
// one in its own canvas), and the counts of differing groups are the model's.
TEST(GuiInteraction, FusionViewComparesTwoPartitions) {
  Headless h;
  load(h.s);
  ASSERT_TRUE(h.s.viewer.run(":set nofuse relu"));
  ASSERT_TRUE(h.s.viewer.run(":apply GraphFusePartition"));
  size_t last = h.s.viewer.engine().history().size() - 1;
  h.s.panel = Panel::Fusion;
  h.s.fusion.compareStep = static_cast<int>(last - 1);
  h.frame();
  h.frame();
  h.frame();
  CanvasView &mine = h.s.fusion.canvas, &theirs = h.s.fusion.compared;
  EXPECT_GT(theirs.width, 100);
  EXPECT_NEAR(mine.width, theirs.width, 1);
  EXPECT_LT(mine.originX, theirs.originX);
  gui::PartitionDiff d =
      gui::comparePartitions(h.s.viewer.groupsAt(last), h.s.viewer.groupsAt(last - 1));
  EXPECT_FALSE(d.onlyA.empty()); // relu0 is not fused into conv2d0 any more
}

// Selecting a kernel node brings the Loops panel to its function; a function picked in the list
// then stays until the selection changes again.
TEST(GuiInteraction, LoopsPanelFollowsTheSelectedKernel) {
  Headless h;
  load(h.s);
  ASSERT_TRUE(h.s.viewer.run(":build"));
  const Graph &g = h.s.viewer.engine().current()->graph;
  const IndexedGraph &idx = g.index();
  std::vector<uint32_t> kernels;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
    if (!idx.nodes[nid].node->isVariable())
      kernels.push_back(nid);
  ASSERT_GE(kernels.size(), 2u);
  auto fn = [&](uint32_t nid) { return idx.nodes[nid].node->parsed.getStr("func_name"); };
  h.s.panel = Panel::Loops;
  h.s.selectPanel = true;
  h.frame(); // the Loops tab opens
  h.frame();
  h.s.selection.node = static_cast<int>(kernels.back());
  h.frame();
  EXPECT_EQ(h.s.loops.function, fn(kernels.back()));
  h.s.loops.function = fn(kernels.front()); // as a click in the list does
  h.frame();
  EXPECT_EQ(h.s.loops.function, fn(kernels.front()));
  h.s.selection.node = static_cast<int>(kernels[1]);
  h.frame();
  EXPECT_EQ(h.s.loops.function, fn(kernels[1]));
}

// Labels too long for their room (a buffer bar, the Loops panel's list) keep both ends of the
// name around "…", as much as fits in the proportional font; a label that fits is unchanged.
TEST(GuiInteraction, LabelsAreElidedInTheMiddleToFit) {
  Headless h;
  ImGui::NewFrame();
  std::string name = "onnx::Conv_497_NCHW16c_fuse__contrib_conv2d_NCHWc_relu_3";
  float room = ImGui::CalcTextSize("onnx::Conv_497_NC").x;
  std::string shown = fitText(name, room);
  EXPECT_LE(ImGui::CalcTextSize(shown.c_str()).x, room);
  EXPECT_EQ(shown.rfind("onnx:", 0), 0u) << shown;
  EXPECT_NE(shown.find("…"), std::string::npos) << shown;
  EXPECT_EQ(shown.substr(shown.size() - 2), "_3") << shown; // the numbered end is kept
  // One character more would not fit.
  std::string longer = elideMiddle(name, shown.size() - std::string("…").size() + 2);
  EXPECT_GT(ImGui::CalcTextSize(longer.c_str()).x, room) << longer;
  EXPECT_EQ(fitText("relu0", room), "relu0");
  ImGui::EndFrame();
}

// After :profile, the Loops panel opens on the function that took the most time (not the
// first by name), and the bars name each kernel by its master.
TEST(GuiInteraction, LoopsPanelOpensOnTheHottestKernel) {
  Headless h;
  load(h.s);
  ASSERT_TRUE(h.s.viewer.run(":build"));
  ASSERT_TRUE(h.s.viewer.run(":profile 3"));
  const Step &cur = *h.s.viewer.engine().current();
  std::string hottest = gui::hottestFunction(cur.graph, cur.profile);
  ASSERT_FALSE(hottest.empty());
  h.s.panel = Panel::Loops;
  h.s.selectPanel = true;
  h.frame();
  h.frame();
  EXPECT_EQ(h.s.loops.function, hottest);
  for (const gui::KernelBar &b : gui::kernelBars(cur.graph, cur.profile))
    EXPECT_NE(b.label.rfind("relu0 ", 0), 0u) << b.label; // conv2d0 leads relu0's kernel
}

// A node focused in the Loops panel (what a click on one of its stores does) is paired in the
// timeline on a build step: the build's source node and the kernel computing it, lit in both
// canvases. A focus the shown function does not compute is dropped.
namespace {

// kProgram built: the build's step, its deploy graph and the graph it started from.
struct BuiltStep {
  size_t step;
  const Graph &deploy, &source;
};

BuiltStep built(Headless &h) {
  load(h.s);
  EXPECT_TRUE(h.s.viewer.run(":build"));
  const Engine &e = h.s.viewer.engine();
  size_t step = e.cursor();
  return {step, e.current()->graph, e.history()[step - 1].graph};
}

} // namespace

TEST(GuiInteraction, LoopsPanelFocusPairsTheNodeWithItsKernel) {
  Headless h;
  auto [step, deploy, source] = built(h);
  int kernel = kernelComputing(deploy, "relu0");
  ASSERT_GE(kernel, 0);
  h.s.panel = Panel::Loops;
  h.s.selectPanel = true;
  h.s.selection.node = kernel;
  h.frame();
  h.frame();
  h.s.loops.focus = "relu0";
  h.frame();
  EXPECT_EQ(h.s.loops.focus, "relu0");
  EXPECT_EQ(h.s.timeline.pairStep, static_cast<int>(step));
  EXPECT_EQ(h.s.timeline.step, static_cast<int>(step));
  EXPECT_EQ(h.s.timeline.pairBefore,
            std::vector<uint32_t>{static_cast<uint32_t>(source.index().findByName("relu0"))});
  EXPECT_EQ(h.s.timeline.pairAfter, std::vector<uint32_t>{static_cast<uint32_t>(kernel)});
  EXPECT_NE(h.s.timeline.pairText.find("relu0 runs in kernel"), std::string::npos)
      << h.s.timeline.pairText;
  h.s.loops.focus = "softmax0"; // computed by another function
  h.frame();
  EXPECT_EQ(h.s.loops.focus, "");
}

// The other direction: a source node clicked in the Timeline on a build step (pairNodes) brings
// the Loops panel to its kernel's function with that node focused.
TEST(GuiInteraction, ASourceNodePairedInTheTimelineIsFocusedInTheLoopsPanel) {
  Headless h;
  auto [step, deploy, source] = built(h);
  int relu = source.index().findByName("relu0");
  ASSERT_GE(relu, 0);
  pairNodes(h.s, source, deploy, step, relu, false);
  int kernel = kernelComputing(deploy, "relu0");
  ASSERT_GE(kernel, 0);
  EXPECT_EQ(h.s.loops.function,
            deploy.index().nodes[static_cast<uint32_t>(kernel)].node->parsed.getStr("func_name"));
  EXPECT_EQ(h.s.loops.focus, "relu0");
  h.s.panel = Panel::Loops;
  h.s.selectPanel = true;
  h.frame();
  h.frame();
  EXPECT_EQ(h.s.loops.focus, "relu0"); // its function computes it: the focus stays
}

// A node whose kernel another call shares (the function was lowered from the first call's group)
// paired from the timeline: the Loops panel focuses its counterpart in the listing, where its
// stores and instructions are, and the timeline pairs it with its own call, not the first one.
TEST(GuiInteraction, ANodeOfASharedKernelIsLitAtItsCounterpartAndPairedWithItsOwnCall) {
  Headless h;
  for (const char *line : {"x = Variable(\"x\", shape=(1, 8, 12, 12))",
                           "a = relu(conv2d(x, channels=8, kernel_size=(3, 3), padding=(1, 1)))",
                           "b = relu(conv2d(a, channels=8, kernel_size=(3, 3), padding=(1, 1)))",
                           ":graph b", ":build"})
    ASSERT_TRUE(h.s.viewer.run(line)) << h.s.viewer.console();
  const Engine &e = h.s.viewer.engine();
  size_t step = e.cursor();
  const Graph &deploy = e.current()->graph, &source = e.history()[step - 1].graph;
  pairNodes(h.s, source, deploy, step, source.index().findByName("conv2d1"), false);
  EXPECT_EQ(h.s.loops.function, "fuse_conv2d_relu");
  EXPECT_EQ(h.s.loops.focus, "conv2d0");
  EXPECT_EQ(h.s.timeline.pairAfter,
            std::vector<uint32_t>{static_cast<uint32_t>(deploy.index().findByName("relu1"))});
  EXPECT_NE(h.s.timeline.pairText.find("conv2d1 runs in kernel relu1"), std::string::npos)
      << h.s.timeline.pairText;
  h.s.panel = Panel::Loops;
  h.s.selectPanel = true;
  h.s.selection.node = deploy.index().findByName("relu1");
  h.frame();
  h.frame();
  EXPECT_EQ(h.s.loops.focus, "conv2d0"); // the listing computes it: the focus stays, lit
  EXPECT_EQ(h.s.timeline.pairAfter,
            std::vector<uint32_t>{static_cast<uint32_t>(deploy.index().findByName("relu1"))});
}

// The fusion panel's comparison of two builds matches groups by provenance as :compare does: of
// a PyTorch export built at opt_level 2 and 3, the second dense's group (MatMul, Add, residual
// Add at 2; the dense and the Add at 3) is the same; by names alone nothing would be.
TEST(GuiInteraction, ComparedBuildsMatchGroupsByProvenance) {
  Headless h;
  const std::string file = std::string(LOUPE_SOURCE_DIR) +
                           "/tests/onnx/data/exports/test_torch_gelu_tanh_mlp/model.onnx";
  for (const char *opt : {"2", "3"}) {
    ASSERT_TRUE(h.s.viewer.run(":load " + file));
    ASSERT_TRUE(h.s.viewer.run(std::string(":build opt_level=") + opt));
  }
  const std::vector<GroupView> &two = h.s.viewer.groupsAt(1), &three = h.s.viewer.groupsAt(3);
  ASSERT_EQ(two.size(), 7u);
  ASSERT_EQ(three.size(), 3u);
  PartitionDiff byName = comparePartitions(two, three);
  EXPECT_EQ(byName.onlyA.size(), 7u);
  EXPECT_EQ(byName.onlyB.size(), 3u);
  std::set<std::string> names2, names3;
  for (const GroupView &g : two)
    names2.insert(g.memberNames.begin(), g.memberNames.end());
  for (const GroupView &g : three)
    names3.insert(g.memberNames.begin(), g.memberNames.end());
  GroupMatcher matcher(h.s.viewer.engine().historyGraphs(), 1, names2, 3, names3);
  PartitionDiff byProvenance = comparePartitions(two, three, &matcher);
  EXPECT_EQ(byProvenance.onlyA.size(), 6u);
  EXPECT_EQ(byProvenance.onlyB.size(), 2u);
  EXPECT_EQ(matcher.foldedIntoB.at("/up/MatMul"), "/up/Add");
}

// Folding by scope in the graph panel: double-clicking a scope's box unfolds it (its own scopes
// become boxes), double-clicking an op folds its innermost unfolded scope back.
TEST(GuiInteraction, DoubleClickUnfoldsAScopeAndFoldsItBack) {
  Headless h;
  scopedInGraphPanel(h);
  const Graph &g = h.s.viewer.engine().current()->graph;
  size_t step = h.s.viewer.engine().history().size() - 1;
  auto boxOf = [&](const char *name) {
    const gui::GraphLayout &l = h.s.viewer.layout(step, -1, -1, {}, h.s.graph.fold);
    int i = l.find(static_cast<uint32_t>(g.index().findByName(name)));
    EXPECT_GE(i, 0) << name;
    const gui::LaidNode &n = l.nodes[static_cast<size_t>(i)];
    return std::make_tuple(n.scope, h.s.graph.canvas.screenX(n.x), h.s.graph.canvas.screenY(n.y));
  };
  auto doubleClick = [&](double x, double y) {
    for (int i = 0; i < 20; ++i) // apart from any click before
      h.frame();
    h.click(x, y);
    h.click(x, y);
    h.frame();
  };
  auto [scope, x, y] = boxOf("/enc/layer.0/Sigmoid");
  EXPECT_EQ(scope, "enc");
  doubleClick(x, y);
  EXPECT_EQ(h.s.graph.fold.unfolded, (std::set<std::string>{"enc"}));
  std::tie(scope, x, y) = boxOf("/enc/layer.0/Sigmoid");
  EXPECT_EQ(scope, "enc/layer.0");
  doubleClick(x, y);
  EXPECT_EQ(h.s.graph.fold.unfolded, (std::set<std::string>{"enc", "enc/layer.0"}));
  std::tie(scope, x, y) = boxOf("/enc/layer.0/Sigmoid");
  EXPECT_EQ(scope, ""); // the op itself
  doubleClick(x, y);    // folds enc/layer.0 back
  EXPECT_EQ(h.s.graph.fold.unfolded, (std::set<std::string>{"enc"}));
  EXPECT_EQ(std::get<0>(boxOf("/enc/layer.0/Sigmoid")), "enc/layer.0");
}

// Search and go under scope folding: Enter in the search box selects the first hit and unfolds
// the scopes hiding it, so the next frame draws it as its own box, lit as a hit, in view.
TEST(GuiInteraction, SearchUnfoldsWhatHidesTheNodeFound) {
  Headless h;
  scopedInGraphPanel(h);
  const Graph &g = h.s.viewer.engine().current()->graph;
  std::snprintf(h.s.graph.search, sizeof h.s.graph.search, "sigmoid");
  searchAndGo(h.s, g);
  int sigmoid = g.index().findByName("/enc/layer.0/Sigmoid");
  EXPECT_EQ(h.s.selection.node, sigmoid);
  EXPECT_EQ(h.s.graph.fold.unfolded, (std::set<std::string>{"enc", "enc/layer.0"}));
  h.frame();
  h.frame();
  size_t step = h.s.viewer.engine().history().size() - 1;
  const gui::GraphLayout &l = h.s.viewer.layout(step, -1, -1, {}, h.s.graph.fold);
  const gui::LaidNode &n = l.nodes[static_cast<size_t>(l.find(static_cast<uint32_t>(sigmoid)))];
  EXPECT_EQ(n.kind, NodeKind::Op); // drawn as itself
  const CanvasView &cv = h.s.graph.canvas;
  EXPECT_GT(cv.screenY(n.y), cv.originY);
  EXPECT_LT(cv.screenY(n.y), cv.originY + cv.height);
  // Nothing found: nothing changes.
  std::snprintf(h.s.graph.search, sizeof h.s.graph.search, "nothing");
  searchAndGo(h.s, g);
  EXPECT_EQ(h.s.selection.node, sigmoid);
}

// The Tuning panel on a dynamic build's step offers sizes to tune (a first sample of two sizes
// of its one symbol); on a variant's step it lists the variant's tasks and where each one's
// schedule came from.
TEST(GuiInteraction, TheTuningPanelOffersADynamicBuildsSizes) {
  Headless h;
  for (const char *line :
       {"x = Variable(\"x\", shape=\"(batch, 64)\")", "y = relu(dense(x, units=64))", ":graph y",
        ":set tuning off", ":build opt_level=3"})
    ASSERT_TRUE(h.s.viewer.run(line)) << h.s.viewer.console();
  h.s.panel = Panel::Tuning;
  h.frame();
  EXPECT_STREQ(h.s.tuning.sizes, "batch=1,8");
  EXPECT_TRUE(h.s.tuning.view.tasks.empty());
  ASSERT_TRUE(h.s.viewer.run(":run batch=8 check=off")) << h.s.viewer.console();
  h.frame();
  ASSERT_EQ(h.s.tuning.view.tasks.size(), 1u);
  const std::string &fn = h.s.tuning.view.tasks[0].task.name;
  EXPECT_EQ(h.s.tuning.view.tasks[0].task.sizes, "batch=8");
  EXPECT_EQ(h.s.tuning.built.count(fn), 1u);
}
