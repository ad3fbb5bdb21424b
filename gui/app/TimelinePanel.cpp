// TimelinePanel: the history of steps, and a step's graph before and after it with what was
// added, removed and changed, and the corresponding nodes of both sides.
#include "gui/app/Canvas.h"
#include "gui/app/Panels.h"

#include "passes/Provenance.h"
#include "view/StepDiff.h"
#include "view/Viewer.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace loupe::gui {

namespace {

bool changedStep(const Step &st) { return st.change.rfind("graph unchanged", 0) != 0; }

// One row of the timeline's change list in its colour.
void changeRow(const ChangeRow &r) {
  if (r.kind == RowKind::Detail)
    return ImGui::BulletText("%s", r.text.c_str());
  if (r.kind == RowKind::None)
    return ImGui::TextDisabled("%s", r.text.c_str());
  if (r.kind == RowKind::Separator) {
    // A line one text row high, so that every row has the height the clipper assumes.
    ImVec2 at = ImGui::GetCursorScreenPos();
    float h = ImGui::GetTextLineHeight(), w = ImGui::GetContentRegionAvail().x;
    ImGui::GetWindowDrawList()->AddLine(ImVec2(at.x, at.y + h / 2), ImVec2(at.x + w, at.y + h / 2),
                                        ImGui::GetColorU32(ImGuiCol_Separator));
    return ImGui::Dummy(ImVec2(w, h));
  }
  ImU32 col = r.kind == RowKind::Added         ? kAdded
              : r.kind == RowKind::Removed     ? kRemoved
              : r.kind == RowKind::Changed     ? kChangedCol
              : r.kind == RowKind::DiffAdded   ? IM_COL32(26, 140, 51, 255)
              : r.kind == RowKind::DiffRemoved ? IM_COL32(191, 26, 26, 255)
                                               : IM_COL32(51, 51, 51, 255);
  ImGui::PushStyleColor(ImGuiCol_Text, col);
  ImGui::TextUnformatted(r.text.c_str());
  ImGui::PopStyleColor();
}

} // namespace

void pairNodes(AppState &s, const Graph &before, const Graph &after, size_t step, int nid,
               bool inAfter) {
  s.timeline.pairStep = static_cast<int>(step);
  s.timeline.pairNode = nid;
  s.timeline.pairInAfter = inAfter;
  const IndexedGraph &bi = before.index(), &ai = after.index();
  const Graph &from = inAfter ? after : before, &to = inAfter ? before : after;
  std::string name = from.index().nodes[static_cast<uint32_t>(nid)].node->name;
  std::vector<uint32_t> here = {static_cast<uint32_t>(nid)}, there;
  bool built = after.attr("module") && !before.attr("module");
  if (built && inAfter) {
    there = sourceNodesOf(after, static_cast<uint32_t>(nid), before);
    std::string names;
    for (uint32_t b : there)
      names += (names.empty() ? "" : ", ") + bi.nodes[b].node->name;
    s.timeline.pairText = "kernel " + name + " computes " +
                          (names.empty() ? "no node of step " : names + " of step ") +
                          std::to_string(step - 1);
  } else if (built) {
    int k = kernelOf(after, before, static_cast<uint32_t>(nid));
    if (k >= 0) {
      there = {static_cast<uint32_t>(k)};
      // The Loops panel shows the kernel's function with this node's lines and instructions
      // (a kernel several calls share names the first call's nodes: this one's counterpart).
      s.loops.function = ai.nodes[static_cast<uint32_t>(k)].node->parsed.getStr("func_name");
      std::optional<KernelSite> site = kernelSite(after, name);
      s.loops.focus = s.loops.paired = site ? site->listedAs : name;
    }
    s.timeline.pairText =
        name + (k >= 0
                    ? " runs in kernel " + ai.nodes[static_cast<uint32_t>(k)].node->name + " (" +
                          ai.nodes[static_cast<uint32_t>(k)].node->parsed.getStr("func_name") + ")"
                    : std::string(" runs in no kernel (the build rewrote it)"));
  } else {
    int other = to.index().findByName(name);
    if (other >= 0)
      there = {static_cast<uint32_t>(other)};
    s.timeline.pairText = name + (other >= 0 ? " is in both steps"
                                  : inAfter  ? " is new in this step"
                                             : " is gone in this step");
  }
  s.timeline.pairAfter = inAfter ? here : there;
  s.timeline.pairBefore = inAfter ? there : here;
}

void timelinePanel(AppState &s) {
  const Engine &e = s.viewer.engine();
  if (e.history().empty())
    return noGraph();
  ImGui::BeginChild("steps", ImVec2(300, 0), true);
  ImGui::Checkbox("hide unchanged steps", &s.timeline.hideUnchanged);
  ImGui::Checkbox("overlay before and after", &s.timeline.overlay);
  ImGui::Separator();
  size_t chosen = s.timeline.step >= 0 ? static_cast<size_t>(s.timeline.step) : currentStepIndex(s);
  chosen = std::min(chosen, e.history().size() - 1);
  for (size_t i = 0; i < e.history().size(); ++i) {
    const Step &st = e.history()[i];
    bool changed = changedStep(st);
    if (s.timeline.hideUnchanged && !changed)
      continue;
    char label[512];
    std::snprintf(label, sizeof label, "%s %zu  %s  (%.1f ms)", changed ? "*" : " ", i,
                  st.label.c_str(), st.millis);
    ImGui::PushStyleColor(ImGuiCol_Text,
                          changed ? ImVec4(0.05f, 0.05f, 0.05f, 1) : ImVec4(0.5f, 0.5f, 0.5f, 1));
    if (ImGui::Selectable(label, i == chosen))
      s.timeline.step = static_cast<int>(i);
    ImGui::PopStyleColor();
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("stepview", ImVec2(0, 0), false);
  const Step &after = e.history()[chosen];
  ImGui::Text("step %zu: %s (%s)", chosen, after.label.c_str(), after.change.c_str());
  if (chosen == 0) {
    ImGui::TextDisabled("The first step has nothing before it.");
    ImGui::EndChild();
    return;
  }
  const Step &before = e.history()[chosen - 1];
  const StepDiff &d = s.viewer.diff(chosen);
  ImVec2 avail = ImGui::GetContentRegionAvail();
  float graphH = avail.y * 0.62f;
  Styler sb, sa;
  sb.diff = sa.diff = &d;
  sb.removedSide = true;
  if (s.timeline.pairStep != static_cast<int>(chosen))
    s.timeline.pairNode = -1;
  sb.highlighted = s.timeline.pairNode >= 0 ? s.timeline.pairBefore : std::vector<uint32_t>{};
  sa.highlighted = s.timeline.pairNode >= 0 ? s.timeline.pairAfter : std::vector<uint32_t>{};
  if (s.timeline.overlay) {
    drawStep(s, "overlay", chosen, s.timeline.after, ImVec2(avail.x, graphH), sa, -1, -1, nullptr);
  } else {
    float half = avail.x / 2 - 4;
    int inBefore = drawStep(s, "before", chosen - 1, s.timeline.before, ImVec2(half, graphH), sb,
                            -1, -1, nullptr);
    ImGui::SameLine();
    int inAfter =
        drawStep(s, "after", chosen, s.timeline.after, ImVec2(half, graphH), sa, -1, -1, nullptr);
    if (inBefore >= 0 || inAfter >= 0)
      pairNodes(s, before.graph, after.graph, chosen, inAfter >= 0 ? inAfter : inBefore,
                inAfter >= 0);
  }
  if (s.timeline.pairNode >= 0)
    ImGui::TextWrapped("%s", s.timeline.pairText.c_str());
  ImGui::BeginChild("changes", ImVec2(0, 0), true);
  // Only the rows in view are laid out: a large network's step has thousands.
  ImGuiListClipper clip;
  clip.Begin(static_cast<int>(d.rows.size()));
  while (clip.Step())
    for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i)
      changeRow(d.rows[static_cast<size_t>(i)]);
  ImGui::EndChild();
  ImGui::EndChild();
}

} // namespace loupe::gui
