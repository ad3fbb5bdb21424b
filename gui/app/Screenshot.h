// Screenshot: the window's framebuffer as a PNG file (for --screenshot and the README images).
#pragma once

#include <string>

namespace loupe::gui {

/// Reads the current framebuffer (width x height, bottom-up as OpenGL gives it) and writes it
/// top-down as an RGBA PNG. Returns an error message, or empty on success.
std::string writeScreenshot(const std::string &path, int width, int height);

} // namespace loupe::gui
