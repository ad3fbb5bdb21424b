// GuiBench: loupe-gui's cost on a 2,000-node graph — the dot layout (once per snapshot) and the
// time of one frame of the graph, fusion and timeline panels, drawn and rendered (glFinish).
// Needs a display: `xvfb-run -a build/tests/bench/loupe_gui_bench`.
#include "gui/app/Window.h"

#include <GLFW/glfw3.h>
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

using namespace loupe;

namespace {

// 667 blocks of relu, sigmoid and their sum: 2,002 nodes, every block a fusion group.
std::string bigProgram() {
  std::string p = "x = Variable(\"x\", shape=(1, 64))\n";
  for (int i = 0; i < 667; ++i)
    p += "x = relu(x) + sigmoid(x)\n";
  return p + ":graph x\n:apply InferShape InferType GraphFusePartition\n";
}

void load(view::Viewer &v) {
  for (const ScriptInput &in : splitScript(bigProgram()))
    v.run(in.text);
}

void BM_Layout2000(benchmark::State &state) {
  view::Viewer v;
  load(v);
  const Graph &g = v.engine().current()->graph;
  state.counters["nodes"] = g.index().numNodes();
  view::LayoutOptions o;
  for (auto _ : state)
    benchmark::DoNotOptimize(view::layoutGraph(g, o));
}
BENCHMARK(BM_Layout2000)->Unit(benchmark::kMillisecond)->Iterations(3);

// One window for the whole run: opening and closing GLFW for each benchmark sometimes fails
// under Xvfb. Null (with `error` set) when there is no display.
GLFWwindow *sharedWindow(view::LayoutOptions &metrics, std::string &error) {
  static gui::AppState first;
  static std::string openError;
  static GLFWwindow *w = gui::openWindow(1600, 1000, false, first, openError);
  metrics = first.viewer.metrics;
  error = openError;
  return w;
}

void frames(benchmark::State &state, gui::Panel panel, bool zoomedIn) {
  gui::AppState s;
  std::string error;
  GLFWwindow *w = sharedWindow(s.viewer.metrics, error);
  if (!w) {
    state.SkipWithError(error.c_str());
    return;
  }
  load(s.viewer);
  s.panel = panel;
  s.selectPanel = true;
  // Two frames first: one opens the panel's tab, the next lays the graph out (once per
  // snapshot, measured by BM_Layout2000); neither is part of a frame's cost.
  gui::renderFrame(w, s);
  gui::renderFrame(w, s);
  if (zoomedIn) {
    gui::CanvasView &cv = s.canvases[panel];
    cv.zoom = 1.0;
    cv.fitPending = false;
  }
  state.counters["nodes"] = s.viewer.engine().current()->graph.index().numNodes();
  for (auto _ : state) {
    glfwPollEvents();
    gui::renderFrame(w, s);
    glFinish();
    glfwSwapBuffers(w);
  }
}

void BM_FrameGraphFit(benchmark::State &st) { frames(st, gui::Panel::Graph, false); }
void BM_FrameGraphZoomed(benchmark::State &st) { frames(st, gui::Panel::Graph, true); }
void BM_FrameFusionFit(benchmark::State &st) { frames(st, gui::Panel::Fusion, false); }
BENCHMARK(BM_FrameGraphFit)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_FrameGraphZoomed)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_FrameFusionFit)->Unit(benchmark::kMillisecond)->MinTime(2.0);

} // namespace

BENCHMARK_MAIN();
