// Console: the engine's transcript and a line to type statements and commands into, with
// history (up, down) and Tab completion as the REPL does.
#include "gui/app/Panels.h"

#include <imgui.h>

#include <algorithm>
#include <string>
#include <vector>

namespace loupe::gui {

namespace {

int consoleCallback(ImGuiInputTextCallbackData *data) {
  auto &s = *static_cast<AppState *>(data->UserData);
  if (data->EventFlag == ImGuiInputTextFlags_CallbackHistory && !s.console.history.empty()) {
    int n = static_cast<int>(s.console.history.size());
    if (data->EventKey == ImGuiKey_UpArrow)
      s.console.historyPos =
          s.console.historyPos < 0 ? n - 1 : std::max(0, s.console.historyPos - 1);
    else if (data->EventKey == ImGuiKey_DownArrow && s.console.historyPos >= 0)
      s.console.historyPos = s.console.historyPos + 1 >= n ? -1 : s.console.historyPos + 1;
    data->DeleteChars(0, data->BufTextLen);
    if (s.console.historyPos >= 0)
      data->InsertChars(0, s.console.history[static_cast<size_t>(s.console.historyPos)].c_str());
  } else if (data->EventFlag == ImGuiInputTextFlags_CallbackCompletion) {
    std::string line(data->Buf, static_cast<size_t>(data->CursorPos));
    size_t start = line.find_last_of(" (,=");
    start = start == std::string::npos ? 0 : start + 1;
    std::string word = line.substr(start);
    std::vector<std::string> c = s.viewer.engine().completions(line, word);
    if (c.size() == 1) {
      data->DeleteChars(static_cast<int>(start), static_cast<int>(word.size()));
      data->InsertChars(static_cast<int>(start), (c[0] + " ").c_str());
    } else if (c.size() > 1) {
      std::string all;
      for (const std::string &x : c)
        all += x + "  ";
      s.viewer.note(all + "\n"); // the choices, as the REPL lists them on a double Tab
      s.console.scroll = true;
    }
  }
  return 0;
}

} // namespace

void console(AppState &s) {
  float inputH = ImGui::GetFrameHeightWithSpacing();
  ImGui::BeginChild("consoleText", ImVec2(0, -inputH), true, ImGuiWindowFlags_HorizontalScrollbar);
  ImGui::TextUnformatted(s.viewer.console().c_str());
  if (s.console.scroll) {
    ImGui::SetScrollHereY(1.0f);
    s.console.scroll = false;
  }
  ImGui::EndChild();
  ImGui::SetNextItemWidth(-1);
  ImGuiInputTextFlags flags = ImGuiInputTextFlags_EnterReturnsTrue |
                              ImGuiInputTextFlags_CallbackHistory |
                              ImGuiInputTextFlags_CallbackCompletion;
  if (ImGui::InputTextWithHint("##console", "loupe> statement or :command (Tab completes)",
                               s.console.input, sizeof s.console.input, flags, consoleCallback,
                               &s)) {
    std::string in = s.console.input;
    if (!in.empty()) {
      s.viewer.startWork([in](Viewer &v) { v.run(in); });
      s.console.history.push_back(in);
      s.console.historyPos = -1;
      s.console.scroll = true;
      s.timeline.step = -1;
    }
    s.console.input[0] = 0;
    ImGui::SetKeyboardFocusHere(-1);
  }
}

} // namespace loupe::gui
