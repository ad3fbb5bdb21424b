// Overview: the overview map of a graph canvas — the whole layout scaled into a corner of the
// canvas, the window the canvas shows drawn on it, and the pan a click on the map asks for.
#pragma once

namespace loupe::gui {

/// What a canvas shows of a layout: its size in pixels, and the zoom and pan that place layout
/// point (x, y) at canvas point (panX + x·zoom, panY + y·zoom).
struct CanvasWindow {
  double width = 0, height = 0;
  double zoom = 1, panX = 0, panY = 0;
};

/// An axis-aligned rectangle in canvas pixels.
struct Box {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool contains(double x, double y) const { return x >= x0 && x <= x1 && y >= y0 && y <= y1; }
};

/// The map of a layout of `layoutWidth` x `layoutHeight` in the canvas's bottom-right corner.
struct Overview {
  bool shown = false; ///< part of the layout is outside the canvas: the map is drawn
  double scale = 0;   ///< map pixels per layout unit
  Box map;            ///< where the map is, in canvas pixels
  Box window;         ///< the part of the layout the canvas shows, on the map (clipped to it)

  /// Canvas position on the map of layout point (x, y).
  double mapX(double x) const { return map.x0 + x * scale; }
  double mapY(double y) const { return map.y0 + y * scale; }
};

/// The overview of a layout seen through `w`: at most `side` pixels on its longer side (and a
/// quarter of the canvas), `margin` pixels from the canvas's bottom-right corner; shown only
/// when some of the layout is outside the window.
Overview overviewOf(double layoutWidth, double layoutHeight, const CanvasWindow &w,
                    double side = 180, double margin = 10);

/// The pan that centres the canvas on the layout point under map position (x, y) (clamped to
/// the map), keeping the zoom: what a click or a drag on the map does.
void centreOn(const Overview &o, double x, double y, CanvasWindow &w);

} // namespace loupe::gui
