// GuiBench: loupe-gui's cost on large graphs — a synthetic 2,000-node graph and the zoo's
// largest networks (densenet-201, inception-v3) after GraphFusePartition: the dot layout (once
// per snapshot) and the time of one frame of each view, drawn and rendered (glFinish); and the
// layout alone of ladders of 1,000 to 4,000 ops.
// Needs a display: `xvfb-run -a build/tests/bench/loupe_gui_bench`.
#include "gui/app/Window.h"

#include <GLFW/glfw3.h>
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

using namespace loupe;

namespace {

// 667 blocks of relu, sigmoid and their sum: 2,002 nodes, every block a fusion group.
std::string synthetic() {
  std::string p = "x = Variable(\"x\", shape=(1, 64))\n";
  for (int i = 0; i < 667; ++i)
    p += "x = relu(x) + sigmoid(x)\n";
  return p + ":graph x\n:apply InferShape InferType GraphFusePartition\n";
}

// A ladder of relu and add whose adds also read the rung two below (skip edges): `ops` ops, the
// shape on which dot's layout grows about quadratically.
std::string ladder(int ops) {
  std::string p = "a = Variable(\"x\", shape=(1, 64))\nb = relu(a)\n";
  for (int i = 0; i < ops / 2; ++i)
    p += "c = relu(b) + a\na = b\nb = c\n";
  return p + ":graph b\n";
}

std::string zoo(const char *model) {
  return std::string(":model ") + model + "\n:apply InferShape InferType GraphFusePartition\n";
}

void load(gui::Viewer &v, const std::string &program) {
  for (const ScriptInput &in : splitScript(program))
    v.run(in.text);
}

void BM_Layout(benchmark::State &state, std::string program) {
  gui::Viewer v;
  load(v, program);
  const Graph &g = v.engine().current()->graph;
  state.counters["nodes"] = g.index().numNodes();
  gui::LayoutOptions o = v.metrics;
  o.params = gui::paramNames(g);
  for (auto _ : state)
    benchmark::DoNotOptimize(gui::layoutGraph(g, o));
}

// One window for the whole run: opening and closing GLFW for each benchmark sometimes fails
// under Xvfb. Null (with `error` set) when there is no display.
GLFWwindow *sharedWindow(gui::LayoutOptions &metrics, std::string &error) {
  static gui::AppState first;
  static std::string openError;
  static GLFWwindow *w = gui::openWindow(1600, 1000, false, first, openError);
  metrics = first.viewer.metrics;
  error = openError;
  return w;
}

/// What a frame shows.
enum class View { GraphFit, GraphFirst, FusionFit, FusionCollapsed, Timeline };

void BM_Frame(benchmark::State &state, std::string program, View view) {
  gui::AppState s;
  std::string error;
  GLFWwindow *w = sharedWindow(s.viewer.metrics, error);
  if (!w) {
    state.SkipWithError(error.c_str());
    return;
  }
  load(s.viewer, program);
  s.panel = view == View::Timeline                               ? gui::Panel::Timeline
            : view == View::GraphFit || view == View::GraphFirst ? gui::Panel::Graph
                                                                 : gui::Panel::Fusion;
  s.selectPanel = true;
  if (view == View::FusionCollapsed)
    for (const gui::GroupView &gv : s.viewer.groups())
      s.fusion.collapsed.insert(gv.rootName);
  if (view == View::GraphFit || view == View::FusionFit || view == View::FusionCollapsed)
    s.canvasOf(s.panel)->fitPending = true;
  // Two frames first: one opens the panel's tab, the next lays the graph out (once per
  // snapshot, measured by BM_Layout); neither is part of a frame's cost.
  gui::renderFrame(w, s);
  gui::renderFrame(w, s);
  state.counters["nodes"] = s.viewer.engine().current()->graph.index().numNodes();
  for (auto _ : state) {
    glfwPollEvents();
    gui::renderFrame(w, s);
    glFinish();
    glfwSwapBuffers(w);
  }
}

} // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  const std::pair<const char *, std::string> graphs[] = {
      {"synthetic2000", synthetic()},
      {"densenet-201", zoo("densenet-201")},
      {"inception-v3", zoo("inception-v3")},
  };
  const std::pair<const char *, View> views[] = {
      {"graph_fit", View::GraphFit},   {"graph_first_view", View::GraphFirst},
      {"fusion_fit", View::FusionFit}, {"fusion_collapsed", View::FusionCollapsed},
      {"timeline", View::Timeline},
  };
  // Layout only (no frames): ladders around kBoundedBoxes, past which dot's work is bounded.
  for (int ops : {1000, 2000, 4000})
    benchmark::RegisterBenchmark(("BM_Layout/ladder" + std::to_string(ops)).c_str(), BM_Layout,
                                 ladder(ops))
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  for (const auto &[name, program] : graphs) {
    benchmark::RegisterBenchmark((std::string("BM_Layout/") + name).c_str(), BM_Layout, program)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(3);
    for (const auto &[viewName, view] : views)
      benchmark::RegisterBenchmark((std::string("BM_Frame/") + name + "/" + viewName).c_str(),
                                   BM_Frame, program, view)
          ->Unit(benchmark::kMillisecond)
          ->MinTime(1.0);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
