// FusionPanel: the fusion groups as coloured regions with their roots and masters; a group
// collapses into its kernel's box, `:why` answers for two nodes, and another step's partition
// can be compared side by side.
#include "gui/app/Canvas.h"
#include "gui/app/Panels.h"
#include "passes/Provenance.h"

#include "view/FusionView.h"

#include <imgui.h>

#include <algorithm>
#include <string>
#include <vector>

namespace loupe::gui {

namespace {

// A double click in the fusion view: the clicked node's group collapses into one box, or a
// collapsed group's box expands; the node stays in view.
void toggleGroup(AppState &s, const std::vector<GroupView> &groups, uint32_t nid, CanvasView &cv) {
  for (const GroupView &gv : groups)
    if (std::find(gv.members.begin(), gv.members.end(), nid) != gv.members.end()) {
      if (!s.fusion.collapsed.erase(gv.rootName))
        s.fusion.collapsed.insert(gv.rootName);
      cv.keepInView = static_cast<int>(nid);
      return;
    }
}

// After :profile: the kernels longest first, a bar each in its heat colour with its time and
// The fusion view's "compare with" choice: any other history step with fusion groups.
void compareChoice(AppState &s, size_t step) {
  const auto &history = s.viewer.engine().history();
  std::string current =
      s.fusion.compareStep >= 0 && static_cast<size_t>(s.fusion.compareStep) < history.size()
          ? "step " + std::to_string(s.fusion.compareStep) + ": " +
                history[s.fusion.compareStep].label
          : "nothing";
  ImGui::SetNextItemWidth(320);
  if (ImGui::BeginCombo("compare with", current.c_str())) {
    if (ImGui::Selectable("nothing", s.fusion.compareStep < 0))
      s.fusion.compareStep = -1;
    for (size_t i = 0; i < history.size(); ++i)
      if (i != step && hasGroups(history[i].graph)) {
        std::string label = "step " + std::to_string(i) + ": " + history[i].label;
        if (ImGui::Selectable(label.c_str(), s.fusion.compareStep == static_cast<int>(i)))
          s.fusion.compareStep = static_cast<int>(i);
      }
    ImGui::EndCombo();
  }
}

// Two partitions side by side: the current step's and the compared one's, each group that the
// other has not outlined thick in orange.
void compareCanvases(AppState &s, Styler &st, size_t step, ImVec2 avail) {
  size_t other = static_cast<size_t>(s.fusion.compareStep);
  const std::vector<GroupView> &mine = *st.groups, &theirs = s.viewer.groupsAt(other);
  // Groups match by provenance as :compare matches them (two builds: what one folded).
  std::set<std::string> namesMine, namesTheirs;
  for (const GroupView &gv : mine)
    namesMine.insert(gv.memberNames.begin(), gv.memberNames.end());
  for (const GroupView &gv : theirs)
    namesTheirs.insert(gv.memberNames.begin(), gv.memberNames.end());
  GroupMatcher matcher(s.viewer.engine().historyGraphs(), step, namesMine, other, namesTheirs);
  PartitionDiff d = comparePartitions(mine, theirs, &matcher);
  Styler so = st;
  so.groups = &theirs;
  st.marked = d.onlyA;
  so.marked = d.onlyB;
  ImGui::Text("%zu groups of this step's %zu are not in step %zu; %zu of its %zu not here",
              d.onlyA.size(), mine.size(), other, d.onlyB.size(), theirs.size());
  float half = avail.x / 2 - 4, h = ImGui::GetContentRegionAvail().y;
  drawStep(s, "fusion", step, s.fusion.canvas, ImVec2(half, h), st, s.selection.node, -1, nullptr);
  ImGui::SameLine();
  drawStep(s, "compared", other, s.fusion.compared, ImVec2(half, h), so, -1, -1, nullptr);
}
} // namespace

void fusionPanel(AppState &s) {
  const Graph *g = currentGraph(s);
  if (!g)
    return noGraph();
  size_t step = currentStepIndex(s);
  Styler st;
  const std::vector<GroupView> &groups = s.viewer.groups();
  if (groups.empty()) {
    ImGui::TextDisabled("No fusion groups in this snapshot: :apply GraphFusePartition or :build.");
  } else {
    st.groups = &groups;
    ImGui::TextWrapped(
        "%zu groups. Hover a region for its pattern and function; click a node, then "
        "ctrl-click another to ask why they did or did not fuse; double-click a group "
        "to collapse it into its kernel (and its box to expand it).",
        groups.size());
    if (ImGui::Button("collapse all"))
      for (const GroupView &gv : groups)
        s.fusion.collapsed.insert(gv.rootName);
    ImGui::SameLine();
    if (ImGui::Button("expand all"))
      s.fusion.collapsed.clear();
    ImGui::SameLine();
    compareChoice(s, step);
  }
  if (!s.selection.why.empty())
    ImGui::TextWrapped("%s", s.selection.why.c_str());
  CanvasView &cv = s.fusion.canvas;
  canvasButtons(s, cv);
  ImVec2 avail = ImGui::GetContentRegionAvail();
  if (st.groups && s.fusion.compareStep >= 0 &&
      static_cast<size_t>(s.fusion.compareStep) < s.viewer.engine().history().size()) {
    compareCanvases(s, st, step, avail);
    return;
  }
  bool ctrl = false;
  int clicked = drawStep(s, "fusion", step, cv, avail, st, s.selection.node, s.selection.second,
                         &ctrl, -1, -1, s.fusion.collapsed);
  if (st.groups && clicked >= 0 && cv.doubleClicked)
    toggleGroup(s, *st.groups, static_cast<uint32_t>(clicked), cv);
  handleClick(s, *g, clicked, ctrl);
}

} // namespace loupe::gui
