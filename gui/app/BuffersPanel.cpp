// BuffersPanel: PlanMemory's storage as a chart — each slot a row, each entry a bar over the
// nodes it lives through.
#include "gui/app/Canvas.h"
#include "gui/app/Panels.h"

#include "core/Error.h"
#include "view/BufferChart.h"
#include "view/FusionView.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace loupe::gui {

namespace {

std::string bytesText(int64_t b) {
  char buf[32];
  if (b >= 1 << 20)
    std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(b) / (1 << 20));
  else if (b >= 1 << 10)
    std::snprintf(buf, sizeof buf, "%.1f KB", static_cast<double>(b) / (1 << 10));
  else
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}

} // namespace

void buffersPanel(AppState &s) {
  const Graph *g = currentGraph(s);
  if (!g)
    return noGraph();
  if (!g->attr("storage_id") || !g->attr("shape") || !g->attr("dtype")) {
    ImGui::TextDisabled("No storage plan in this snapshot: :build (or PlanMemory) makes one.");
    return;
  }
  BufferChart c;
  try {
    c = bufferChart(*g);
  } catch (const Error &e) {
    ImGui::TextColored(ImVec4(0.8f, 0.1f, 0.1f, 1), "%s", e.what());
    return;
  }
  ImGui::Text("planned %s in %zu slots; one buffer per entry would take %s (%.0f%%)",
              bytesText(c.planned).c_str(), c.rows.size(), bytesText(c.naive).c_str(),
              c.naive ? 100.0 * static_cast<double>(c.planned) / static_cast<double>(c.naive) : 0);
  ImGui::BeginChild("chart", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  ImDrawList *dl = ImGui::GetWindowDrawList();
  const float labelW = 170, rowH = 22;
  float width = std::max(300.0f, ImGui::GetContentRegionAvail().x - labelW - 10);
  float step = width / static_cast<float>(std::max<uint32_t>(1, c.steps));
  ImVec2 o = ImGui::GetCursorScreenPos();
  ImGuiIO &io = ImGui::GetIO();
  std::string tip;
  for (size_t r = 0; r < c.rows.size(); ++r) {
    const BufferRow &row = c.rows[r];
    float y = o.y + static_cast<float>(r) * rowH;
    std::string label = "storage " + std::to_string(row.storage) + "  " + bytesText(row.bytes);
    dl->AddText(ImVec2(o.x, y + 3), kText, label.c_str());
    dl->AddRectFilled(ImVec2(o.x + labelW, y + 1), ImVec2(o.x + labelW + width, y + rowH - 1),
                      IM_COL32(240, 240, 240, 255));
    for (size_t b = 0; b < row.bars.size(); ++b) {
      const BufferBar &bar = row.bars[b];
      ImVec2 a(o.x + labelW + step * static_cast<float>(bar.first), y + 3);
      ImVec2 z(o.x + labelW + step * static_cast<float>(bar.last + 1), y + rowH - 3);
      dl->AddRectFilled(a, z, rgba(groupColour(static_cast<int>(r + b))), 3.0f);
      if (z.x - a.x > 40) { // the name, elided in the middle to the bar (the tooltip has it all)
        std::string shown = fitText(bar.name, z.x - a.x - 6);
        dl->PushClipRect(a, z, true);
        dl->AddText(ImVec2(a.x + 3, a.y + 1), kText, shown.c_str());
        dl->PopClipRect();
      }
      if (io.MousePos.x >= a.x && io.MousePos.x <= z.x && io.MousePos.y >= a.y &&
          io.MousePos.y <= z.y)
        tip = bar.name + ": " + bytesText(bar.bytes) + ", nodes " + std::to_string(bar.first) +
              "-" + std::to_string(bar.last);
    }
  }
  ImGui::Dummy(ImVec2(labelW + width, rowH * static_cast<float>(c.rows.size()) + 4));
  ImGui::TextDisabled("x: node id (execution order, %u nodes); one bar per entry from the node "
                      "that makes it to the last node that reads it",
                      c.steps);
  ImGui::EndChild();
  if (!tip.empty())
    ImGui::SetTooltip("%s", tip.c_str());
}

} // namespace loupe::gui
