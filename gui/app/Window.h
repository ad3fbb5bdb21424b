// Window: the GLFW window, OpenGL 3 context and Dear ImGui setup shared by loupe-gui and the
// frame-time benchmark.
#pragma once

#include "gui/app/AppState.h"

#include <string>

struct GLFWwindow;

namespace loupe::gui {

/// Opens a width x height window with an OpenGL 3.3 context and ImGui on it (light style,
/// DejaVu Sans Mono when installed, layout metrics set on `s`). Returns null and sets `error`
/// when there is no display or no such context.
GLFWwindow *openWindow(int width, int height, bool vsync, AppState &s, std::string &error);

/// Draws one frame of `s` into the back buffer (not swapped).
void renderFrame(GLFWwindow *window, AppState &s);

/// Shuts ImGui down and closes the window.
void closeWindow(GLFWwindow *window);

} // namespace loupe::gui
