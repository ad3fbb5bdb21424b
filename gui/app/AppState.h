// AppState: what loupe-gui's window shows and remembers between frames — the viewer over the
// engine, the open panel, the selection, and each panel's own state.
#pragma once

#include "view/CodeLines.h"
#include "view/TuningView.h"
#include "view/Viewer.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace loupe::gui {

/// The panels of the main area (the `--panel` names).
enum class Panel { Graph, Timeline, Fusion, Loops, Buffers, Tuning };

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
  /// The last layout drawn and its graph: drawn again, plainly, while the next is being made.
  const GraphLayout *shown = nullptr;
  Graph shownGraph;
  /// The screen position of layout point (x, y) as last drawn.
  double screenX(double x) const { return originX + panX + x * zoom; }
  double screenY(double y) const { return originY + panY + y * zoom; }
};

/// The node selection every panel shares: the graph and fusion canvases set it, the inspector
/// shows it.
struct Selection {
  int node = -1;   ///< node id in the current snapshot
  int second = -1; ///< with ctrl-click: the other node of `:why`
  std::string why; ///< the last `:why` answer
};

/// The graph panel: search, neighbourhood view, and the kernels by time after :profile.
struct GraphPanelState {
  CanvasView canvas;
  char search[128] = "";
  bool neighbourhoodOnly = false;
  int radius = 2;
  bool kernelBars = true; ///< after :profile, the kernels listed by time beside the graph
  /// Scopes folded into boxes (the depth slider; double-click unfolds a box, or folds back the
  /// scope of an op); a search hit is revealed.
  ScopeFold fold;
  /// The deepest scope of the snapshot `scoped` (the slider's range), found once per snapshot:
  /// it reads every node's name.
  Graph scoped;
  int deepestScope = 0;
  double barsX = 0, barsY = 0; ///< screen position of the first bar in the last frame
};

/// The fusion panel: its groups, some collapsed into one box each, and a partition compared.
struct FusionPanelState {
  CanvasView canvas;
  CanvasView compared; ///< the compared partition's canvas
  /// The history step the current partition is compared with (-1: none).
  int compareStep = -1;
  /// Roots (node names) of the groups drawn as one box each.
  std::set<std::string> collapsed;
};

/// The timeline: the history, and a step's graph before and after.
struct TimelineState {
  int step = -1; ///< chosen history step (-1: the current one)
  bool hideUnchanged = false;
  bool overlay = false;
  CanvasView before, after;
  /// A node clicked in the before or after canvas (of step `pairStep`), with what corresponds
  /// to it on the other side highlighted: a tvm_op's source nodes after :build, the kernel a
  /// source node runs in, else the node of the same name.
  int pairStep = -1, pairNode = -1;
  bool pairInAfter = false;
  std::vector<uint32_t> pairBefore, pairAfter; ///< the highlighted nodes of both sides
  std::string pairText;                        ///< what the pair is, in words
};

/// The loops panel: the fused function shown.
struct LoopsPanelState {
  std::string function;
  /// The selection the function last followed: a newly selected kernel node shows its function,
  /// while a function clicked in the list stays until the selection changes.
  int followed = -1;
  /// The graph node whose loop lines and instructions are highlighted (chosen from the
  /// function's nodes, or by clicking a line or instruction); empty for none.
  std::string focus;
  std::string paired; ///< the focus last paired in the timeline (source node and kernel)
  /// The rows of `:lower FUNC nodes` and `:asm FUNC` outputs, parsed once per snapshot (a
  /// kernel's assembly has thousands of lines; the panel is drawn every frame).
  std::map<std::string, std::vector<CodeRow>> rows;
  const void *rowsSnapshot = nullptr; ///< the snapshot `rows` belong to
};

/// The Tuning panel: the build's tasks and the log's measurements of them, refreshed as the log
/// grows (also while :tune runs on the viewer's worker, when the engine may not be read).
struct TuningPanelState {
  TuningView view;
  const void *snapshot = nullptr; ///< the built graph the tasks were taken from
  std::string target;             ///< their target description
  size_t selected = 0;            ///< the task shown
  int seconds = 60;               ///< the time the Tune buttons give :tune
  bool running = false;           ///< :tune is running on the worker
  double lastRead = 0;            ///< ImGui time the log was last looked at
  std::string loopsKey, loops;    ///< the best point's loops, and which task and point they are
  /// Where each task's built schedule came from (its configSource), by function name: on a
  /// dynamic build's variant, the point of the nearest size tuned.
  std::map<std::string, std::string> built;
  /// On a dynamic build's step: the sizes "Tune sizes" samples ("batch=1 seq=64,256").
  char sizes[256] = "";
};

/// The console: the line being typed and the lines typed before.
struct ConsoleState {
  char input[512] = "";
  std::vector<std::string> history;
  int historyPos = -1;
  bool scroll = true; ///< scroll to the end on the next frame
};

/// The Open dialog.
struct OpenDialogState {
  bool show = false; ///< open it on the next frame
  char path[512] = "";
  std::string error;
};

/// Outputs of read-only commands (loops, IR, assembly, :why) for the current snapshot.
struct CommandCache {
  std::map<std::string, std::string> outputs; ///< command -> its output
  const void *snapshot = nullptr;             ///< the snapshot they belong to
};

/// Everything the window shows and remembers between frames.
struct AppState {
  Viewer viewer;
  Panel panel = Panel::Graph;
  bool selectPanel = true; ///< make `panel` the open tab on the next frame

  Selection selection;
  GraphPanelState graph;
  FusionPanelState fusion;
  TimelineState timeline;
  LoopsPanelState loops;
  TuningPanelState tuning;
  ConsoleState console;
  OpenDialogState open;
  CommandCache commands;

  /// The main canvas of panel `p` (the graph's or the fusion view's); null for a panel without
  /// one.
  CanvasView *canvasOf(Panel p);
};

} // namespace loupe::gui
