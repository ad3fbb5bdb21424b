// Frame: one frame of loupe-gui's window — the toolbar, the panels' tabs, the inspector and the
// console laid out; while the viewer's worker runs, only its progress.
#include "gui/app/Frame.h"

#include "gui/app/Panels.h"

#include <imgui.h>

#include <algorithm>

namespace loupe::gui {

namespace {

// While the viewer's worker runs an input, the engine must not be read: the frame shows only
// the work's progress and a button that stops it (Ctrl-C's interrupt).
void workingFrame(AppState &s, float w, float h) {
  auto [status, fraction] = s.viewer.progress();
  ImGui::SetNextWindowPos(ImVec2(w * 0.5f, h * 0.5f), ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(std::min(520.0f, w - 40), 0));
  ImGui::Begin("Working", nullptr,
               ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                   ImGuiWindowFlags_NoSavedSettings);
  ImGui::TextUnformatted(status.c_str());
  if (fraction >= 0)
    ImGui::ProgressBar(static_cast<float>(fraction), ImVec2(-1, 0));
  else // unknown: a bar that moves so the window visibly lives
    ImGui::ProgressBar(-1.0f * static_cast<float>(ImGui::GetTime()), ImVec2(-1, 0), "");
  if (ImGui::Button("Stop"))
    s.viewer.interrupt();
  ImGui::End();
  if (s.tuning.running) // the search so far, from the log it appends to
    tuningLive(s, w, h);
}

} // namespace

void drawFrame(AppState &s, float w, float h) {
  s.viewer.newFrame(); // layouts no canvas asked for last frame are dropped
  if (s.viewer.poll()) {
    s.console.scroll = true;
    s.tuning.running = false;
  }
  if (s.viewer.busy()) {
    workingFrame(s, w, h);
    return;
  }
  const float toolbarH = 36, consoleH = std::max(140.0f, h * 0.24f), inspectorW = 330;
  const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                 ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings;
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(w, toolbarH));
  ImGui::Begin("toolbar", nullptr, fixed | ImGuiWindowFlags_NoTitleBar);
  toolbar(s);
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(0, toolbarH));
  ImGui::SetNextWindowSize(ImVec2(w - inspectorW, h - toolbarH - consoleH));
  ImGui::Begin("main", nullptr, fixed | ImGuiWindowFlags_NoTitleBar);
  if (ImGui::BeginTabBar("panels")) {
    struct Tab {
      const char *name;
      Panel panel;
    };
    const Tab tabs[] = {{"Graph", Panel::Graph},     {"Timeline", Panel::Timeline},
                        {"Fusion", Panel::Fusion},   {"Loops", Panel::Loops},
                        {"Buffers", Panel::Buffers}, {"Tuning", Panel::Tuning}};
    for (const Tab &t : tabs) {
      ImGuiTabItemFlags f = s.selectPanel && s.panel == t.panel ? ImGuiTabItemFlags_SetSelected : 0;
      if (ImGui::BeginTabItem(t.name, nullptr, f)) {
        if (!s.selectPanel)
          s.panel = t.panel;
        switch (t.panel) {
        case Panel::Graph:
          graphPanel(s);
          break;
        case Panel::Fusion:
          fusionPanel(s);
          break;
        case Panel::Timeline:
          timelinePanel(s);
          break;
        case Panel::Loops:
          loopsPanel(s);
          break;
        case Panel::Buffers:
          buffersPanel(s);
          break;
        case Panel::Tuning:
          tuningPanel(s);
          break;
        }
        ImGui::EndTabItem();
      }
    }
    s.selectPanel = false;
    ImGui::EndTabBar();
  }
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(w - inspectorW, toolbarH));
  ImGui::SetNextWindowSize(ImVec2(inspectorW, h - toolbarH - consoleH));
  ImGui::Begin("Inspector", nullptr, fixed);
  inspector(s);
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(0, h - consoleH));
  ImGui::SetNextWindowSize(ImVec2(w, consoleH));
  ImGui::Begin("Console", nullptr, fixed);
  console(s);
  ImGui::End();

  openDialog(s);
}

} // namespace loupe::gui
