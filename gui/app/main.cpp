// loupe-gui: the viewer window (Dear ImGui + GLFW + OpenGL 3), or with --screenshot a headless
// render of one panel to a PNG for tests and the README.
#include "backend/tune/Measure.h"
#include "gui/app/AppState.h"
#include "gui/app/Canvas.h"
#include "gui/app/Panels.h"
#include "gui/app/Screenshot.h"
#include "gui/app/Window.h"
#include "passes/Provenance.h"
#include "report/Report.h"

#include <GLFW/glfw3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace loupe;

namespace {

const char *kUsage =
    R"(usage: loupe-gui [FILE]                      open a session, script, graph JSON or ONNX model
       loupe-gui --script FILE [--step N] [--panel graph|timeline|fusion|loops|buffers]
                 [--select NODE] [--fit] [--collapse-all] [--fold-scopes N] [--compare STEP]
                 [--layout layered|dot] [--size WxH] [--screenshot OUT.png [--boxes OUT.tsv]]
  --script FILE      a session or script to step through (all of it runs unless --step N)
  --step N           run only the first N inputs of the script
  --panel P          the panel to show
  --select NODE      select a node (the inspector shows it; the graph pans to it); on a built
                     step, a node the build fused selects its kernel, and the Loops panel
                     highlights the node's loop lines and instructions
  --fit              show the whole graph (a large one opens at a legible zoom at its inputs)
  --collapse-all     draw every fusion group as one box (its kernel) in the fusion panel
  --fold-scopes N    fold the graph panel's nodes by the scopes in their names, N deep (the
                     scopes of a node --select names unfolded)
  --layout L         who places the boxes: layered (Loupe's layout, the default) or dot
                     (Graphviz's, to compare; slow on large graphs)
  --compare STEP     the fusion panel beside history step STEP's partition, differences marked
  --screenshot OUT   render a few frames, save the window as PNG and exit
  --boxes OUT.tsv    with --screenshot, also the node boxes drawn in it: one per line, the
                     node's name and its rectangle's pixels x0 y0 x1 y1, separated by tabs
)";

int usageError(const std::string &msg) {
  std::fprintf(stderr, "loupe-gui: %s\n%s", msg.c_str(), kUsage);
  return 2;
}

// A whole number of zero or more, or -1 when `v` is not one.
long parseCount(const std::string &v) {
  char *end = nullptr;
  long n = std::strtol(v.c_str(), &end, 10);
  return v.empty() || *end || n < 0 ? -1 : n;
}

// The boxes of a screenshot as --boxes writes them; an error message, or empty.
std::string writeBoxes(const std::string &path, const std::vector<gui::DrawnBox> &boxes) {
  std::ofstream f(path);
  for (const gui::DrawnBox &b : boxes) {
    // A name is text from the user's file: tabs and line breaks in it are written as spaces.
    std::string name = b.name;
    std::replace_if(
        name.begin(), name.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
    f << name << '\t' << std::lround(b.x0) << '\t' << std::lround(b.y0) << '\t' << std::lround(b.x1)
      << '\t' << std::lround(b.y1) << '\n';
  }
  f.close();
  return f ? "" : "cannot write " + path;
}

} // namespace

int main(int argc, char **argv) {
  // The tuner's measuring processes are this executable too (backend/tune/Measure.h).
  if (argc == 2 && std::string(argv[1]) == "--tune-worker")
    return loupe::backend::tuneWorkerMain();
  std::string script, screenshot, boxesFile, panelName = "graph", select;
  bool fitAll = false, collapseAll = false, dotLayout = false;
  long step = -1, compare = -1, foldDepth = 0;
  int width = 1600, height = 1000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        return "";
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--script") {
      script = value();
    } else if (a == "--step") {
      std::string v = value();
      if ((step = parseCount(v)) < 0)
        return usageError("--step takes a number of inputs, got '" + v + "'");
    } else if (a == "--panel") {
      panelName = value();
    } else if (a == "--select") {
      select = value();
    } else if (a == "--fit") {
      fitAll = true;
    } else if (a == "--collapse-all") {
      collapseAll = true;
    } else if (a == "--layout") {
      std::string v = value();
      if (v != "layered" && v != "dot")
        return usageError("--layout takes layered or dot, got '" + v + "'");
      dotLayout = v == "dot";
    } else if (a == "--fold-scopes") {
      std::string v = value();
      if ((foldDepth = parseCount(v)) < 0)
        return usageError("--fold-scopes takes a depth, got '" + v + "'");
    } else if (a == "--compare") {
      std::string v = value();
      if ((compare = parseCount(v)) < 0)
        return usageError("--compare takes a history step, got '" + v + "'");
    } else if (a == "--size") {
      std::string v = value();
      if (std::sscanf(v.c_str(), "%dx%d", &width, &height) != 2 || width < 200 || height < 200 ||
          width > 8000 || height > 8000)
        return usageError("--size takes WxH such as 1600x1000, got '" + v + "'");
    } else if (a == "--screenshot") {
      screenshot = value();
      if (screenshot.empty())
        return usageError("--screenshot needs a file name");
    } else if (a == "--boxes") {
      boxesFile = value();
      if (boxesFile.empty())
        return usageError("--boxes needs a file name");
    } else if (!a.empty() && a[0] == '-') {
      return usageError("unknown option " + a);
    } else if (script.empty()) {
      script = a;
    } else {
      return usageError("one file at a time, got '" + script + "' and '" + a + "'");
    }
  }
  if (!boxesFile.empty() && screenshot.empty())
    return usageError("--boxes goes with --screenshot");
  gui::AppState s;
  s.viewer.setTuning("on");                     // the records this machine's :tune wrote
  s.viewer.setPrepare(report::addViewCommands); // the console has :report, as loupe has
  if (!gui::parsePanel(panelName, s.panel))
    return usageError("unknown panel '" + panelName +
                      "'; panels: graph, timeline, fusion, loops, buffers");
  if (!script.empty()) {
    std::string err = s.viewer.open(script);
    if (!err.empty()) {
      std::fprintf(stderr, "loupe-gui: %s\n", err.c_str());
      return 1;
    }
    s.viewer.runTo(step < 0 ? s.viewer.script().size() : static_cast<size_t>(step));
  }
  if (compare >= 0) {
    if (static_cast<size_t>(compare) >= s.viewer.engine().history().size() ||
        !gui::hasGroups(s.viewer.engine().history()[static_cast<size_t>(compare)].graph)) {
      std::fprintf(stderr, "loupe-gui: --compare %ld: no partitioned step %ld in the history\n",
                   compare, compare);
      return 1;
    }
    s.fusion.compareStep = static_cast<int>(compare);
  }
  s.graph.fold.depth = static_cast<int>(foldDepth);
  if (dotLayout)
    s.viewer.metrics.engine = gui::LayoutEngine::Dot;
  if (collapseAll)
    for (const gui::GroupView &gv : s.viewer.groups())
      s.fusion.collapsed.insert(gv.rootName);
  if (fitAll) {
    for (gui::Panel p : {gui::Panel::Graph, gui::Panel::Fusion})
      s.canvasOf(p)->fitPending = true;
    s.fusion.compared.fitPending = true;
  }
  if (!select.empty()) {
    const Step *cur = s.viewer.engine().current();
    int nid = cur ? cur->graph.index().findByName(select) : -1;
    if (nid < 0 && cur) { // on a built step, a node the build fused: the kernel that computes it,
      // with the node's loops and instructions lit: a kernel several calls share names the
      // first call's nodes, and the selected one is lit where its counterpart is; paired with
      // its own call in the timeline
      if (std::optional<KernelSite> site = kernelSite(cur->graph, select)) {
        nid = site->call;
        const auto &history = s.viewer.engine().history();
        size_t step = s.viewer.engine().cursor();
        if (int source = step > 0 ? history[step - 1].graph.index().findByName(select) : -1;
            source >= 0)
          gui::pairNodes(s, history[step - 1].graph, cur->graph, step, source, false);
        s.loops.focus = s.loops.paired = site->listedAs;
      }
    }
    if (nid < 0) {
      std::fprintf(stderr, "loupe-gui: no node '%s' in the current graph\n", select.c_str());
      return 1;
    }
    s.selection.node = nid;
    s.graph.fold = gui::revealing(cur->graph, static_cast<uint32_t>(nid), s.graph.fold);
  }

  std::string error;
  GLFWwindow *window = gui::openWindow(width, height, screenshot.empty(), s, error);
  if (!window) {
    std::fprintf(stderr, "loupe-gui: %s\n", error.c_str());
    return 1;
  }
  int frames = 0, status = 0;
  while (!glfwWindowShouldClose(window)) {
    glfwPollEvents();
    gui::drawnBoxes().clear();
    gui::recordDrawnBoxes(!boxesFile.empty());
    gui::renderFrame(window, s);
    // Screenshots: a few frames first, so that windows and fitted canvases have settled, and
    // the layouts the panels asked for made.
    if (!screenshot.empty() && s.viewer.layingOut() > 0) {
      glfwSwapBuffers(window);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    if (!screenshot.empty() && ++frames == 4) {
      int fw = 0, fh = 0;
      glfwGetFramebufferSize(window, &fw, &fh);
      std::string err = gui::writeScreenshot(screenshot, fw, fh);
      if (err.empty() && !boxesFile.empty())
        err = writeBoxes(boxesFile, gui::drawnBoxes());
      if (!err.empty()) {
        std::fprintf(stderr, "loupe-gui: %s\n", err.c_str());
        status = 1;
      }
      break;
    }
    glfwSwapBuffers(window);
  }
  gui::closeWindow(window);
  return status;
}
