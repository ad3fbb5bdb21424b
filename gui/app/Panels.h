// Panels: the panels of loupe-gui's window, one file each in gui/app/, and the helpers they
// share. Every panel reads the engine and the view models; every action that asks the compiler
// something runs a command through the viewer, so the console and `:record` see it.
#pragma once

#include "gui/app/AppState.h"
#include "gui/app/Canvas.h"

#include <cstddef>
#include <set>
#include <string>

namespace loupe::gui {

// One function per panel, each drawing into the current ImGui window.
void graphPanel(AppState &s);    ///< GraphPanel.cpp
void fusionPanel(AppState &s);   ///< FusionPanel.cpp
void timelinePanel(AppState &s); ///< TimelinePanel.cpp
void loopsPanel(AppState &s);    ///< LoopsPanel.cpp
void buffersPanel(AppState &s);  ///< BuffersPanel.cpp
void tuningPanel(AppState &s);   ///< TuningPanel.cpp
/// While :tune runs on the viewer's worker: the Tuning panel's curves and knobs in a window
/// under the progress, read from the log only (TuningPanel.cpp).
void tuningLive(AppState &s, float w, float h);
void inspector(AppState &s);  ///< Inspector.cpp
void console(AppState &s);    ///< Console.cpp
void toolbar(AppState &s);    ///< Toolbar.cpp
void openDialog(AppState &s); ///< Toolbar.cpp

// --- what the panels share (Panels.cpp) ---

/// Runs a read-only command once per snapshot and keeps its output (loops, IR, assembly, why).
const std::string &cachedCommand(AppState &s, const std::string &cmd);
/// The current snapshot's graph, or null before the first.
const Graph *currentGraph(AppState &s);
/// The index of the current history step.
size_t currentStepIndex(AppState &s);
/// `text` elided in the middle (view/Elide.h) to the most characters that fit `width` pixels in
/// the current font (which is proportional): long names keep both ends.
std::string fitText(const std::string &text, float width);
/// The line a panel shows when there is no graph yet.
void noGraph();
/// Node selection from a canvas click: a plain click selects; ctrl-click picks the second node
/// and asks the engine `:why` about the pair.
void handleClick(AppState &s, const Graph &g, int clicked, bool ctrl);
/// A node `nid` of the timeline's after (or before) canvas of history step `step`: what
/// corresponds to it on the other side, highlighted in both (TimelinePanel.cpp). After :build a
/// tvm_op maps to the source nodes it computes and a source node to its kernel; between other
/// steps nodes map by name.
void pairNodes(AppState &s, const Graph &before, const Graph &after, size_t step, int nid,
               bool inAfter);
/// drawCanvas with history step `step`'s graph and layout (Viewer::layoutSoon, with `centre`,
/// `radius`, `collapsed` and `fold` as there). While the layout is being made, a progress line
/// and the canvas's last picture, unstyled and not clickable (-1), so the window stays live.
int drawStep(AppState &s, const char *id, size_t step, CanvasView &cv, ImVec2 size,
             const Styler &st, int selected, int second, bool *ctrl, int centre = -1,
             int radius = -1, const std::set<std::string> &collapsed = {},
             const ScopeFold &fold = {});
/// Enter in the graph panel's search box: selects the first node found (by name, op or scope),
/// which brings it into view, and unfolds the scopes that hide it (GraphPanel.cpp).
void searchAndGo(AppState &s, const Graph &g);
/// The canvas buttons of the graph and fusion panels: Fit, and folding inputs into ops.
void canvasButtons(AppState &s, CanvasView &cv);

} // namespace loupe::gui
