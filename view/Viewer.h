// Viewer: the viewer's state without any drawing — the engine, the console, a script stepped
// one input at a time (forward and back), and layouts cached per snapshot. loupe-gui draws it;
// the unit tests drive it directly.
#pragma once

#include "repl/Engine.h"
#include "repl/SessionFile.h"
#include "view/FusionView.h"
#include "view/GraphLayout.h"
#include "view/Scopes.h"
#include "view/StepDiff.h"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace loupe::gui {

class Viewer {
public:
  Viewer();
  ~Viewer();

  /// Runs one input as the console does: it is echoed with `loupe> ` and what `loupe` prints
  /// follows it. Returns false when the input failed.
  /// `output`, when given, receives what the input printed.
  bool run(const std::string &input, std::string *output = nullptr);

  /// Opens a file: a session or script (`.session`, or any text with `:` commands) becomes the
  /// script to step through (nothing runs yet); a graph JSON or ONNX model is loaded with
  /// `:load`. Returns an error message, or empty on success.
  std::string open(const std::string &path);

  /// The script's inputs and how many of them have run.
  const std::vector<ScriptInput> &script() const { return script_; }
  size_t scriptPos() const { return scriptPos_; }
  /// Goes forward one input: to the history step it made when it has run before, else runs it.
  /// False at the end.
  bool stepForward();
  /// Goes back one input by moving to the history step current after it (the snapshots are
  /// immutable: nothing runs again). Before the script's first graph step there is no snapshot
  /// to move to, and the first inputs are replayed in a fresh engine. False at the start.
  bool stepBack();
  /// Steps forward or back to `n` inputs.
  void runTo(size_t n);
  /// How many of the script's inputs have actually run in this engine (stepping back and
  /// forward within them runs nothing).
  size_t scriptRun() const { return ran_; }

  /// Runs `work` (calls of run, stepForward, runTo … on this viewer) on a worker thread, so a
  /// window keeps drawing through a long build. Until poll() says it is done, nothing else of
  /// the viewer may be used but busy(), progress() and interrupt(). Ignored while busy.
  void startWork(std::function<void(Viewer &)> work);
  /// Whether work started by startWork is still running.
  bool busy() const { return worker_.joinable(); }
  /// Joins finished work; true when it did (the frame then draws the new state).
  bool poll();
  /// The running work's status line and finished fraction (-1 unknown); the last one stays
  /// after the work ends.
  std::pair<std::string, double> progress() const;
  /// Asks the running work to stop at its next safe point (as Ctrl-C does in `loupe`).
  void interrupt();

  const Engine &engine() const { return *engine_; }
  /// The tuning mode of the engines it makes (Engine::setTuning); loupe-gui sets "on".
  void setTuning(const std::string &mode);
  /// Readies the engine now and each engine the viewer makes later (opening a script, stepping
  /// back past its first graph) with the front end's own commands: loupe-gui adds `:report`.
  void setPrepare(std::function<void(Engine &)> prepare);
  /// Everything the console printed so far.
  const std::string &console() const { return console_; }
  /// Adds text to the console without running anything (completion lists).
  void note(const std::string &text) { console_ += text; }

  /// The layout of history step `step`, or of its nodes within `radius` of `centre` when
  /// `radius` >= 0; computed once per snapshot and view. The fusion groups whose roots are
  /// named in `collapsed` are drawn as one box each (collapsedBoxes); without them, the scopes
  /// `fold` folds are (scopeBoxes).
  const GraphLayout &layout(size_t step, int centre = -1, int radius = -1,
                            const std::set<std::string> &collapsed = {},
                            const ScopeFold &fold = {});
  /// layout(), made on a layout thread so that the window stays live: the layout once it is
  /// made, null while it is being made. A layout that fails is an empty one, its error in the
  /// console. Several can be made at once (the timeline's two canvases); dot's, which is not
  /// re-entrant, one at a time.
  const GraphLayout *layoutSoon(size_t step, int centre = -1, int radius = -1,
                                const std::set<std::string> &collapsed = {},
                                const ScopeFold &fold = {});
  /// A frame starts: layouts being made that no canvas asked for in the frame before are
  /// cancelled (the user stepped on, or changed the view), so a newer request replaces an older.
  void newFrame();
  /// The nodes of the graphs being laid out, or laid out and not yet taken into the cache by a
  /// frame (so a frame that sees 0 draws every layout it asked for); 0 when there are none.
  size_t layingOut() const;
  /// Waits for the layouts being made (headless frames and tests: the next frame has them).
  void waitForLayout();

  /// The fusion groups of the current snapshot (empty when it has none), computed once per
  /// snapshot: the panels ask for them every frame.
  const std::vector<GroupView> &groups();
  /// The fusion groups of history step `step`, cached as groups() is.
  const std::vector<GroupView> &groupsAt(size_t step);

  /// The diff of history step `step` against the step before it (`step` >= 1), computed once
  /// per pair of snapshots.
  const StepDiff &diff(size_t step);

  /// The text metrics layouts are made with (the GUI sets its font's), and whether inputs and
  /// params that feed one op are folded into its box (on by default, as Netron draws them).
  LayoutOptions metrics;

private:
  struct CachedLayout {
    Graph graph; // keeps the snapshot (and so its index's address) alive
    GraphLayout layout;
  };
  std::unique_ptr<Engine> engine_;
  std::string tuning_ = "off";
  std::function<void(Engine &)> prepare_;
  std::string console_;
  std::vector<ScriptInput> script_;
  std::string scriptPath_;
  size_t scriptPos_ = 0;
  size_t ran_ = 0; ///< inputs run in this engine
  /// The engine's current step after each number of inputs run (cursorAt_[k]: after k
  /// inputs), or -1 while the history is empty.
  std::vector<long> cursorAt_ = {-1};
  /// Shows the step recorded for script position `pos` (the inputs there ran before).
  void showPosition(size_t pos);
  /// Records the engine's current step as that of the script position reached by running.
  void recordPosition();
  /// A new engine for the script, at its start.
  void freshEngine();
  using LayoutKey = std::tuple<const void *, int, int, bool, LayoutEngine, std::set<std::string>,
                               int, std::set<std::string>>;
  std::map<LayoutKey, CachedLayout> layouts_;
  LayoutKey layoutKey(size_t step, int centre, int radius, const std::set<std::string> &collapsed,
                      const ScopeFold &fold) const;
  /// What a layout is made from: the graph, the options and the nodes shown.
  struct LayoutRequest {
    Graph graph;
    LayoutOptions options;
    std::vector<uint32_t> only; ///< the neighbourhood shown, or empty for the whole graph
    bool part = false;
  };
  LayoutRequest layoutRequest(size_t step, int centre, int radius,
                              const std::set<std::string> &collapsed, const ScopeFold &fold) const;
  /// A layout being made on a thread of its own.
  struct LayoutJob {
    size_t nodes = 0;
    bool dot = false;
    bool asked = true; ///< asked for since the last newFrame
    std::atomic<bool> cancel{false}, done{false};
    GraphLayout result;
    Graph graph;
    std::string error;
    std::thread thread;
  };
  std::map<LayoutKey, std::unique_ptr<LayoutJob>> jobs_;
  /// Joins the jobs that are done (or all, waiting, with `wait`): what they made goes to the
  /// cache, unless cancelled.
  void collectJobs(bool wait);
  /// Cancels every job and waits for them to stop.
  void cancelJobs();
  struct CachedGroups {
    Graph graph; // keeps the snapshot alive, as CachedLayout does
    std::vector<GroupView> groups;
  };
  /// By structure and partition: snapshots of one structure share an index, and a graph
  /// partitioned again (other rules, `nofuse`) differs only in its group attributes.
  using GroupsKey =
      std::tuple<const void *, std::vector<int64_t>, std::vector<int64_t>, const void *>;
  std::map<GroupsKey, CachedGroups> groups_;
  const std::vector<GroupView> &groupsOf(const Graph &g);
  struct CachedDiff {
    Graph before, after;
    StepDiff diff;
  };
  std::map<std::pair<const void *, const void *>, CachedDiff> diffs_;
  // Work on a worker thread (startWork): its progress, written by the engine's callback.
  void watchProgress();
  std::thread worker_;
  std::atomic<bool> workDone_{false};
  mutable std::mutex progressMutex_;
  std::string progressText_;
  double progressFraction_ = -1;
};

} // namespace loupe::gui
