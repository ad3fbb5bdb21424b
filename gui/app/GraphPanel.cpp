// GraphPanel: the current graph laid out — search, a node's neighbourhood, after :profile its
// kernels coloured by their share of the run time, with a bar chart of them by time, and after
// :layerwise its nodes coloured by their SQNR (the heatmap).
#include "gui/app/Canvas.h"
#include "gui/app/Panels.h"

#include "view/LayerwiseView.h"
#include "view/ProfileView.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace loupe::gui {

namespace {

// Width of the profile's bar chart beside the graph.
constexpr float kBarChartWidth = 380;

// After :profile: the kernels longest first, a bar each in its heat colour with its time and
// share; clicking one selects its tvm_op (and so brings it into view).
void kernelBarChart(AppState &s, const Graph &g, float height) {
  const Step *cur = s.viewer.engine().current();
  std::vector<KernelBar> bars = kernelBars(g, cur->profile);
  ImGui::BeginChild("kernel bars", ImVec2(kBarChartWidth, height), true);
  double longest = bars.empty() ? 1 : bars.front().ms;
  s.graph.barsX = ImGui::GetCursorScreenPos().x;
  s.graph.barsY = ImGui::GetCursorScreenPos().y;
  for (const KernelBar &b : bars) {
    ImVec2 at = ImGui::GetCursorScreenPos();
    float w = ImGui::GetContentRegionAvail().x;
    float h = ImGui::GetTextLineHeightWithSpacing();
    ImGui::GetWindowDrawList()->AddRectFilled(
        at, ImVec2(at.x + static_cast<float>(w * b.ms / longest), at.y + h),
        rgba(heatColour(b.share, bars.front().share)));
    char label[256];
    std::snprintf(label, sizeof label, "%7.3f ms %4.1f%%  %s##bar%u", b.ms, 100 * b.share,
                  b.label.c_str(), b.nid);
    if (ImGui::Selectable(label, s.selection.node == static_cast<int>(b.nid))) {
      s.selection.node = static_cast<int>(b.nid);
      s.selection.second = -1;
    }
  }
  ImGui::EndChild();
}

// A double-click under scope folding: on a folded scope's box (named by its first op) unfolds
// it; on an op in an unfolded scope folds the innermost such scope back. The box stays in view.
void toggleScope(AppState &s, const Graph &g, uint32_t nid, CanvasView &cv) {
  ScopeFold &fold = s.graph.fold;
  if (std::string scope = foldedScope(g, nid, fold); !scope.empty()) {
    fold.unfolded.insert(scope);
  } else {
    std::vector<std::string> path = scopeOf(g.index().nodes[nid].node->name);
    for (size_t k = path.size(); k >= static_cast<size_t>(std::max(fold.depth, 1)); --k)
      if (fold.unfolded.erase(scopePath(path, k)))
        break;
  }
  cv.keepInView = static_cast<int>(nid);
}

// Continues the row when `width` more pixels fit before the panel's edge, else starts the next:
// the controls and legends above the graph wrap in a narrow window instead of running off it.
void sameLineIfFits(float width) {
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < width)
    ImGui::NewLine();
}

// The widths of the widgets the row holds: a label's text, a small button, a checkbox, a slider
// `w` wide with its label.
float textWidth(const char *label) { return ImGui::CalcTextSize(label, nullptr, true).x; }
float buttonWidth(const char *label) {
  return textWidth(label) + 2 * ImGui::GetStyle().FramePadding.x;
}
float checkboxWidth(const char *label) {
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + textWidth(label);
}
float sliderWidth(float w, const char *label) {
  return w + ImGui::GetStyle().ItemInnerSpacing.x + textWidth(label);
}

} // namespace

void searchAndGo(AppState &s, const Graph &g) {
  if (!s.graph.search[0])
    return;
  if (std::vector<uint32_t> hits = searchNodes(g, s.graph.search); !hits.empty()) {
    s.selection.node = static_cast<int>(hits[0]);
    s.selection.second = -1;
    s.graph.fold = revealing(g, hits[0], s.graph.fold);
  }
}

void graphPanel(AppState &s) {
  const Graph *g = currentGraph(s);
  if (!g)
    return noGraph();
  size_t step = currentStepIndex(s);
  Styler st;
  ImGui::SetNextItemWidth(200);
  if (ImGui::InputTextWithHint("##search", "search name, op, scope", s.graph.search,
                               sizeof s.graph.search, ImGuiInputTextFlags_EnterReturnsTrue))
    searchAndGo(s, *g);
  sameLineIfFits(checkboxWidth("neighbourhood of the selected node"));
  ImGui::Checkbox("neighbourhood of the selected node", &s.graph.neighbourhoodOnly);
  sameLineIfFits(sliderWidth(100, "radius"));
  ImGui::SetNextItemWidth(100);
  ImGui::SliderInt("radius", &s.graph.radius, 1, 8);
  // Folding by the scopes in node names, when they have any.
  if (&s.graph.scoped.index() != &g->index()) {
    s.graph.scoped = *g;
    s.graph.deepestScope = scopeDepth(*g);
  }
  if (int deepest = s.graph.deepestScope; deepest > 0) {
    sameLineIfFits(sliderWidth(120, "fold scopes"));
    ImGui::SetNextItemWidth(120);
    int depth = std::min(s.graph.fold.depth, deepest);
    if (ImGui::SliderInt("fold scopes", &depth, 0, deepest, depth ? "depth %d" : "off")) {
      s.graph.fold.depth = depth;
      s.graph.fold.unfolded.clear();
    }
  }
  if (s.graph.search[0])
    st.highlighted = searchNodes(*g, s.graph.search);
  // After :profile of a built graph: its kernels coloured by their share of the run time.
  if (const Step *cur = s.viewer.engine().current();
      cur && &cur->graph == g && !cur->profile.empty()) {
    st.timeShare = timeShares(*g, cur->profile);
    st.maxShare = *std::max_element(st.timeShare.begin(), st.timeShare.end());
    sameLineIfFits(textWidth("time:"));
    ImGui::TextDisabled("time:");
    for (double f : {0.0, 0.5, 1.0}) {
      ImU32 c = rgba(heatColour(f * st.maxShare, st.maxShare));
      char label[32];
      std::snprintf(label, sizeof label, "%.0f%%##heat%.1f", 100 * f * st.maxShare, f);
      sameLineIfFits(buttonWidth(label));
      ImGui::PushStyleColor(ImGuiCol_Button, c);
      ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(20, 20, 20, 255));
      ImGui::SmallButton(label);
      ImGui::PopStyleColor(2);
    }
    sameLineIfFits(checkboxWidth("kernels by time"));
    ImGui::Checkbox("kernels by time", &s.graph.kernelBars);
  }
  // After :layerwise of this step: its nodes coloured by SQNR, with the bands as a legend.
  if (const Step *cur = s.viewer.engine().current();
      cur && &cur->graph == g && !cur->layerwise.empty()) {
    st.sqnr = nodeSqnr(*g, cur->layerwise);
    std::string against = "SQNR vs " + cur->layerwiseAgainst + ":";
    sameLineIfFits(ImGui::CalcTextSize(against.c_str()).x);
    ImGui::TextDisabled("%s", against.c_str());
    for (const SqnrBand &b : sqnrBands()) {
      sameLineIfFits(buttonWidth(b.label));
      ImGui::PushStyleColor(ImGuiCol_Button, rgba(b.colour));
      ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(20, 20, 20, 255));
      ImGui::SmallButton(b.label);
      ImGui::PopStyleColor(2);
    }
  }
  CanvasView &cv = s.graph.canvas;
  canvasButtons(s, cv);
  bool part = s.graph.neighbourhoodOnly && s.selection.node >= 0 &&
              static_cast<uint32_t>(s.selection.node) < g->index().numNodes();
  ImVec2 avail = ImGui::GetContentRegionAvail();
  if (!st.timeShare.empty() && s.graph.kernelBars) {
    kernelBarChart(s, *g, avail.y);
    ImGui::SameLine();
    avail = ImGui::GetContentRegionAvail();
  }
  bool ctrl = false;
  int clicked =
      drawStep(s, "graph", step, cv, avail, st, s.selection.node, s.selection.second, &ctrl,
               part ? s.selection.node : -1, part ? s.graph.radius : -1, {}, s.graph.fold);
  if (clicked >= 0 && cv.doubleClicked && s.graph.fold.depth > 0)
    toggleScope(s, *g, static_cast<uint32_t>(clicked), cv);
  handleClick(s, *g, clicked, ctrl);
}

} // namespace loupe::gui
