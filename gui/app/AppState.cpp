// AppState: the panel names and each panel's canvas.
#include "gui/app/AppState.h"

#include <utility>

namespace loupe::gui {

bool parsePanel(const std::string &name, Panel &out) {
  static const std::pair<const char *, Panel> names[] = {
      {"graph", Panel::Graph}, {"timeline", Panel::Timeline}, {"fusion", Panel::Fusion},
      {"loops", Panel::Loops}, {"buffers", Panel::Buffers},   {"tuning", Panel::Tuning}};
  for (const auto &[n, p] : names)
    if (name == n) {
      out = p;
      return true;
    }
  return false;
}

CanvasView *AppState::canvasOf(Panel p) {
  switch (p) {
  case Panel::Graph:
    return &graph.canvas;
  case Panel::Fusion:
    return &fusion.canvas;
  default:
    return nullptr;
  }
}

} // namespace loupe::gui
