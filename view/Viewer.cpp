// Viewer: console, script stepping over history snapshots, and the per-snapshot layout cache.
#include "view/Viewer.h"

#include "core/Error.h"
#include "core/Interrupt.h"
#include "repl/TextFile.h"

#include <algorithm>
#include <sstream>

namespace loupe::gui {

Viewer::Viewer() : engine_(std::make_unique<Engine>()) {
  metrics.foldInputs = true;
  watchProgress();
}

Viewer::~Viewer() {
  cancelJobs();
  if (worker_.joinable()) {
    interrupt();
    worker_.join();
    clearInterrupt();
  }
}

void Viewer::watchProgress() {
  engine_->setProgress([this](const std::string &status, double fraction) {
    std::lock_guard<std::mutex> lock(progressMutex_);
    if (!status.empty()) // the end of a command keeps its last status on show
      progressText_ = status;
    progressFraction_ = fraction;
  });
}

void Viewer::startWork(std::function<void(Viewer &)> work) {
  if (busy())
    return;
  {
    std::lock_guard<std::mutex> lock(progressMutex_);
    progressText_ = "working …";
    progressFraction_ = -1;
  }
  workDone_ = false;
  worker_ = std::thread([this, work = std::move(work)] {
    work(*this);
    workDone_ = true;
  });
}

bool Viewer::poll() {
  if (!worker_.joinable() || !workDone_)
    return false;
  worker_.join();
  clearInterrupt(); // a stop request ends with the work it stopped
  return true;
}

std::pair<std::string, double> Viewer::progress() const {
  std::lock_guard<std::mutex> lock(progressMutex_);
  return {progressText_, progressFraction_};
}

void Viewer::interrupt() { requestInterrupt(); }

bool Viewer::run(const std::string &input, std::string *output) {
  std::ostringstream out;
  bool ok = engine_->execute(input, out, out);
  // A console input may have replaced the redo tail: later script inputs run anew.
  recordPosition();
  console_ += "loupe> " + input + "\n" + out.str();
  if (output)
    *output = out.str();
  return ok;
}

std::string Viewer::open(const std::string &path) {
  if (path.ends_with(".json") || path.ends_with(".onnx")) {
    std::string msg;
    if (run(":load " + path, &msg))
      return "";
    // The engine's one-line error, without its prefix.
    size_t at = msg.find("error: ");
    msg = at == std::string::npos ? msg : msg.substr(at + 7);
    while (!msg.empty() && msg.back() == '\n')
      msg.pop_back();
    return msg;
  }
  try {
    std::string text = readTextFile(path);
    std::vector<ScriptInput> inputs = scriptInputs(text, path);
    script_ = std::move(inputs);
    scriptPath_ = path;
    freshEngine();
    console_ += "# script " + path + " (" + std::to_string(script_.size()) + " inputs)\n";
    return "";
  } catch (const Error &e) {
    return e.what();
  }
}

bool Viewer::stepForward() {
  if (scriptPos_ >= script_.size())
    return false;
  if (scriptPos_ < ran_) {
    showPosition(scriptPos_ + 1);
    return true;
  }
  std::ostringstream out;
  const ScriptInput &in = script_[scriptPos_++];
  engine_->execute(in.text, out, out, in.line);
  console_ += "loupe> " + in.text + "\n" + out.str();
  recordPosition();
  return true;
}

void Viewer::recordPosition() {
  ran_ = scriptPos_;
  cursorAt_.resize(ran_ + 1);
  cursorAt_[ran_] = engine_->history().empty() ? -1 : static_cast<long>(engine_->cursor());
}

void Viewer::setTuning(const std::string &mode) {
  tuning_ = mode;
  engine_->setTuning(mode);
}

void Viewer::setPrepare(std::function<void(Engine &)> prepare) {
  prepare_ = std::move(prepare);
  if (prepare_)
    prepare_(*engine_);
}

void Viewer::freshEngine() {
  engine_ = std::make_unique<Engine>();
  if (prepare_)
    prepare_(*engine_);
  engine_->setTuning(tuning_);
  engine_->setSourceName(scriptPath_);
  watchProgress();
  scriptPos_ = ran_ = 0;
  cursorAt_ = {-1};
}

void Viewer::showPosition(size_t pos) {
  scriptPos_ = pos;
  long step = cursorAt_[pos];
  if (step >= 0)
    engine_->moveTo(static_cast<size_t>(step));
  console_ += "# at input " + std::to_string(pos) + " of " + scriptPath_ +
              (step >= 0 ? ": step " + std::to_string(step) + " (" +
                               engine_->history()[static_cast<size_t>(step)].label + ")"
                         : "") +
              "\n";
}

bool Viewer::stepBack() {
  if (scriptPos_ == 0)
    return false;
  if (cursorAt_[scriptPos_ - 1] >= 0) {
    showPosition(scriptPos_ - 1);
    return true;
  }
  // Before the first graph step: no snapshot holds that state, so it is made again.
  size_t n = scriptPos_ - 1;
  freshEngine();
  console_ += "# replaying " + std::to_string(n) + " inputs of " + scriptPath_ + "\n";
  while (scriptPos_ < n)
    stepForward();
  return true;
}

void Viewer::runTo(size_t n) {
  n = std::min(n, script_.size());
  while (scriptPos_ > n && stepBack()) {
  }
  while (scriptPos_ < n && stepForward()) {
  }
}

Viewer::LayoutKey Viewer::layoutKey(size_t step, int centre, int radius,
                                    const std::set<std::string> &collapsed,
                                    const ScopeFold &fold) const {
  const Graph &g = engine_->history().at(step).graph;
  bool scoped = collapsed.empty() && fold.depth > 0; // fusion groups and scopes do not mix
  return {static_cast<const void *>(&g.index()),
          radius < 0 ? -1 : centre,
          radius,
          metrics.foldInputs,
          metrics.engine,
          collapsed,
          scoped ? fold.depth : 0,
          scoped ? fold.unfolded : std::set<std::string>{}};
}

Viewer::LayoutRequest Viewer::layoutRequest(size_t step, int centre, int radius,
                                            const std::set<std::string> &collapsed,
                                            const ScopeFold &fold) const {
  const Graph &g = engine_->history().at(step).graph;
  LayoutRequest r{g, metrics, {}, radius >= 0 && centre >= 0};
  r.options.params = paramNames(g, engine_->modelParams());
  if (!collapsed.empty() && hasGroups(g))
    r.options.collapsed = collapsedBoxes(g, fusionGroups(g), collapsed);
  else if (collapsed.empty() && fold.depth > 0)
    r.options.collapsed = scopeBoxes(g, fold);
  if (r.part)
    r.only = neighbourhood(g, static_cast<uint32_t>(centre), radius);
  return r;
}

const GraphLayout &Viewer::layout(size_t step, int centre, int radius,
                                  const std::set<std::string> &collapsed, const ScopeFold &fold) {
  LayoutKey key = layoutKey(step, centre, radius, collapsed, fold);
  collectJobs(true); // also: Graphviz is not re-entrant, nothing else lays out meanwhile
  if (auto it = layouts_.find(key); it != layouts_.end())
    return it->second.layout;
  LayoutRequest r = layoutRequest(step, centre, radius, collapsed, fold);
  CachedLayout c{r.graph, layoutGraph(r.graph, r.options, r.part ? &r.only : nullptr)};
  return layouts_.emplace(key, std::move(c)).first->second.layout;
}

const GraphLayout *Viewer::layoutSoon(size_t step, int centre, int radius,
                                      const std::set<std::string> &collapsed,
                                      const ScopeFold &fold) {
  collectJobs(false);
  LayoutKey key = layoutKey(step, centre, radius, collapsed, fold);
  if (auto it = layouts_.find(key); it != layouts_.end())
    return &it->second.layout;
  if (auto it = jobs_.find(key); it != jobs_.end()) {
    it->second->asked = true;
    return nullptr; // still being made
  }
  bool dot = metrics.engine == LayoutEngine::Dot;
  if (dot && std::any_of(jobs_.begin(), jobs_.end(), [](const auto &j) { return j.second->dot; }))
    return nullptr; // after the dot layout being made: asked again next frame
  LayoutRequest r = layoutRequest(step, centre, radius, collapsed, fold);
  auto job = std::make_unique<LayoutJob>();
  LayoutJob &j = *job;
  j.nodes = r.part ? r.only.size() : r.graph.index().numNodes();
  j.dot = dot;
  j.graph = r.graph;
  j.thread = std::thread([&j, r = std::move(r)]() mutable {
    r.options.cancel = &j.cancel;
    try {
      j.result = layoutGraph(r.graph, r.options, r.part ? &r.only : nullptr);
    } catch (const LayoutCancelled &) {
    } catch (const std::exception &e) {
      j.error = e.what();
    }
    j.done = true;
  });
  jobs_.emplace(key, std::move(job));
  return nullptr;
}

void Viewer::newFrame() {
  for (auto &[key, job] : jobs_) {
    if (!job->asked && !job->done)
      job->cancel = true;
    job->asked = false;
  }
  collectJobs(false);
}

size_t Viewer::layingOut() const {
  size_t nodes = 0;
  for (const auto &[key, job] : jobs_) // done ones too, until a frame has taken their layouts
    nodes += job->nodes;
  return nodes;
}

void Viewer::waitForLayout() { collectJobs(true); }

void Viewer::collectJobs(bool wait) {
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    LayoutJob &j = *it->second;
    if (!wait && !j.done) {
      ++it;
      continue;
    }
    j.thread.join();
    if (!j.cancel) {
      if (!j.error.empty())
        console_ += "layout failed: " + j.error + "\n";
      layouts_.emplace(it->first, CachedLayout{j.graph, std::move(j.result)});
    }
    it = jobs_.erase(it);
  }
}

void Viewer::cancelJobs() {
  for (auto &[key, job] : jobs_)
    job->cancel = true;
  collectJobs(true);
}

const std::vector<GroupView> &Viewer::groups() {
  static const std::vector<GroupView> none;
  const Step *cur = engine_->current();
  if (!cur)
    return none;
  return groupsOf(cur->graph);
}

const std::vector<GroupView> &Viewer::groupsAt(size_t step) {
  return groupsOf(engine_->history().at(step).graph);
}

const std::vector<GroupView> &Viewer::groupsOf(const Graph &g) {
  const GraphAttr *root = g.attr("group_root"), *master = g.attr("group_master"),
                  *module = g.attr("module");
  GroupsKey key{&g.index(), root ? root->ints : std::vector<int64_t>{},
                master ? master->ints : std::vector<int64_t>{},
                module ? module->opaque.get() : nullptr};
  auto it = groups_.find(key);
  if (it == groups_.end())
    it = groups_
             .emplace(key,
                      CachedGroups{g, hasGroups(g) ? fusionGroups(g) : std::vector<GroupView>{}})
             .first;
  return it->second.groups;
}

const StepDiff &Viewer::diff(size_t step) {
  const Graph &a = engine_->history().at(step - 1).graph, &b = engine_->history().at(step).graph;
  auto key =
      std::make_pair(static_cast<const void *>(&a.index()), static_cast<const void *>(&b.index()));
  auto it = diffs_.find(key);
  if (it == diffs_.end())
    it = diffs_
             .emplace(key, CachedDiff{a, b,
                                      diffGraphs(a, b, "step " + std::to_string(step - 1),
                                                 "step " + std::to_string(step))})
             .first;
  return it->second.diff;
}

} // namespace loupe::gui
