// TuningPanel: the build's tuning tasks — per task the best GFLOP/s against trials, the best
// point's knobs beside the rule's, and the best schedule's loops; the Tune buttons run :tune on
// the viewer's worker, and the curves grow from the log while it runs.
#include "gui/app/Panels.h"

#include "backend/BuiltLibrary.h"
#include "backend/DynamicBuild.h"
#include "backend/tune/Records.h"
#include "backend/tune/SizeRanges.h"
#include "core/FusedModule.h"
#include "core/Text.h"
#include "passes/Symbols.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

namespace loupe::gui {

namespace {

// How often the log is looked at for new records while :tune runs (seconds).
constexpr double kReadEvery = 0.5;

// Takes the tasks of the current snapshot when it changed; false when it has none to tune.
bool takeTasks(AppState &s) {
  TuningPanelState &t = s.tuning;
  const Step *cur = s.viewer.engine().current();
  const void *snapshot = cur ? cur->graph.index().nodes.data() : nullptr;
  if (snapshot == t.snapshot && snapshot)
    return !t.view.tasks.empty();
  t.snapshot = snapshot;
  t.view = {};
  t.loopsKey.clear();
  t.selected = 0;
  if (!cur)
    return false;
  const GraphAttr *m = cur->graph.attr("module");
  if (!m || !m->opaque || !std::static_pointer_cast<const FusedModule>(m->opaque)->compiled)
    return false;
  std::vector<backend::Task> tasks = backend::extractTasks(cur->graph);
  if (tasks.empty())
    return false;
  auto lib = backend::builtLibrary(cur->graph);
  t.target = backend::targetDescription(lib->lowered.at(tasks.front().name).schedule->cpu);
  t.view = tuningView(tasks, t.target, s.viewer.engine().tuningLogFile(t.target));
  t.selected = heaviestTask(t.view);
  // What each task's function was built at (a variant's may come from another size's tuning).
  t.built.clear();
  for (const backend::Task &k : tasks)
    t.built[k.name] = lib->lowered.at(k.name).schedule->configSource;
  return true;
}

// Reads the log again when it grew (a :tune of this or another process appended to it).
void refresh(TuningPanelState &t) {
  if (t.view.log.empty() || ImGui::GetTime() - t.lastRead < kReadEvery)
    return;
  t.lastRead = ImGui::GetTime();
  std::error_code ec;
  std::uintmax_t bytes = std::filesystem::file_size(t.view.log, ec);
  if (ec || bytes == t.view.logBytes)
    return;
  std::vector<backend::Task> tasks;
  for (const TaskTuning &k : t.view.tasks)
    tasks.push_back(k.task);
  t.view = tuningView(tasks, t.target, t.view.log);
}

// The task list: name, trials and gain; a click selects.
void taskList(TuningPanelState &t) {
  if (!ImGui::BeginTable("tasks", 3,
                         ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                             ImGuiTableFlags_BordersInnerV))
    return;
  ImGui::TableSetupColumn("task");
  ImGui::TableSetupColumn("trials", ImGuiTableColumnFlags_WidthFixed, 48);
  ImGui::TableSetupColumn("gain", ImGuiTableColumnFlags_WidthFixed, 52);
  ImGui::TableHeadersRow();
  for (size_t i = 0; i < t.view.tasks.size(); ++i) {
    const TaskTuning &k = t.view.tasks[i];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::PushID(static_cast<int>(i));
    if (ImGui::Selectable(k.task.name.c_str(), i == t.selected,
                          ImGuiSelectableFlags_SpanAllColumns))
      t.selected = i;
    ImGui::PopID();
    ImGui::TableNextColumn();
    ImGui::Text("%d", k.trials);
    ImGui::TableNextColumn();
    if (k.gain() > 0)
      ImGui::Text("%.2fx", k.gain());
    else
      ImGui::TextDisabled("-");
  }
  ImGui::EndTable();
}

// The best speed so far against trials, as a step line, with the rule's level dashed.
void curve(const TaskTuning &k, float height) {
  ImVec2 origin = ImGui::GetCursorScreenPos();
  float width = std::max(200.0f, ImGui::GetContentRegionAvail().x);
  ImGui::InvisibleButton("curve", ImVec2(width, height));
  ImDrawList *dl = ImGui::GetWindowDrawList();
  const float left = 56, bottom = 22, top = 8, right = 12;
  ImVec2 lo(origin.x + left, origin.y + height - bottom),
      hi(origin.x + width - right, origin.y + top);
  dl->AddRectFilled(ImVec2(lo.x, hi.y), ImVec2(hi.x, lo.y), IM_COL32(250, 250, 250, 255));
  dl->AddRect(ImVec2(lo.x, hi.y), ImVec2(hi.x, lo.y), IM_COL32(160, 160, 160, 255));
  // The axis spans the speeds seen (the first point, the rule, the best) with a margin, so
  // that a few percent of gain is visible.
  double maxY = std::max(k.speed(k.bestMs), k.speed(k.ruleMs));
  double minY = maxY;
  for (const auto &[trial, ms] : k.curve)
    if (ms > 0)
      minY = std::min(minY, k.speed(ms));
  if (k.ruleMs > 0)
    minY = std::min(minY, k.speed(k.ruleMs));
  double span = std::max(maxY - minY, maxY * 0.05);
  minY = std::max(0.0, minY - span * 0.25);
  maxY += span * 0.15;
  int maxX = k.curve.empty() ? 1 : std::max(1, k.curve.back().first);
  const ImU32 text = IM_COL32(60, 60, 60, 255);
  dl->AddText(ImVec2(origin.x + 2, hi.y - 2), text, fixed(maxY, maxY < 10 ? 2 : 0).c_str());
  dl->AddText(ImVec2(origin.x + 2, lo.y - 14), text, fixed(minY, maxY < 10 ? 2 : 0).c_str());
  dl->AddText(ImVec2(origin.x + 2, (lo.y + hi.y) / 2 - 7), text, k.speedUnit());
  dl->AddText(ImVec2(lo.x, lo.y + 4), text, "0");
  std::string trials = std::to_string(maxX) + " trials";
  dl->AddText(ImVec2(hi.x - ImGui::CalcTextSize(trials.c_str()).x, lo.y + 4), text, trials.c_str());
  if (maxY <= 0)
    return;
  auto at = [&](double x, double y) {
    return ImVec2(lo.x + static_cast<float>(x / maxX) * (hi.x - lo.x),
                  lo.y - static_cast<float>((y - minY) / (maxY - minY)) * (lo.y - hi.y));
  };
  if (k.ruleMs > 0) { // the rule's level, dashed
    float y = at(0, k.speed(k.ruleMs)).y;
    for (float x = lo.x; x < hi.x; x += 12)
      dl->AddLine(ImVec2(x, y), ImVec2(std::min(x + 6, hi.x), y), IM_COL32(120, 120, 120, 255));
    dl->AddText(ImVec2(lo.x + 4, y - 15), IM_COL32(110, 110, 110, 255), "the rule");
  }
  ImVec2 prev = at(0, minY);
  bool started = false;
  for (const auto &[trial, ms] : k.curve) {
    if (ms <= 0)
      continue;
    ImVec2 p = at(trial, k.speed(ms));
    if (started) {
      dl->AddLine(prev, ImVec2(p.x, prev.y), IM_COL32(30, 90, 200, 255), 2);
      dl->AddLine(ImVec2(p.x, prev.y), p, IM_COL32(30, 90, 200, 255), 2);
    }
    prev = p;
    started = true;
  }
  if (started)
    dl->AddLine(prev, ImVec2(hi.x, prev.y), IM_COL32(30, 90, 200, 255), 2);
}

// The knobs: the rule's value, the best point's (bold colour where they differ), what each does.
void knobTable(const TaskTuning &k) {
  if (!ImGui::BeginTable("knobs", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV))
    return;
  ImGui::TableSetupColumn("knob", ImGuiTableColumnFlags_WidthFixed, 190);
  ImGui::TableSetupColumn("rule", ImGuiTableColumnFlags_WidthFixed, 50);
  ImGui::TableSetupColumn("best", ImGuiTableColumnFlags_WidthFixed, 50);
  ImGui::TableSetupColumn("what it decides");
  ImGui::TableHeadersRow();
  for (const KnobRow &r : knobRows(k)) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.name.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%lld", static_cast<long long>(r.rule));
    ImGui::TableNextColumn();
    if (r.best != r.rule)
      ImGui::TextColored(ImVec4(0.75f, 0.2f, 0.1f, 1), "%lld", static_cast<long long>(r.best));
    else
      ImGui::Text("%lld", static_cast<long long>(r.best));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.doc.c_str());
  }
  ImGui::EndTable();
}

// On a dynamic build's variant: the sizes its function was tuned at, the point that wins at each
// (by letter: each distinct point once), and where this size's schedule came from.
void sizesTable(const TaskTuning &k, const std::string &built) {
  if (!built.empty())
    ImGui::TextWrapped("This size builds %s", built.c_str());
  if (k.sizes.empty())
    return;
  if (!ImGui::BeginTable("sizes", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV))
    return;
  ImGui::TableSetupColumn("tuned at", ImGuiTableColumnFlags_WidthFixed, 190);
  ImGui::TableSetupColumn("wins", ImGuiTableColumnFlags_WidthFixed, 50);
  ImGui::TableSetupColumn("point");
  ImGui::TableHeadersRow();
  backend::PointLetters letters; // as :tune … sizes letters them
  for (const backend::SizeWinner &w : k.sizes) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(bindingsText(w.sizes).c_str());
    ImGui::TableNextColumn();
    if (!w.choice.point) {
      ImGui::TextDisabled("rule");
      ImGui::TableNextColumn();
      ImGui::TextDisabled("its own rule");
      continue;
    }
    ImGui::TextUnformatted(letters.of(w).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(backend::configText(*w.choice.point).c_str());
  }
  ImGui::EndTable();
}

// The selected task's summary line, curve and knobs.
void taskDetail(const TaskTuning &k, float curveHeight) {
  ImGui::Text("%s  (%d call%s, %.1f MFLOP)", k.task.name.c_str(), k.task.calls,
              k.task.calls == 1 ? "" : "s", k.task.flops / 1e6);
  if (k.trials == 0 && !k.bestFrom.empty())
    ImGui::TextDisabled("Not measured at these sizes; its knobs are the point that won at %s.",
                        k.bestFrom.c_str());
  else if (k.trials == 0)
    ImGui::TextDisabled("No measurements in the log yet.");
  else
    ImGui::Text("%d trials (%d failed); best %.4f ms, %.1f %s%s", k.trials, k.failures, k.bestMs,
                k.speed(k.bestMs), k.speedUnit(),
                k.gain() > 0 ? (", " + fixed(k.gain(), 2) + "x the rule").c_str() : "");
  curve(k, curveHeight);
  knobTable(k);
}

// The task list beside the selected task's detail, and below it, with `loops`, the loops of its
// best point (lowered again only when the task or its best changes).
void tasksAndDetail(TuningPanelState &t, float curveHeight, bool loops) {
  t.selected = std::min(t.selected, t.view.tasks.size() - 1);
  ImGui::BeginChild("taskList", ImVec2(340, 0), true);
  taskList(t);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("task", ImVec2(0, 0), false);
  const TaskTuning &k = t.view.tasks[t.selected];
  taskDetail(k, curveHeight);
  if (!k.task.family.empty())
    sizesTable(k, t.built.count(k.task.name) ? t.built.at(k.task.name) : "");
  if (loops) {
    std::string key = k.task.key + " " + backend::configText(k.best);
    if (key != t.loopsKey) {
      t.loopsKey = key;
      t.loops = bestLoops(k);
    }
    ImGui::Text(k.best.empty() ? "Loops (the rule's):" : "Loops of the best point:");
    ImGui::BeginChild("bestLoops", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
    ImGui::TextUnformatted(t.loops.c_str());
    ImGui::EndChild();
  }
  ImGui::EndChild();
}

// A dynamic build's step (no kernels of its own until a size runs): the sizes to tune in turn,
// and a button that runs `:tune all … sizes …` on the worker. False for any other step.
bool dynamicSizes(AppState &s) {
  TuningPanelState &t = s.tuning;
  const Step *cur = s.viewer.engine().current();
  std::shared_ptr<const backend::DynamicBuild> dyn =
      cur ? backend::dynamicBuild(cur->graph) : nullptr;
  if (!dyn || backend::builtLibrary(cur->graph))
    return false;
  std::vector<std::string> symbols(dyn->symbols().begin(), dyn->symbols().end());
  if (!t.sizes[0]) { // a first sample to edit: two sizes of each symbol but a batch beside others
    std::string sample;
    for (const std::string &sym : symbols)
      sample += (sample.empty() ? "" : " ") + sym + "=" +
                (sym != "batch"       ? "64,256"
                 : symbols.size() > 1 ? "1"
                                      : "1,8");
    std::snprintf(t.sizes, sizeof t.sizes, "%s", sample.c_str());
  }
  ImGui::TextWrapped("A dynamic build (size symbols %s): each size is built when it runs. Tuning "
                     "samples sizes: each is tuned in turn, the time shared, then each size's best "
                     "is measured at the others, and a size never tuned builds its nearest tuned "
                     "size's points.",
                     joinNames(symbols).c_str());
  ImGui::SetNextItemWidth(320);
  ImGui::InputText("sizes", t.sizes, sizeof t.sizes);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(110);
  ImGui::InputInt("seconds", &t.seconds, 10, 60);
  t.seconds = std::clamp(t.seconds, 1, 86400);
  ImGui::SameLine();
  if (ImGui::Button("Tune sizes")) {
    t.running = true;
    std::string cmd = ":tune all time=" + std::to_string(t.seconds) + " sizes " + t.sizes;
    s.viewer.startWork([cmd](Viewer &v) { v.run(cmd); });
  }
  ImGui::TextDisabled("Then :run a size (the console) to see its tasks here.");
  return true;
}

} // namespace

void tuningPanel(AppState &s) {
  TuningPanelState &t = s.tuning;
  if (!currentGraph(s))
    return noGraph();
  if (!takeTasks(s)) {
    if (!dynamicSizes(s))
      ImGui::TextDisabled("Nothing to tune in this snapshot: :build opt_level=3 makes kernels "
                          "whose schedules have knobs.");
    return;
  }
  refresh(t);
  if (t.view.log.empty()) {
    ImGui::TextDisabled("Tuning is off: :set tuning on keeps measurements in the default log.");
  } else {
    ImGui::Text("log %s", t.view.log.string().c_str());
    ImGui::SetNextItemWidth(110);
    ImGui::InputInt("seconds", &t.seconds, 10, 60);
    t.seconds = std::clamp(t.seconds, 1, 86400);
    ImGui::SameLine();
    auto tune = [&](const std::string &what) {
      t.running = true;
      t.snapshot = nullptr; // taken again after :tune (the same build; new records)
      std::string cmd = ":tune " + what + " time=" + std::to_string(t.seconds);
      s.viewer.startWork([cmd](Viewer &v) { v.run(cmd); });
    };
    if (ImGui::Button("Tune all"))
      tune("all");
    ImGui::SameLine();
    if (ImGui::Button("Tune this task") && t.selected < t.view.tasks.size())
      tune(t.view.tasks[t.selected].task.name);
    for (const std::string &w : t.view.warnings)
      ImGui::TextColored(ImVec4(0.7f, 0.4f, 0, 1), "%s", w.c_str());
  }
  tasksAndDetail(t, 220, true);
}

void tuningLive(AppState &s, float w, float h) {
  TuningPanelState &t = s.tuning;
  if (t.view.tasks.empty())
    return;
  refresh(t);
  ImGui::SetNextWindowPos(ImVec2(w * 0.5f, h - 20), ImGuiCond_Always, ImVec2(0.5f, 1));
  ImGui::SetNextWindowSize(ImVec2(std::min(980.0f, w - 40), std::min(460.0f, h * 0.55f)));
  ImGui::Begin("Tuning", nullptr,
               ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                   ImGuiWindowFlags_NoSavedSettings);
  tasksAndDetail(t, 180, false); // no lowering while the engine is busy
  ImGui::End();
}

} // namespace loupe::gui
