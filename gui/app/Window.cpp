// Window: GLFW + ImGui's GLFW and OpenGL 3 backends (compiled into Debian's libimgui).
#include "gui/app/Window.h"

#include "gui/app/Frame.h"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <cstdio>

namespace loupe::gui {

GLFWwindow *openWindow(int width, int height, bool vsync, AppState &s, std::string &error) {
  if (!glfwInit()) {
    error = "cannot open a window (no display? try xvfb-run)";
    return nullptr;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  GLFWwindow *window = glfwCreateWindow(width, height, "Loupe", nullptr, nullptr);
  if (!window) {
    error = "cannot create an OpenGL 3.3 window";
    glfwTerminate();
    return nullptr;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(vsync ? 1 : 0);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO &io = ImGui::GetIO();
  io.IniFilename = nullptr; // the layout is fixed; nothing to remember between runs
  ImGui::StyleColorsLight();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330");
  // DejaVu Sans Mono when installed: the engine prints "…", "→" and "×", which ImGui's
  // built-in font lacks. Layouts are sized for whichever font is used.
  const char *fontPath = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";
  if (FILE *f = std::fopen(fontPath, "rb")) {
    std::fclose(f);
    static const ImWchar ranges[] = {0x0020, 0x00FF, 0x2000, 0x206F, 0x2190, 0x21FF,
                                     0x2200, 0x22FF, 0x25A0, 0x25FF, 0};
    io.Fonts->AddFontFromFileTTF(fontPath, 14.0f, nullptr, ranges);
  }
  ImFont *font = io.Fonts->Fonts.empty() ? io.Fonts->AddFontDefault() : io.Fonts->Fonts[0];
  io.Fonts->Build();
  s.viewer.metrics.charWidth = font->CalcTextSizeA(font->FontSize, 1e9f, 0, "M").x;
  s.viewer.metrics.lineHeight = font->FontSize + 1;
  return window;
}

void renderFrame(GLFWwindow *window, AppState &s) {
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
  int fw = 0, fh = 0;
  glfwGetFramebufferSize(window, &fw, &fh);
  drawFrame(s, static_cast<float>(fw), static_cast<float>(fh));
  ImGui::Render();
  glViewport(0, 0, fw, fh);
  glClearColor(0.94f, 0.94f, 0.94f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void closeWindow(GLFWwindow *window) {
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
}

} // namespace loupe::gui
