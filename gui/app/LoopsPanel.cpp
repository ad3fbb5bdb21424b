// LoopsPanel: a fused function's lowered loops as a tree, and its LLVM IR and assembly once
// built, with one of its nodes' loop lines and instructions highlighted.
#include "gui/app/Panels.h"

#include "core/FusedModule.h"
#include "view/CodeLines.h"
#include "view/ProfileView.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace loupe::gui {

namespace {

// The focused node's lines (tests/CMakeLists.txt looks for this colour, d95900, in a screenshot).
const ImVec4 kFocusText(0.85f, 0.35f, 0.0f, 1);

// A listing command's output as rows, parsed once per snapshot.
const std::vector<CodeRow> &cachedRows(AppState &s, const std::string &cmd,
                                       std::vector<CodeRow> (*parse)(const std::string &)) {
  const std::string &text = cachedCommand(s, cmd); // first: it notices a new snapshot
  if (s.loops.rowsSnapshot != s.commands.snapshot) {
    s.loops.rows.clear();
    s.loops.rowsSnapshot = s.commands.snapshot;
  }
  auto it = s.loops.rows.find(cmd);
  if (it == s.loops.rows.end())
    it = s.loops.rows.emplace(cmd, parse(text)).first;
  return it->second;
}

// The next of a row's nodes to focus: the first, or the one after the focused one, so that
// clicking a line that computes several nodes again steps through them.
std::string nextFocus(const CodeRow &r, const std::string &focus) {
  auto it = std::find(r.nodes.begin(), r.nodes.end(), focus);
  if (it == r.nodes.end() || ++it == r.nodes.end())
    return r.nodes.front();
  return *it;
}

// The lowered loops as a tree (a line ending in `{` opens a node, `}` closes it), numbered;
// the focused node's stores are highlighted, and clicking a store focuses its node.
void loopTree(const std::vector<CodeRow> &rows, std::string &focus) {
  std::vector<bool> open; // whether each enclosing node is expanded
  int id = 0;
  auto visible = [&] { return std::all_of(open.begin(), open.end(), [](bool b) { return b; }); };
  for (const CodeRow &r : rows) {
    std::string trimmed = r.text.substr(std::min(r.text.size(), r.text.find_first_not_of(' ')));
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
         unrolled = trimmed.find("unrolled") == 0, mine = rowOf(r, focus);
    ImVec4 col = mine       ? kFocusText
                 : parallel ? ImVec4(0.75f, 0.2f, 0.1f, 1)
                 : vec      ? ImVec4(0.1f, 0.3f, 0.8f, 1)
                 : unrolled ? ImVec4(0.5f, 0.2f, 0.6f, 1)
                            : ImVec4(0.1f, 0.1f, 0.1f, 1);
    std::string label = std::to_string(r.line) + "  " + trimmed;
    if (!trimmed.empty() && trimmed.back() == '{') {
      if (!visible()) {
        open.push_back(false);
        continue;
      }
      ImGui::PushID(id++);
      ImGui::PushStyleColor(ImGuiCol_Text, col);
      bool o =
          ImGui::TreeNodeEx(label.c_str(), ImGuiTreeNodeFlags_DefaultOpen, "%s%s", label.c_str(),
                            parallel ? "   [parallel]"
                            : vec    ? "   [vectorized]"
                                     : "");
      ImGui::PopStyleColor();
      ImGui::PopID();
      open.push_back(o);
    } else if (visible()) {
      ImGui::PushID(id++);
      ImGui::PushStyleColor(ImGuiCol_Text, col);
      if (ImGui::Selectable(label.c_str(), mine) && !r.nodes.empty())
        focus = nextFocus(r, focus);
      ImGui::PopStyleColor();
      if (!r.nodes.empty() && ImGui::IsItemHovered()) {
        std::string names;
        for (const std::string &n : r.nodes)
          names += (names.empty() ? "" : ", ") + n;
        ImGui::SetTooltip("computes %s", names.c_str());
      }
      ImGui::PopID();
    }
  }
  while (!open.empty()) {
    bool wasOpen = open.back();
    open.pop_back();
    if (wasOpen && visible())
      ImGui::TreePop();
  }
}

// Commented assembly, the focused node's instructions highlighted; clicking an instruction
// focuses its node. Only the rows in view are drawn (a kernel has thousands).
void assemblyView(const std::vector<CodeRow> &rows, std::string &focus) {
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(rows.size()));
  while (clipper.Step())
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const CodeRow &r = rows[static_cast<size_t>(i)];
      bool mine = rowOf(r, focus);
      ImGui::PushID(i);
      ImGui::PushStyleColor(ImGuiCol_Text, r.comment ? ImVec4(0.35f, 0.45f, 0.35f, 1)
                                           : mine    ? kFocusText
                                                     : ImVec4(0.1f, 0.1f, 0.1f, 1));
      if (ImGui::Selectable(r.text.c_str(), mine) && !r.nodes.empty())
        focus = nextFocus(r, focus);
      ImGui::PopStyleColor();
      ImGui::PopID();
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
  // The functions' times in this step's last :profile: the list shows them, and the panel
  // opens on the hottest function (else the first).
  size_t at = currentStepIndex(s);
  const auto &steps = s.viewer.engine().history();
  std::map<std::string, double> millis;
  if (at < steps.size())
    millis = functionMillis(*g, steps[at].profile);
  if (s.loops.function.empty() || !module->functions.count(s.loops.function)) {
    std::string hottest = at < steps.size() ? hottestFunction(*g, steps[at].profile) : "";
    s.loops.function =
        module->functions.count(hottest) ? hottest : module->functions.begin()->first;
  }
  const float listWidth = millis.empty() ? 260 : 330;
  ImGui::BeginChild("functions", ImVec2(listWidth, 0), true);
  // Names that do not fit keep both ends (the numbered suffix tells kernels apart); the whole
  // name is the tooltip. A profiled function's time is at the right.
  const float timeWidth = millis.empty() ? 0 : ImGui::CalcTextSize("00000.000 ms").x;
  const float room = ImGui::GetContentRegionAvail().x - timeWidth;
  for (const auto &[name, fn] : module->functions) {
    std::string shown = fitText(name, room);
    ImGui::PushID(name.c_str());
    if (ImGui::Selectable(shown.c_str(), name == s.loops.function))
      s.loops.function = name;
    if (ImGui::IsItemHovered() && shown != name)
      ImGui::SetTooltip("%s", name.c_str());
    if (auto t = millis.find(name); t != millis.end()) {
      char ms[32];
      std::snprintf(ms, sizeof ms, "%.3f ms", t->second);
      ImGui::SameLine(ImGui::GetContentRegionMax().x - ImGui::CalcTextSize(ms).x);
      ImGui::TextDisabled("%s", ms);
    }
    ImGui::PopID();
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("code", ImVec2(0, 0), false);
  bool compiled = module->compiled != nullptr;
  const std::vector<CodeRow> &loops =
      cachedRows(s, ":lower " + s.loops.function + " nodes", loopRows);
  // The function's nodes, in the order their stores come: what the focus can be.
  std::vector<std::string> nodes;
  for (const CodeRow &r : loops)
    for (const std::string &n : r.nodes)
      if (std::find(nodes.begin(), nodes.end(), n) == nodes.end())
        nodes.push_back(n);
  if (std::find(nodes.begin(), nodes.end(), s.loops.focus) == nodes.end())
    s.loops.focus.clear(); // a node of another function
  ImGui::SetNextItemWidth(320);
  if (ImGui::BeginCombo("node", s.loops.focus.empty() ? "(none)" : s.loops.focus.c_str())) {
    if (ImGui::Selectable("(none)", s.loops.focus.empty()))
      s.loops.focus.clear();
    for (const std::string &n : nodes)
      if (ImGui::Selectable(n.c_str(), n == s.loops.focus))
        s.loops.focus = n;
    ImGui::EndCombo();
  }
  // On a build step, the focused node is also paired in the timeline: the source graph's node
  // and its kernel in the deploy graph, lit in both canvases.
  size_t step = currentStepIndex(s);
  const auto &history = s.viewer.engine().history();
  bool builtStep = step > 0 && step < history.size() && !history[step - 1].graph.attr("module");
  int sourceNode = -1;
  if (builtStep && !s.loops.focus.empty())
    sourceNode = history[step - 1].graph.index().findByName(s.loops.focus);
  if (sourceNode >= 0 && s.loops.paired != s.loops.focus) {
    pairNodes(s, history[step - 1].graph, *g, step, sourceNode, false);
    s.timeline.step = static_cast<int>(step);
    s.loops.paired = s.loops.focus;
  }
  ImGui::SameLine();
  if (sourceNode >= 0) {
    if (ImGui::Button("Show in the timeline")) {
      s.panel = Panel::Timeline;
      s.selectPanel = true;
    }
    ImGui::SameLine();
  }
  ImGui::TextDisabled("its loop lines and instructions are highlighted; click a line to pick its "
                      "node");
  if (ImGui::BeginTabBar("codeTabs")) {
    if (ImGui::BeginTabItem("Loops")) {
      // Once compiled, the assembly beside the loops: one node lit in both.
      float width = ImGui::GetContentRegionAvail().x;
      ImGui::BeginChild("loops", ImVec2(compiled ? width * 0.55f : 0, 0), false,
                        ImGuiWindowFlags_HorizontalScrollbar);
      loopTree(loops, s.loops.focus);
      ImGui::EndChild();
      if (compiled) {
        ImGui::SameLine();
        ImGui::BeginChild("beside", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
        assemblyView(cachedRows(s, ":asm " + s.loops.function, assemblyRows), s.loops.focus);
        ImGui::EndChild();
      }
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("LLVM IR")) {
      ImGui::BeginChild("LLVM IR", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
      if (compiled)
        ImGui::TextUnformatted(cachedCommand(s, ":llvm " + s.loops.function).c_str());
      else
        ImGui::TextDisabled("Not compiled yet: :build makes the LLVM module.");
      ImGui::EndChild();
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Assembly")) {
      ImGui::BeginChild("Assembly", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
      if (compiled)
        assemblyView(cachedRows(s, ":asm " + s.loops.function, assemblyRows), s.loops.focus);
      else
        ImGui::TextDisabled("Not compiled yet: :build makes the machine code.");
      ImGui::EndChild();
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
}

} // namespace loupe::gui
