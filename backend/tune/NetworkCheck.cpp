// NetworkCheck: the tuned and the rule's build of one network run in turns (see NetworkCheck.h).
#include "backend/tune/NetworkCheck.h"

#include "backend/GraphExecutor.h"
#include "backend/Runtime.h"
#include "backend/schedule/Schedule.h"
#include "backend/tune/Records.h"
#include "backend/tune/Task.h"
#include "core/Error.h"
#include "core/Interrupt.h"

#include <algorithm>

namespace loupe::backend {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// One build's runtime and, per function, its time per run (all its calls) for each run.
struct Timed {
  explicit Timed(const Graph &g) : rt(g) {}
  GraphRuntime rt;
  std::map<std::string, std::vector<double>> perRun;
  std::map<std::string, int> calls;

  void run() {
    std::map<std::string, double> sum;
    std::map<std::string, int> n;
    for (const auto &[name, ms] : rt.run()) {
      sum[name] += ms;
      ++n[name];
    }
    for (const auto &[name, ms] : sum)
      perRun[name].push_back(ms);
    calls = n;
  }
};

} // namespace

NetworkCheck checkInNetwork(const Graph &deploy, const std::map<std::string, Tensor> &inputs,
                            const std::filesystem::path &tuning, std::shared_ptr<KernelCache> cache,
                            int runs, const std::filesystem::path &log) {
  BuildOptions o;
  o.cache = std::move(cache);
  Graph ruleGraph = recompile(deploy, o);
  o.tuning = tuning.string();
  Graph tunedGraph = recompile(deploy, o);
  NetworkCheck out;
  auto tunedLib = builtLibrary(tunedGraph);
  std::map<std::string, const LoweredFunction *> applied;
  for (const auto &[name, f] : tunedLib->lowered)
    if (f.schedule->config)
      applied[name] = &f;
  if (applied.empty() || runs < 1)
    return out;
  Timed rule(ruleGraph), tuned(tunedGraph);
  for (Timed *t : {&rule, &tuned}) {
    for (const auto &[name, value] : inputs)
      t->rt.setInput(name, value);
    t->rt.run(); // warm-up: first touches of memory and code
  }
  try {
    for (int k = 0; k < runs; ++k) {
      checkInterrupt();
      // Each run its own turn: the second build alternates too, so neither always runs after
      // the other's caches.
      Timed &first = k % 2 ? tuned : rule, &second = k % 2 ? rule : tuned;
      first.run();
      second.run();
      ++out.runs;
    }
  } catch (const Interrupted &) {
    if (out.runs == 0)
      throw;
    clearInterrupt();
  }
  // Each function's median time per run over the finished runs; a build's total is their sum.
  auto medians = [&](Timed &t, double &total) {
    std::map<std::string, double> m;
    for (auto &[name, v] : t.perRun) {
      v.resize(static_cast<size_t>(out.runs));
      total += m[name] = median(v);
    }
    return m;
  };
  std::map<std::string, double> ruleMedian = medians(rule, out.ruleTotalMs),
                                tunedMedian = medians(tuned, out.tunedTotalMs);
  std::vector<TuningRecord> records;
  for (const auto &[name, f] : applied) {
    NetworkCheckRow row;
    row.function = name;
    row.point = *f->schedule->config;
    row.calls = std::max(1, tuned.calls[name]);
    row.ruleMs = ruleMedian[name] / row.calls;
    row.tunedMs = tunedMedian[name] / row.calls;
    out.rows.push_back(row);
    std::string task = taskKey(*f), target = targetDescription(f->schedule->cpu);
    int64_t flops = countFlops(*f->schedule);
    if (row.ruleMs <= 0 || row.tunedMs <= 0)
      continue; // too short to time: nothing to record
    for (auto [config, ms] :
         {std::pair<Config, double>{f->schedule->space.defaultConfig(), row.ruleMs},
          {row.point, row.tunedMs}}) {
      TuningRecord r;
      r.task = task;
      r.function = name;
      r.target = target;
      r.config = config;
      r.ms = ms;
      r.ruleMs = row.ruleMs;
      r.gflops = ms > 0 ? static_cast<double>(flops) / ms / 1e6 : 0;
      r.time = utcNow();
      r.threads = numThreads();
      r.network = true;
      records.push_back(r);
    }
  }
  std::stable_sort(out.rows.begin(), out.rows.end(), [](const auto &a, const auto &b) {
    return a.calls * a.ruleMs > b.calls * b.ruleMs;
  });
  if (!log.empty())
    TuningLog::append(log, records);
  return out;
}

} // namespace loupe::backend
