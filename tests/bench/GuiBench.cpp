// GuiBench: loupe-gui's cost on large graphs — a synthetic 2,000-node graph and the zoo's
// largest networks (densenet-201, inception-v3) after GraphFusePartition: the layout (once per
// snapshot) and the time of one frame of each view, drawn and rendered (glFinish), also while
// panning and zooming; the first frame from opening a graph; and the layout alone, layered and
// dot side by side with their crossings, of synthetic graphs of four shapes from 1,000 to
// 20,000 nodes and of the zoo's networks.
// Needs a display: `xvfb-run -a build/tests/bench/loupe_gui_bench`.
#include "gui/app/Window.h"

#include <GLFW/glfw3.h>
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

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

// A chain of `ops` relus.
std::string chain(int ops) {
  std::string p = "x = Variable(\"x\", shape=(1, 64))\n";
  for (int i = 0; i < ops; ++i)
    p += "x = relu(x)\n";
  return p + ":graph x\n";
}

// Blocks of eight branches off one value joined by a concatenate (inception's shape): about
// `ops` ops.
std::string wide(int ops) {
  std::string p = "x = Variable(\"x\", shape=(1, 64))\n";
  for (int i = 0; i < ops / 10; ++i) {
    p += "x = concatenate(";
    for (int b = 0; b < 8; ++b)
      p += std::string(b ? ", " : "") + (b % 2 ? "sigmoid(x)" : "relu(x)");
    p += ", axis=1)\nx = relu(x)\n";
  }
  return p + ":graph x\n";
}

// Transformer layers: three projections, scores, softmax, context, output projection and a
// feed-forward block, each with its residual add: about `ops` ops (14 a layer).
std::string transformer(int ops) {
  std::string p = "x = Variable(\"x\", shape=(1, 16, 64))\n";
  for (int i = 0; i < ops / 14; ++i) {
    std::string n = std::to_string(i);
    p += "q = dense(x, units=64, name=\"q" + n + "\")\n" + "k = dense(x, units=64, name=\"k" + n +
         "\")\n" + "v = dense(x, units=64, name=\"v" + n + "\")\n" +
         "s = softmax(batch_matmul(q, k, transpose_b=True))\n" +
         "x = x + dense(batch_matmul(s, v), units=64, name=\"o" + n + "\")\n" +
         "x = x + dense(relu(dense(x, units=256, name=\"f" + n + "\")), units=64, name=\"g" + n +
         "\")\n";
  }
  return p + ":graph x\n";
}

std::string zoo(const char *model) {
  return std::string(":model ") + model + "\n:apply InferShape InferType GraphFusePartition\n";
}

void load(gui::Viewer &v, const std::string &program) {
  for (const ScriptInput &in : splitScript(program))
    v.run(in.text);
}

void BM_Layout(benchmark::State &state, std::string program, gui::LayoutEngine engine) {
  gui::Viewer v;
  load(v, program);
  const Graph &g = v.engine().current()->graph;
  state.counters["nodes"] = g.index().numNodes();
  gui::LayoutOptions o = v.metrics;
  o.params = gui::paramNames(g);
  o.engine = engine;
  gui::GraphLayout l;
  for (auto _ : state)
    l = gui::layoutGraph(g, o);
  state.counters["boxes"] = static_cast<double>(l.nodes.size());
  state.counters["crossings"] = static_cast<double>(l.crossings());
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
enum class View { GraphFit, GraphFirst, GraphPanning, FusionFit, FusionCollapsed, Timeline };

void BM_Frame(benchmark::State &state, std::string program, View view) {
  gui::AppState s;
  std::string error;
  GLFWwindow *w = sharedWindow(s.viewer.metrics, error);
  if (!w) {
    state.SkipWithError(error.c_str());
    return;
  }
  load(s.viewer, program);
  s.panel = view == View::Timeline ? gui::Panel::Timeline
            : view == View::GraphFit || view == View::GraphFirst || view == View::GraphPanning
                ? gui::Panel::Graph
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
  s.viewer.waitForLayout(); // made on the layout thread
  gui::renderFrame(w, s);
  state.counters["nodes"] = s.viewer.engine().current()->graph.index().numNodes();
  gui::CanvasView &cv = *s.canvasOf(gui::Panel::Graph);
  long frame = 0;
  for (auto _ : state) {
    if (view == View::GraphPanning) { // down the graph at a legible zoom, zooming in and out
      cv.panY -= 40;
      cv.zoom *= ++frame % 20 < 10 ? 1.02 : 1 / 1.02;
    }
    glfwPollEvents();
    gui::renderFrame(w, s);
    glFinish();
    glfwSwapBuffers(w);
  }
}

// From opening a graph to its first frame in the graph panel, fitted: the program run (a
// :model or :load, or a synthetic graph's statements), the layout made on its thread, the
// frames drawn meanwhile and the first with it — what a user waits for.
void BM_FirstFrame(benchmark::State &state, std::string program) {
  std::string error;
  gui::LayoutOptions metrics;
  GLFWwindow *w = sharedWindow(metrics, error);
  if (!w) {
    state.SkipWithError(error.c_str());
    return;
  }
  size_t nodes = 0;
  for (auto _ : state) {
    gui::AppState s;
    s.viewer.metrics = metrics;
    load(s.viewer, program);
    s.panel = gui::Panel::Graph;
    s.selectPanel = true;
    s.graph.canvas.fitPending = true;
    gui::renderFrame(w, s);
    while (s.viewer.layingOut() > 0 || !s.graph.canvas.shown) {
      gui::renderFrame(w, s);
      glFinish();
    }
    nodes = s.viewer.engine().current()->graph.index().numNodes();
  }
  state.counters["nodes"] = static_cast<double>(nodes);
}

} // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  const std::pair<const char *, std::string> graphs[] = {
      {"synthetic2000", synthetic()},           {"ladder10000", ladder(10000)},
      {"transformer20000", transformer(20000)}, {"densenet-201", zoo("densenet-201")},
      {"inception-v3", zoo("inception-v3")},
  };
  const std::pair<const char *, View> views[] = {
      {"graph_fit", View::GraphFit},
      {"graph_first_view", View::GraphFirst},
      {"graph_panning", View::GraphPanning},
      {"fusion_fit", View::FusionFit},
      {"fusion_collapsed", View::FusionCollapsed},
      {"timeline", View::Timeline},
  };
  // Layout only (no frames), layered and dot: synthetic shapes at 1k to 20k nodes (dot only up
  // to 2k: past that it takes minutes on some shapes), then the zoo's networks.
  const std::pair<const char *, gui::LayoutEngine> engines[] = {
      {"layered", gui::LayoutEngine::Layered}, {"dot", gui::LayoutEngine::Dot}};
  for (const auto &[shape, make] :
       {std::pair{"chain", &chain}, std::pair{"ladder", &ladder}, std::pair{"wide", &wide},
        std::pair{"transformer", &transformer}})
    for (int ops : {1000, 2000, 5000, 10000, 20000})
      for (const auto &[engineName, engine] : engines)
        if (engine == gui::LayoutEngine::Layered || ops <= 2000)
          benchmark::RegisterBenchmark(
              (std::string("BM_Layout/") + engineName + "/" + shape + std::to_string(ops)).c_str(),
              BM_Layout, make(ops), engine)
              ->Unit(benchmark::kMillisecond)
              ->Iterations(1);
  for (const char *model : {"resnet-18_v1", "resnet-50_v1", "squeezenet1.0", "mobilenet", "vgg-16",
                            "densenet-121", "inception-v3", "bert-base", "lstm-lm"})
    for (const auto &[engineName, engine] : engines)
      benchmark::RegisterBenchmark((std::string("BM_Layout/") + engineName + "/" + model).c_str(),
                                   BM_Layout, zoo(model), engine)
          ->Unit(benchmark::kMillisecond)
          ->Iterations(1);
  // First frames: synthetic graphs of 1k to 20k nodes, zoo networks, the committed exports.
  std::vector<std::pair<std::string, std::string>> opened;
  for (int ops : {1000, 5000, 10000, 20000}) {
    opened.push_back({"ladder" + std::to_string(ops), ladder(ops)});
    opened.push_back({"transformer" + std::to_string(ops), transformer(ops)});
  }
  for (const char *model : {"densenet-201", "inception-v3", "bert-base", "vit-b16", "lstm-lm"})
    opened.push_back({model, std::string(":model ") + model + "\n"});
  for (const char *file : {"test_torch_transformer_encoder", "test_torch_lstm_language_model",
                           "test_torch_gru_tagger"})
    opened.push_back({file, std::string(":load " LOUPE_SOURCE_DIR "/tests/onnx/data/exports/") +
                                file + "/model.onnx\n"});
  for (const auto &[name, program] : opened)
    benchmark::RegisterBenchmark(("BM_FirstFrame/" + name).c_str(), BM_FirstFrame, program)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  for (const auto &[name, program] : graphs) {
    benchmark::RegisterBenchmark((std::string("BM_Layout/layered/") + name).c_str(), BM_Layout,
                                 program, gui::LayoutEngine::Layered)
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
