// loupe-gui: the viewer window (Dear ImGui + GLFW + OpenGL 3), or with --screenshot a headless
// render of one panel to a PNG for tests and the README.
#include "gui/app/Panels.h"
#include "gui/app/Screenshot.h"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace loupe;

namespace {

const char *kUsage =
    R"(usage: loupe-gui [FILE]                      open a session, script, graph JSON or ONNX model
       loupe-gui --script FILE [--step N] [--panel graph|timeline|fusion|loops|buffers]
                 [--select NODE] [--size WxH] [--screenshot OUT.png]
  --script FILE      a session or script to step through (all of it runs unless --step N)
  --step N           run only the first N inputs of the script
  --panel P          the panel to show
  --select NODE      select a node (the inspector shows it)
  --screenshot OUT   render a few frames, save the window as PNG and exit
)";

int usageError(const std::string &msg) {
  std::fprintf(stderr, "loupe-gui: %s\n%s", msg.c_str(), kUsage);
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  std::string script, screenshot, panelName = "graph", select;
  long step = -1;
  int width = 1600, height = 1000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        return "";
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--script") {
      script = value();
    } else if (a == "--step") {
      std::string v = value();
      char *end = nullptr;
      step = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || step < 0)
        return usageError("--step takes a number of inputs, got '" + v + "'");
    } else if (a == "--panel") {
      panelName = value();
    } else if (a == "--select") {
      select = value();
    } else if (a == "--size") {
      std::string v = value();
      if (std::sscanf(v.c_str(), "%dx%d", &width, &height) != 2 || width < 200 || height < 200 ||
          width > 8000 || height > 8000)
        return usageError("--size takes WxH such as 1600x1000, got '" + v + "'");
    } else if (a == "--screenshot") {
      screenshot = value();
      if (screenshot.empty())
        return usageError("--screenshot needs a file name");
    } else if (!a.empty() && a[0] == '-') {
      return usageError("unknown option " + a);
    } else if (script.empty()) {
      script = a;
    } else {
      return usageError("one file at a time, got '" + script + "' and '" + a + "'");
    }
  }
  gui::AppState s;
  if (!gui::parsePanel(panelName, s.panel))
    return usageError("unknown panel '" + panelName +
                      "'; panels: graph, timeline, fusion, loops, buffers");
  if (!script.empty()) {
    std::string err = s.viewer.open(script);
    if (!err.empty()) {
      std::fprintf(stderr, "loupe-gui: %s\n", err.c_str());
      return 1;
    }
    s.viewer.runTo(step < 0 ? s.viewer.script().size() : static_cast<size_t>(step));
  }
  if (!select.empty()) {
    const Step *cur = s.viewer.engine().current();
    int nid = cur ? cur->graph.index().findByName(select) : -1;
    if (nid < 0) {
      std::fprintf(stderr, "loupe-gui: no node '%s' in the current graph\n", select.c_str());
      return 1;
    }
    s.selectedNode = nid;
  }

  if (!glfwInit()) {
    std::fprintf(stderr, "loupe-gui: cannot open a window (no display? try xvfb-run)\n");
    return 1;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  GLFWwindow *window = glfwCreateWindow(width, height, "Loupe", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "loupe-gui: cannot create an OpenGL 3.3 window\n");
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(screenshot.empty() ? 1 : 0);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO &io = ImGui::GetIO();
  io.IniFilename = nullptr; // the layout is fixed; nothing to remember between runs
  ImGui::StyleColorsLight();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330");
  // DejaVu Sans Mono when installed: the engine prints "…", "→" and "×", which ImGui's built-in
  // font lacks. Layouts are sized for whichever font is used.
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

  int frames = 0, status = 0;
  while (!glfwWindowShouldClose(window)) {
    glfwPollEvents();
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    int fw = 0, fh = 0;
    glfwGetFramebufferSize(window, &fw, &fh);
    gui::drawFrame(s, static_cast<float>(fw), static_cast<float>(fh));
    ImGui::Render();
    glViewport(0, 0, fw, fh);
    glClearColor(0.94f, 0.94f, 0.94f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    // Screenshots: a few frames first, so that windows and fitted canvases have settled.
    if (!screenshot.empty() && ++frames == 4) {
      std::string err = gui::writeScreenshot(screenshot, fw, fh);
      if (!err.empty()) {
        std::fprintf(stderr, "loupe-gui: %s\n", err.c_str());
        status = 1;
      }
      break;
    }
    glfwSwapBuffers(window);
  }
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return status;
}
