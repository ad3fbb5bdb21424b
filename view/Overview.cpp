// Overview: the overview map of a graph canvas — the whole layout scaled into a corner of the
// canvas, the window the canvas shows drawn on it, and the pan a click on the map asks for.
#include "view/Overview.h"

#include <algorithm>

namespace loupe::gui {

Overview overviewOf(double layoutWidth, double layoutHeight, const CanvasWindow &w, double side,
                    double margin) {
  Overview o;
  if (layoutWidth <= 0 || layoutHeight <= 0 || w.width <= 0 || w.height <= 0 || w.zoom <= 0)
    return o;
  // The window in layout units.
  double left = -w.panX / w.zoom, top = -w.panY / w.zoom;
  double right = left + w.width / w.zoom, bottom = top + w.height / w.zoom;
  o.shown = left > 0 || top > 0 || right < layoutWidth || bottom < layoutHeight;
  side = std::min(side, std::min(w.width, w.height) / 4 * 3);
  o.scale = std::min(side / layoutWidth, side / layoutHeight);
  double mw = layoutWidth * o.scale, mh = layoutHeight * o.scale;
  o.map = {w.width - margin - mw, w.height - margin - mh, w.width - margin, w.height - margin};
  o.window = {std::clamp(o.mapX(left), o.map.x0, o.map.x1),
              std::clamp(o.mapY(top), o.map.y0, o.map.y1),
              std::clamp(o.mapX(right), o.map.x0, o.map.x1),
              std::clamp(o.mapY(bottom), o.map.y0, o.map.y1)};
  return o;
}

void centreOn(const Overview &o, double x, double y, CanvasWindow &w) {
  if (o.scale <= 0)
    return;
  double lx = (std::clamp(x, o.map.x0, o.map.x1) - o.map.x0) / o.scale;
  double ly = (std::clamp(y, o.map.y0, o.map.y1) - o.map.y0) / o.scale;
  w.panX = w.width / 2 - lx * w.zoom;
  w.panY = w.height / 2 - ly * w.zoom;
}

} // namespace loupe::gui
