// Canvas: a laid-out graph drawn with Dear ImGui's draw lists — pan, zoom, the overview map,
// fusion regions, change outlines, time colours — and the colours the panels share.
#pragma once

#include "gui/app/AppState.h"
#include "view/GraphLayout.h"
#include "view/Palette.h"
#include "view/Scopes.h"
#include "view/StepDiff.h"

#include <imgui.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace loupe::gui {

/// An ImGui colour from a view model's 0xRRGGBBAA colour, with `alpha`.
ImU32 rgba(uint32_t c, uint8_t alpha = 255);

/// An ImGui colour from a palette colour (0xRRGGBBAA), at compile time.
constexpr ImU32 imColour(uint32_t c) {
  return IM_COL32((c >> 24) & 0xff, (c >> 16) & 0xff, (c >> 8) & 0xff, c & 0xff);
}

// The panels' colours (view/Palette.h).
inline constexpr ImU32 kOpFill = imColour(kOpFillColour);
inline constexpr ImU32 kScopeFill = imColour(kScopeFillColour);
inline constexpr ImU32 kInputFill = imColour(kInputFillColour);
inline constexpr ImU32 kParamFill = imColour(kParamFillColour);
inline constexpr ImU32 kText = imColour(kTextColour);
inline constexpr ImU32 kEdge = imColour(kEdgeColour);
inline constexpr ImU32 kSelected = imColour(kSelectedColour);
inline constexpr ImU32 kAdded = imColour(kAddedColour);
inline constexpr ImU32 kOutline = imColour(kOutlineColour);
inline constexpr ImU32 kChangedCol = imColour(kChangedColour);
inline constexpr ImU32 kRemoved = imColour(kRemovedColour);

/// How one canvas colours its nodes.
struct Styler {
  const std::vector<GroupView> *groups = nullptr; ///< fusion colours and regions
  const StepDiff *diff = nullptr;                 ///< change outlines
  bool removedSide = false;                       ///< the "before" side of a diff
  std::vector<uint32_t> highlighted;              ///< search hits
  std::set<int> marked;                           ///< groups drawn as differing (compare)
  std::vector<double> timeShare;                  ///< per node, after :profile (else empty)
  std::vector<double> sqnr; ///< per node in dB after :layerwise (NaN: not compared), else empty
  std::vector<ScopeOutline> scopes; ///< unfolded scopes, outermost first
  double maxShare = 0;              ///< the largest of them
};

/// A node box as drawn on screen: its name and rectangle in window pixels (clipped to its canvas).
struct DrawnBox {
  std::string name;
  float x0, y0, x1, y1;
};

/// The node boxes the canvases drew since the last clear, recorded only while recording is on (a
/// screenshot's boxes file: where a check finds a named node in the picture).
std::vector<DrawnBox> &drawnBoxes();
/// Turns the recording of drawnBoxes on or off.
void recordDrawnBoxes(bool on);

/// Draws a laid-out graph in a canvas of `size` and handles pan, zoom and node clicks. Returns
/// the node id clicked this frame (-1 for none); `ctrl` tells whether ctrl was held.
int drawCanvas(const char *id, const Graph &g, const GraphLayout &l, CanvasView &cv, ImVec2 size,
               const Styler &st, int selected, int second, bool *ctrl);

} // namespace loupe::gui
