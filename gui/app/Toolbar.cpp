// Toolbar: the Open button and dialog, and stepping through a loaded script.
#include "gui/app/Panels.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace loupe::gui {

void toolbar(AppState &s) {
  if (ImGui::Button("Open..."))
    s.open.show = true;
  ImGui::SameLine();
  const auto &script = s.viewer.script();
  if (!script.empty()) {
    // Steps run on the viewer's worker thread: a build takes seconds and the window keeps
    // drawing (drawFrame shows its progress meanwhile).
    if (ImGui::Button("|<"))
      s.viewer.startWork([](Viewer &v) { v.runTo(0); });
    ImGui::SameLine();
    if (ImGui::Button("< back"))
      s.viewer.startWork([](Viewer &v) { v.stepBack(); });
    ImGui::SameLine();
    if (ImGui::Button("forward >"))
      s.viewer.startWork([](Viewer &v) { v.stepForward(); });
    ImGui::SameLine();
    if (ImGui::Button(">|"))
      s.viewer.startWork([n = script.size()](Viewer &v) { v.runTo(n); });
    ImGui::SameLine();
    size_t pos = s.viewer.scriptPos();
    std::string next = pos < script.size() ? script[pos].text : "(end)";
    next = next.substr(0, next.find('\n'));
    ImGui::Text("input %zu/%zu; next: %s", pos, script.size(), next.c_str());
    ImGui::SameLine();
  }
  if (const Step *cur = s.viewer.engine().current())
    ImGui::TextDisabled("| step %zu: %s", currentStepIndex(s), cur->label.c_str());
}

void openDialog(AppState &s) {
  if (s.open.show) {
    ImGui::OpenPopup("Open");
    s.open.show = false;
    if (!s.open.path[0]) {
      std::string cwd = std::filesystem::current_path().string() + "/";
      std::snprintf(s.open.path, sizeof s.open.path, "%s", cwd.c_str());
    }
  }
  ImGui::SetNextWindowSize(ImVec2(620, 420), ImGuiCond_Appearing);
  if (!ImGui::BeginPopupModal("Open"))
    return;
  ImGui::TextUnformatted("A session (.session), a script, a graph JSON or an ONNX model:");
  ImGui::SetNextItemWidth(-1);
  ImGui::InputText("##path", s.open.path, sizeof s.open.path);
  std::filesystem::path p(s.open.path);
  std::filesystem::path dir = std::filesystem::is_directory(p) ? p : p.parent_path();
  ImGui::BeginChild("files", ImVec2(0, -ImGui::GetFrameHeightWithSpacing() * 2), true);
  std::error_code ec;
  if (ImGui::Selectable("../")) {
    std::snprintf(s.open.path, sizeof s.open.path, "%s/", dir.parent_path().string().c_str());
  }
  std::vector<std::filesystem::directory_entry> entries;
  for (const auto &e : std::filesystem::directory_iterator(dir, ec))
    entries.push_back(e);
  std::sort(entries.begin(), entries.end(),
            [](const auto &a, const auto &b) { return a.path() < b.path(); });
  for (const auto &e : entries) {
    std::string name = e.path().filename().string() + (e.is_directory() ? "/" : "");
    if (ImGui::Selectable(name.c_str()))
      std::snprintf(s.open.path, sizeof s.open.path, "%s%s", e.path().string().c_str(),
                    e.is_directory() ? "/" : "");
  }
  ImGui::EndChild();
  if (!s.open.error.empty())
    ImGui::TextColored(ImVec4(0.8f, 0.1f, 0.1f, 1), "%s", s.open.error.c_str());
  if (ImGui::Button("Open") && !std::filesystem::is_directory(p)) {
    s.open.error = s.viewer.open(s.open.path);
    if (s.open.error.empty()) {
      s.selection.node = s.selection.second = -1;
      ImGui::CloseCurrentPopup();
    }
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel"))
    ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}

} // namespace loupe::gui
