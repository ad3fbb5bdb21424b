// LoopsPanel: a fused function's lowered loops as a tree, and its LLVM IR and assembly once built.
#include "gui/app/Panels.h"

#include "core/FusedModule.h"
#include "gui/model/Elide.h"

#include <imgui.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace loupe::gui {

namespace {

// The lowered loops as a tree: a line ending in `{` opens a node, `}` closes it.
void loopTree(const std::string &text) {
  std::istringstream in(text);
  std::string line;
  std::vector<bool> open; // whether each enclosing node is expanded
  int id = 0;
  auto visible = [&] { return std::all_of(open.begin(), open.end(), [](bool b) { return b; }); };
  while (std::getline(in, line)) {
    std::string trimmed = line.substr(std::min(line.size(), line.find_first_not_of(' ')));
    if (trimmed == "}") {
      if (!open.empty()) {
        bool wasOpen = open.back();
        open.pop_back();
        if (wasOpen && visible())
          ImGui::TreePop();
      }
      continue;
    }
    bool parallel = trimmed.find("parallel") == 0, vec = trimmed.find("vectorized") == 0,
         unrolled = trimmed.find("unrolled") == 0;
    ImVec4 col = parallel   ? ImVec4(0.75f, 0.2f, 0.1f, 1)
                 : vec      ? ImVec4(0.1f, 0.3f, 0.8f, 1)
                 : unrolled ? ImVec4(0.5f, 0.2f, 0.6f, 1)
                            : ImVec4(0.1f, 0.1f, 0.1f, 1);
    if (!trimmed.empty() && trimmed.back() == '{') {
      if (!visible()) {
        open.push_back(false);
        continue;
      }
      ImGui::PushID(id++);
      ImGui::PushStyleColor(ImGuiCol_Text, col);
      bool o = ImGui::TreeNodeEx(trimmed.c_str(), ImGuiTreeNodeFlags_DefaultOpen, "%s%s",
                                 trimmed.c_str(),
                                 parallel ? "   [parallel]"
                                 : vec    ? "   [vectorized]"
                                          : "");
      ImGui::PopStyleColor();
      ImGui::PopID();
      open.push_back(o);
    } else if (visible()) {
      ImGui::TextColored(col, "%s", trimmed.c_str());
    }
  }
  while (!open.empty()) {
    bool wasOpen = open.back();
    open.pop_back();
    if (wasOpen && visible())
      ImGui::TreePop();
  }
}

} // namespace

void loopsPanel(AppState &s) {
  const Graph *g = currentGraph(s);
  if (!g)
    return noGraph();
  const GraphAttr *m = g->attr("module");
  if (!m || !m->opaque) {
    ImGui::TextDisabled("No fused functions in this snapshot: :apply GraphFuseCompile or :build.");
    return;
  }
  auto module = std::static_pointer_cast<const FusedModule>(m->opaque);
  // A kernel node selected anywhere (graph, timeline, --select) shows its function here.
  if (s.selection.node != s.loops.followed) {
    s.loops.followed = s.selection.node;
    const IndexedGraph &idx = g->index();
    if (s.selection.node >= 0 && static_cast<uint32_t>(s.selection.node) < idx.numNodes()) {
      const Node &n = *idx.nodes[static_cast<uint32_t>(s.selection.node)].node;
      if (!n.isVariable() && n.op->name == "tvm_op")
        s.loops.function = n.parsed.getStr("func_name");
    }
  }
  const float listWidth = 260;
  ImGui::BeginChild("functions", ImVec2(listWidth, 0), true);
  // Names that do not fit keep both ends (the numbered suffix tells kernels apart); the whole
  // name is the tooltip.
  const float room = ImGui::GetContentRegionAvail().x;
  for (const auto &[name, fn] : module->functions) {
    // The most characters whose elided form fits (the font is proportional).
    size_t lo = 1, hi = name.size();
    while (lo < hi) {
      size_t mid = (lo + hi + 1) / 2;
      if (ImGui::CalcTextSize(elideMiddle(name, mid).c_str()).x <= room)
        lo = mid;
      else
        hi = mid - 1;
    }
    std::string shown = elideMiddle(name, lo);
    ImGui::PushID(name.c_str());
    if (ImGui::Selectable(shown.c_str(), name == s.loops.function))
      s.loops.function = name;
    if (ImGui::IsItemHovered() && shown != name)
      ImGui::SetTooltip("%s", name.c_str());
    ImGui::PopID();
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("code", ImVec2(0, 0), false);
  if (s.loops.function.empty() || !module->functions.count(s.loops.function))
    s.loops.function = module->functions.begin()->first;
  bool compiled = module->compiled != nullptr;
  if (ImGui::BeginTabBar("codeTabs")) {
    if (ImGui::BeginTabItem("Loops")) {
      ImGui::BeginChild("loops");
      loopTree(cachedCommand(s, ":lower " + s.loops.function));
      ImGui::EndChild();
      ImGui::EndTabItem();
    }
    // The compiled forms: a tab each, filled by the engine's command once built.
    struct CodeTab {
      const char *tab, *command, *missing;
    };
    for (const CodeTab &t : {CodeTab{"LLVM IR", ":llvm ", "the LLVM module"},
                             CodeTab{"Assembly", ":asm ", "the machine code"}}) {
      if (!ImGui::BeginTabItem(t.tab))
        continue;
      ImGui::BeginChild(t.tab, ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
      if (compiled)
        ImGui::TextUnformatted(cachedCommand(s, t.command + s.loops.function).c_str());
      else
        ImGui::TextDisabled("Not compiled yet: :build makes %s.", t.missing);
      ImGui::EndChild();
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
}

} // namespace loupe::gui
