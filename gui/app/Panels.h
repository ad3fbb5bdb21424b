// Panels: loupe-gui's window contents — graph, timeline, fusion, loops and buffers panels, the
// node inspector and the console — drawn with Dear ImGui from the view models.
#pragma once

#include "gui/model/Viewer.h"

#include <map>
#include <set>
#include <string>

namespace loupe::gui {

/// The panels of the main area (the `--panel` names).
enum class Panel { Graph, Timeline, Fusion, Loops, Buffers };

/// Parses a `--panel` name; false for an unknown one.
bool parsePanel(const std::string &name, Panel &out);

/// Pan and zoom of one graph canvas.
struct CanvasView {
  double zoom = 1, panX = 0, panY = 0;
  bool fitPending = false;         ///< fit the whole graph on the next frame (the Fit button)
  const void *fitted = nullptr;    ///< the layout the view was last set up for
  int centred = -1;                ///< the selected node last brought into view
  double originX = 0, originY = 0; ///< screen position of the canvas in the last frame
  double width = 0, height = 0;    ///< its size in that frame
  bool doubleClicked = false;      ///< the node click of the last frame was a double click
  /// After a group is collapsed or expanded: the node whose box stays in view when the new
  /// layout is first drawn (instead of the first view of a new graph); -1 for none.
  int keepInView = -1;
  /// The screen position of layout point (x, y) as last drawn.
  double screenX(double x) const { return originX + panX + x * zoom; }
  double screenY(double y) const { return originY + panY + y * zoom; }
};

/// Everything the window shows and remembers between frames.
struct AppState {
  view::Viewer viewer;
  Panel panel = Panel::Graph;
  bool selectPanel = true; ///< make `panel` the open tab on the next frame

  int selectedNode = -1; ///< node id in the current snapshot
  int secondNode = -1;   ///< with ctrl-click: the other node of `:why`
  std::string whyText;   ///< the last `:why` answer
  char search[128] = "";
  bool neighbourhoodOnly = false;
  int radius = 2;

  int timelineStep = -1;       ///< chosen history step (-1: the current one)
  bool kernelBars = true;      ///< after :profile, the graph panel lists the kernels by time
  double barsX = 0, barsY = 0; ///< screen position of the first bar in the last frame
  bool hideUnchanged = false;
  bool overlay = false;
  /// A node clicked in the timeline's before or after canvas (of step `pairStep`), with what
  /// corresponds to it on the other side highlighted: a tvm_op's source nodes after :build, the
  /// kernel a source node runs in, else the node of the same name.
  int pairStep = -1, pairNode = -1;
  bool pairInAfter = false;
  std::vector<uint32_t> pairBefore, pairAfter; ///< the highlighted nodes of both sides
  std::string pairText;                        ///< what the pair is, in words

  std::string loopFunction;                        ///< chosen fused function
  std::map<std::string, std::string> commandCache; ///< command -> its output, per snapshot
  const void *cacheSnapshot = nullptr;

  char consoleInput[512] = "";
  std::vector<std::string> consoleHistory;
  int consoleHistoryPos = -1;
  bool scrollConsole = true;

  bool showOpen = false;
  char openPath[512] = "";
  std::string openError;

  std::map<Panel, CanvasView> canvases;
  /// The history step the fusion view compares the current partition with (-1: none).
  int compareStep = -1;
  /// Roots (node names) of the groups the fusion view draws as one box each.
  std::set<std::string> collapsed;
  CanvasView before, after;
  CanvasView compared; ///< the fusion view's compared partition
};

/// Draws one frame of the whole window (display size `w` x `h`).
void drawFrame(AppState &s, float w, float h);

} // namespace loupe::gui
