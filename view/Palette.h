// Palette: the viewer's colours (0xRRGGBBAA), one place for the ImGui canvas and the SVG pictures.
#pragma once

#include <cstdint>

namespace loupe::gui {

inline constexpr uint32_t kOpFillColour = 0xdde6f0ff;       ///< an op's box
inline constexpr uint32_t kInputFillColour = 0xc8e6c9ff;    ///< a graph input's box
inline constexpr uint32_t kParamFillColour = 0xf5e6c8ff;    ///< a param's box
inline constexpr uint32_t kScopeFillColour = 0xe4dcf2ff;    ///< a folded scope's box
inline constexpr uint32_t kScopeOutlineColour = 0x8070a0ff; ///< an unfolded scope's outline
inline constexpr uint32_t kTextColour = 0x141414ff;
inline constexpr uint32_t kEdgeColour = 0x6e6e78ff;
inline constexpr uint32_t kOutlineColour = 0x3c3c46ff;
inline constexpr uint32_t kSelectedColour = 0xe62828ff; ///< the selection, and R/M badges
inline constexpr uint32_t kAddedColour = 0x1ea03cff;
inline constexpr uint32_t kChangedColour = 0xf09600ff;
inline constexpr uint32_t kRemovedColour = 0xd21e1eff;

} // namespace loupe::gui
