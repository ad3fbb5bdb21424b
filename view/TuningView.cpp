// TuningView: a build's tasks joined with the tuning log's records, for the Tuning panel.
#include "view/TuningView.h"

#include "backend/Runtime.h"
#include "core/Error.h"
#include "passes/Symbols.h"

#include <system_error>

namespace loupe::gui {

TuningView tuningView(const std::vector<backend::Task> &tasks, const std::string &target,
                      const std::filesystem::path &log) {
  TuningView v;
  v.log = log;
  for (const backend::Task &t : tasks) {
    TaskTuning k;
    k.task = t;
    v.tasks.push_back(std::move(k));
  }
  if (log.empty())
    return v;
  std::error_code ec;
  v.logBytes = std::filesystem::file_size(log, ec);
  if (ec)
    v.logBytes = 0;
  backend::TuningLog records;
  try {
    records = backend::TuningLog::read(log, &v.warnings);
  } catch (const Error &e) {
    v.warnings.push_back(e.what());
    return v;
  }
  for (const backend::TuningRecord &r : records.records) {
    if (r.target != target)
      continue;
    for (TaskTuning &t : v.tasks) {
      if (t.task.key != r.task)
        continue;
      ++t.trials;
      if (r.status != "ok") {
        ++t.failures;
      } else {
        if (r.config == t.task.rule && (t.ruleMs == 0 || r.ms < t.ruleMs))
          t.ruleMs = r.ms;
        if (t.bestMs == 0 || r.ms < t.bestMs) {
          t.bestMs = r.ms;
          t.best = r.config;
          t.bestLine = r.line;
        }
      }
      t.curve.push_back({t.trials, t.bestMs});
    }
  }
  for (TaskTuning &t : v.tasks) {
    if (t.task.family.empty())
      continue;
    t.sizes =
        backend::sizeWinners(records, log.string(), t.task.family, target, backend::numThreads());
    // A size never measured builds its nearest tuned size's point: its knobs and loops are those.
    if (t.trials > 0)
      continue;
    const backend::SizeWinner *near = backend::nearestSize(t.sizes, parseBindings(t.task.sizes));
    if (near && near->choice.point && t.task.space.contains(*near->choice.point)) {
      t.best = *near->choice.point;
      t.bestFrom = bindingsText(near->sizes);
    }
  }
  return v;
}

size_t heaviestTask(const TuningView &v) {
  size_t best = 0;
  for (size_t i = 1; i < v.tasks.size(); ++i)
    if (v.tasks[i].task.calls * v.tasks[i].task.flops >
        v.tasks[best].task.calls * v.tasks[best].task.flops)
      best = i;
  return best;
}

std::vector<KnobRow> knobRows(const TaskTuning &t) {
  std::vector<KnobRow> rows;
  for (const backend::Knob &k : t.task.space.knobs) {
    auto it = t.best.find(k.name);
    rows.push_back({k.name, k.rule, it == t.best.end() ? k.rule : it->second, k.doc});
  }
  return rows;
}

std::string bestLoops(const TaskTuning &t) {
  try {
    return backend::taskLoops(t.task, t.best);
  } catch (const Error &e) {
    return std::string("error: ") + e.what();
  }
}

} // namespace loupe::gui
