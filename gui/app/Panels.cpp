// Panels: what the panels share — cached command output, the current graph and step, the
// selection by click, the canvas buttons.
#include "gui/app/Panels.h"

#include "view/Elide.h"

#include <imgui.h>

#include <algorithm>
#include <string>

namespace loupe::gui {

const std::string &cachedCommand(AppState &s, const std::string &cmd) {
  const Step *cur = s.viewer.engine().current();
  const void *snap = cur ? static_cast<const void *>(&cur->graph.index()) : nullptr;
  if (snap != s.commands.snapshot) {
    s.commands.outputs.clear();
    s.commands.snapshot = snap;
  }
  auto it = s.commands.outputs.find(cmd);
  if (it != s.commands.outputs.end())
    return it->second;
  std::string out;
  s.viewer.run(cmd, &out);
  return s.commands.outputs.emplace(cmd, out).first->second;
}

std::string fitText(const std::string &text, float width) {
  if (ImGui::CalcTextSize(text.c_str()).x <= width)
    return text;
  size_t lo = 1, hi = text.size();
  while (lo < hi) {
    size_t mid = (lo + hi + 1) / 2;
    if (ImGui::CalcTextSize(elideMiddle(text, mid).c_str()).x <= width)
      lo = mid;
    else
      hi = mid - 1;
  }
  return elideMiddle(text, lo);
}

const Graph *currentGraph(AppState &s) {
  const Step *cur = s.viewer.engine().current();
  return cur ? &cur->graph : nullptr;
}

size_t currentStepIndex(AppState &s) {
  const Engine &e = s.viewer.engine();
  const Step *cur = e.current();
  for (size_t i = 0; i < e.history().size(); ++i)
    if (&e.history()[i] == cur)
      return i;
  return 0;
}

void handleClick(AppState &s, const Graph &g, int clicked, bool ctrl) {
  if (clicked < 0)
    return;
  if (ctrl && s.selection.node >= 0 && clicked != s.selection.node) {
    s.selection.second = clicked;
    const IndexedGraph &idx = g.index();
    std::string cmd = ":why " + idx.nodes[static_cast<uint32_t>(s.selection.node)].node->name +
                      " " + idx.nodes[static_cast<uint32_t>(clicked)].node->name;
    s.selection.why = cachedCommand(s, cmd);
  } else {
    s.selection.node = clicked;
    s.selection.second = -1;
  }
}

void noGraph() { ImGui::TextDisabled("No graph yet: open a session or type a program below."); }

int drawStep(AppState &s, const char *id, size_t step, CanvasView &cv, ImVec2 size,
             const Styler &st, int selected, int second, bool *ctrl, int centre, int radius,
             const std::set<std::string> &collapsed, const ScopeFold &fold) {
  const Graph &g = s.viewer.engine().history().at(step).graph;
  if (const GraphLayout *l = s.viewer.layoutSoon(step, centre, radius, collapsed, fold)) {
    cv.shown = l;
    cv.shownGraph = g;
    if (collapsed.empty() && !fold.unfolded.empty()) {
      Styler outlined = st;
      outlined.scopes = scopeOutlines(g, *l, fold, 8);
      return drawCanvas(id, g, *l, cv, size, outlined, selected, second, ctrl);
    }
    return drawCanvas(id, g, *l, cv, size, st, selected, second, ctrl);
  }
  ImGui::TextDisabled("laying out %zu nodes …", s.viewer.layingOut());
  size.y = std::max(0.0f, size.y - ImGui::GetTextLineHeightWithSpacing());
  if (!cv.shown) {
    ImGui::Dummy(size);
    return -1;
  }
  bool fit = cv.fitPending; // kept for the new layout
  drawCanvas(id, cv.shownGraph, *cv.shown, cv, size, Styler{}, -1, -1, nullptr);
  cv.fitPending = fit;
  return -1;
}

void canvasButtons(AppState &s, CanvasView &cv) {
  ImGui::SameLine();
  if (ImGui::Button("Fit"))
    cv.fitPending = true;
  ImGui::SameLine();
  if (ImGui::Checkbox("fold inputs into ops", &s.viewer.metrics.foldInputs))
    cv.fitPending = true;
  ImGui::SameLine();
  bool dot = s.viewer.metrics.engine == LayoutEngine::Dot;
  if (ImGui::Checkbox("Graphviz dot", &dot)) {
    s.viewer.metrics.engine = dot ? LayoutEngine::Dot : LayoutEngine::Layered;
    cv.fitPending = true;
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("lay out with Graphviz's dot instead of Loupe's layered layout, to compare "
                      "(dot can take minutes on graphs of thousands of nodes)");
}

} // namespace loupe::gui
