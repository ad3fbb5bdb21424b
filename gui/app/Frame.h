// Frame: one frame of loupe-gui's window.
#pragma once

#include "gui/app/AppState.h"

namespace loupe::gui {

/// Draws one frame of the whole window (display size `w` x `h`).
void drawFrame(AppState &s, float w, float h);

} // namespace loupe::gui
