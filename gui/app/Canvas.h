// Canvas: a laid-out graph drawn with Dear ImGui's draw lists — pan, zoom, the overview map,
// fusion regions, change outlines, time colours — and the colours the panels share.
#pragma once

#include "gui/app/AppState.h"
#include "gui/model/GraphLayout.h"
#include "gui/model/StepDiff.h"

#include <imgui.h>

#include <cstdint>
#include <set>
#include <vector>

namespace loupe::gui {

/// An ImGui colour from a view model's 0xRRGGBBAA colour, with `alpha`.
ImU32 rgba(uint32_t c, uint8_t alpha = 255);

// The panels' colours.
inline const ImU32 kOpFill = IM_COL32(221, 230, 240, 255);
inline const ImU32 kInputFill = IM_COL32(200, 230, 201, 255);
inline const ImU32 kParamFill = IM_COL32(245, 230, 200, 255);
inline const ImU32 kText = IM_COL32(20, 20, 20, 255);
inline const ImU32 kEdge = IM_COL32(110, 110, 120, 255);
inline const ImU32 kSelected = IM_COL32(230, 40, 40, 255);
inline const ImU32 kAdded = IM_COL32(30, 160, 60, 255);
inline const ImU32 kOutline = IM_COL32(60, 60, 70, 255);
inline const ImU32 kChangedCol = IM_COL32(240, 150, 0, 255);
inline const ImU32 kRemoved = IM_COL32(210, 30, 30, 255);

/// How one canvas colours its nodes.
struct Styler {
  const std::vector<GroupView> *groups = nullptr; ///< fusion colours and regions
  const StepDiff *diff = nullptr;                 ///< change outlines
  bool removedSide = false;                       ///< the "before" side of a diff
  std::vector<uint32_t> highlighted;              ///< search hits
  std::set<int> marked;                           ///< groups drawn as differing (compare)
  std::vector<double> timeShare;                  ///< per node, after :profile (else empty)
  double maxShare = 0;                            ///< the largest of them
};

/// Draws a laid-out graph in a canvas of `size` and handles pan, zoom and node clicks. Returns
/// the node id clicked this frame (-1 for none); `ctrl` tells whether ctrl was held.
int drawCanvas(const char *id, const Graph &g, const GraphLayout &l, CanvasView &cv, ImVec2 size,
               const Styler &st, int selected, int second, bool *ctrl);

} // namespace loupe::gui
