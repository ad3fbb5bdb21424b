// Tuner: rounds of measurements per task — the rule and random points first, then the points a
// simulated annealing over the cost model's predictions finds most promising — with the next
// round given to the task whose time promises to shrink most.
#include "backend/tune/Tuner.h"

#include "backend/Runtime.h"
#include "core/Error.h"
#include "core/Interrupt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <optional>
#include <set>

namespace loupe::backend {

namespace {

using Clock = std::chrono::steady_clock;

} // namespace

uint64_t nextRandom(uint64_t &s) {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

struct Tuner::Search {
  uint64_t valid = 0;          ///< points within the limits
  std::set<uint64_t> measured; ///< point numbers measured (or failed)
  std::vector<std::vector<float>> features;
  std::vector<float> scores;                 ///< ruleMs / ms; 0 for a failure
  std::vector<std::pair<Config, double>> ok; ///< measured ok points and their times
  CostModel model;
  std::vector<double> roundBest; ///< bestMs after each round
  /// The valid points, when there are few enough to list (else sampled).
  std::vector<uint64_t> all;
};

Tuner::Tuner(std::vector<Task> tasks, TuneOptions options, MeasureFn measure)
    : options_(std::move(options)), measure_(std::move(measure)),
      rng_(options_.seed * 2654435761u + 88172645463325252ull) {
  if (!measure_) {
    int workers = options_.workers > 0 ? options_.workers : std::max(1, numThreads());
    pool_ = std::make_unique<MeasurePool>(workers, options_.measure);
    measure_ = [this](const Task &t, const std::vector<Config> &c) { return pool_->measure(t, c); };
  }
  for (Task &t : tasks) {
    auto s = std::make_unique<Search>();
    uint64_t size = t.space.size();
    if (size <= (uint64_t{1} << 16)) {
      for (uint64_t i = 0; i < size; ++i)
        if (t.space.contains(t.space.at(i)))
          s->all.push_back(i);
      s->valid = s->all.size();
    } else {
      s->valid = size; // too many to list: sampled, limits checked per point
    }
    TaskResult r;
    r.task = std::move(t);
    results_.push_back(std::move(r));
    searches_.push_back(std::move(s));
  }
}

Tuner::~Tuner() = default;

std::vector<Config> Tuner::proposals(size_t t, size_t count) {
  TaskResult &r = results_[t];
  Search &s = *searches_[t];
  const ConfigSpace &space = r.task.space;
  std::vector<Config> out;
  std::set<uint64_t> chosen;
  auto take = [&](const Config &c) {
    uint64_t i = space.indexOf(c);
    if (out.size() >= count || s.measured.count(i) || !chosen.insert(i).second)
      return false;
    out.push_back(c);
    return true;
  };
  auto randomPoint = [&]() -> std::optional<Config> {
    if (!s.all.empty()) {
      std::vector<uint64_t> left;
      for (uint64_t i : s.all)
        if (!s.measured.count(i) && !chosen.count(i))
          left.push_back(i);
      if (left.empty())
        return std::nullopt;
      return space.at(left[nextRandom(rng_) % left.size()]);
    }
    for (int attempt = 0; attempt < 1000; ++attempt) {
      Config c = space.at(nextRandom(rng_) % space.size());
      uint64_t i = space.indexOf(c);
      if (space.contains(c) && !s.measured.count(i) && !chosen.count(i))
        return c;
    }
    return std::nullopt;
  };
  if (r.trials == 0)
    take(r.task.rule);
  // Until the model has something to learn from, and for a share of every round after
  // (exploration), random points.
  size_t randomShare = s.ok.size() < 4 ? count : std::max<size_t>(1, count / 4);
  if (s.ok.size() >= 4 && count > randomShare) {
    // Simulated annealing over the model's predictions, from the best measured points and
    // random ones; every unmeasured point it visits is a candidate.
    std::vector<std::pair<Config, double>> best = s.ok;
    std::sort(best.begin(), best.end(),
              [](const auto &a, const auto &b) { return a.second < b.second; });
    std::vector<Config> population;
    for (size_t i = 0; i < best.size() && population.size() < 8; ++i)
      population.push_back(best[i].first);
    while (population.size() < 32)
      if (auto c = randomPoint())
        population.push_back(*c);
      else
        break;
    auto predictAll = [&](const std::vector<Config> &cs) {
      std::vector<std::vector<float>> f;
      for (const Config &c : cs)
        f.push_back(featuresOf(space, c));
      return s.model.predict(f);
    };
    std::vector<float> score = predictAll(population);
    std::map<uint64_t, float> candidates;
    auto note = [&](const Config &c, float p) {
      uint64_t i = space.indexOf(c);
      if (!s.measured.count(i))
        candidates[i] = p;
    };
    for (size_t i = 0; i < population.size(); ++i)
      note(population[i], score[i]);
    const int steps = 40;
    for (int step = 0; step < steps; ++step) {
      double temperature = 1.0 - static_cast<double>(step) / steps;
      std::vector<Config> next = population;
      for (Config &c : next) {
        // A neighbour: one knob moved to another of its candidates, within the limits.
        for (int attempt = 0; attempt < 8; ++attempt) {
          Config n = c;
          const Knob &k = space.knobs[nextRandom(rng_) % space.knobs.size()];
          if (k.candidates.size() < 2)
            continue;
          n[k.name] = k.candidates[nextRandom(rng_) % k.candidates.size()];
          if (n != c && space.contains(n)) {
            c = n;
            break;
          }
        }
      }
      std::vector<float> nextScore = predictAll(next);
      for (size_t i = 0; i < population.size(); ++i) {
        note(next[i], nextScore[i]);
        double delta = nextScore[i] - score[i];
        double u = static_cast<double>(nextRandom(rng_) % 1000000) / 1e6;
        if (delta >= 0 || (temperature > 0 && u < std::exp(delta / (0.05 * temperature)))) {
          population[i] = next[i];
          score[i] = nextScore[i];
        }
      }
    }
    std::vector<std::pair<float, uint64_t>> ranked;
    for (const auto &[i, p] : candidates)
      ranked.push_back({p, i});
    std::sort(ranked.begin(), ranked.end(), [](const auto &a, const auto &b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    for (const auto &[p, i] : ranked) {
      if (out.size() >= count - randomShare)
        break;
      take(space.at(i));
    }
  }
  while (out.size() < count)
    if (auto c = randomPoint())
      take(*c);
    else
      break;
  return out;
}

TuningRecord measurementRecord(const Task &t, const Config &c, const Measurement &m,
                               const std::string &target, int trial) {
  TuningRecord rec;
  rec.task = t.key;
  rec.function = t.name;
  rec.target = target;
  rec.threads = numThreads(); // the workers inherit LOUPE_NUM_THREADS, and so their pool size
  rec.config = c;
  rec.status = m.status;
  rec.ms = m.ms;
  rec.gflops = m.ms > 0 ? static_cast<double>(t.flops) / m.ms / 1e6 : 0;
  rec.message = m.message;
  rec.trial = trial;
  rec.time = utcNow();
  rec.rule = c == t.rule;
  rec.family = t.family;
  rec.sizes = t.sizes;
  return rec;
}

TuningRecord Tuner::recordOf(const TaskResult &r, const Config &c, const Measurement &m) const {
  return measurementRecord(r.task, c, m, options_.target, r.trials);
}

void Tuner::confirm(size_t t) {
  TaskResult &r = results_[t];
  if (r.bestMs <= 0 || r.ruleMs <= 0 || r.best == r.task.rule)
    return;
  // The best and the rule again, alternately: a point that won by one lucky measurement (the
  // machine's noise is several percent) meets the rule on equal terms.
  std::vector<Config> again = {r.task.rule, r.best, r.task.rule, r.best};
  std::vector<Measurement> ms = measure_(r.task, again);
  std::vector<TuningRecord> records;
  double ruleAgain = INFINITY, bestAgain = INFINITY;
  for (size_t i = 0; i < again.size(); ++i) {
    ++r.trials;
    ++totalTrials_;
    double &fastest = again[i] == r.task.rule ? ruleAgain : bestAgain;
    if (ms[i].status == "ok")
      fastest = std::min(fastest, ms[i].ms);
    records.push_back(recordOf(r, again[i], ms[i]));
    records.back().confirm = true;
  }
  for (TuningRecord &rec : records)
    rec.ruleMs = std::isfinite(ruleAgain) ? ruleAgain : r.ruleMs;
  if (!options_.log.empty())
    TuningLog::append(options_.log, records);
  if (!std::isfinite(ruleAgain) || !std::isfinite(bestAgain))
    return; // the machine failed a measurement it made before: nothing new to conclude
  // From here on the table reports what :build will compare: these measurements.
  r.ruleMs = ruleAgain;
  if (bestAgain <= kApplyShare * ruleAgain) {
    r.bestMs = bestAgain;
  } else { // measured again, the rule is as fast: it stays
    r.best = r.task.rule;
    r.bestMs = ruleAgain;
  }
  r.curve.push_back({r.trials, r.bestGflops()});
}

void Tuner::round(size_t t) {
  TaskResult &r = results_[t];
  Search &s = *searches_[t];
  size_t count = static_cast<size_t>(std::max(1, options_.batch));
  if (options_.trialsPerTask > 0)
    count = std::min<size_t>(count, static_cast<size_t>(options_.trialsPerTask - r.trials));
  std::vector<Config> configs = proposals(t, count);
  if (configs.empty()) {
    r.exhausted = true;
    return;
  }
  std::vector<Measurement> ms = measure_(r.task, configs);
  std::vector<TuningRecord> records;
  for (size_t i = 0; i < configs.size(); ++i) {
    const Measurement &m = ms[i];
    ++r.trials;
    ++totalTrials_;
    s.measured.insert(r.task.space.indexOf(configs[i]));
    bool isRule = configs[i] == r.task.rule;
    if (m.status == "ok") {
      if (isRule)
        r.ruleMs = r.ruleMs > 0 ? std::min(r.ruleMs, m.ms) : m.ms;
      if (r.bestMs == 0 || m.ms < r.bestMs) {
        r.bestMs = m.ms;
        r.best = configs[i];
        r.bestTrial = r.trials;
      }
      s.ok.push_back({configs[i], m.ms});
    } else {
      ++r.failures;
      r.notes.push_back("trial " + std::to_string(r.trials) + " (" + configText(configs[i]) +
                        "): " + m.status + (m.message.empty() ? "" : ": " + m.message));
    }
    TuningRecord rec = recordOf(r, configs[i], m);
    records.push_back(rec);
  }
  for (TuningRecord &rec : records)
    rec.ruleMs = r.ruleMs;
  if (!options_.log.empty())
    TuningLog::append(options_.log, records);
  // What the model learns: each point's speed relative to the rule's (0 for a failure).
  double reference = r.ruleMs > 0 ? r.ruleMs : r.bestMs;
  s.features.clear();
  s.scores.clear();
  for (uint64_t i : s.measured) {
    Config c = r.task.space.at(i);
    auto it = std::find_if(s.ok.begin(), s.ok.end(), [&](const auto &p) { return p.first == c; });
    s.features.push_back(featuresOf(r.task.space, c));
    s.scores.push_back(
        it == s.ok.end() || reference <= 0 ? 0.0f : static_cast<float>(reference / it->second));
  }
  if (s.ok.size() >= 4)
    s.model.fit(s.features, s.scores);
  s.roundBest.push_back(r.bestMs);
  r.curve.push_back({r.trials, r.bestGflops()});
  if (s.measured.size() >= s.valid)
    r.exhausted = true;
}

namespace {
// Rounds every task gets before the scheduler prefers some (see run).
constexpr int kWarmupRounds = 2;
} // namespace

void Tuner::run(const std::function<void(const TuneStatus &)> &progress) {
  Clock::time_point start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  auto report = [&](size_t t) {
    if (progress)
      progress({t, results_.size(), totalTrials_, elapsed(), &results_[t]});
  };
  try {
    // Every task's first rounds, the heaviest first (calls x flops): the rule and random points.
    std::vector<size_t> order(results_.size());
    for (size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return results_[a].task.flops * results_[a].task.calls >
             results_[b].task.flops * results_[b].task.calls;
    });
    // Two rounds each, heaviest first, before any task is preferred: one round's best is
    // mostly the rule and luck.
    for (int warmup = 0; warmup < kWarmupRounds; ++warmup)
      for (size_t t : order) {
        const TaskResult &r = results_[t];
        if (elapsed() >= options_.seconds || r.exhausted ||
            (options_.trialsPerTask > 0 && r.trials >= options_.trialsPerTask))
          continue;
        checkInterrupt();
        round(t);
        report(t);
      }
    // Then the task whose share of the network's time promises to shrink most: its calls x its
    // best time x how much its last two rounds improved it (plus a little, so that none starves).
    for (;;) {
      if (elapsed() >= options_.seconds)
        break;
      checkInterrupt();
      double bestPriority = -1;
      size_t pick = 0;
      for (size_t t = 0; t < results_.size(); ++t) {
        const TaskResult &r = results_[t];
        const Search &s = *searches_[t];
        if (r.exhausted || r.bestMs <= 0 ||
            (options_.trialsPerTask > 0 && r.trials >= options_.trialsPerTask))
          continue;
        double before =
            s.roundBest.size() >= 3 ? s.roundBest[s.roundBest.size() - 3] : s.roundBest.front();
        // Gains under 1% are measurement noise finding a luckier repeat, not progress.
        double improvement = before > 0 ? std::max(0.0, (before - r.bestMs) / before - 0.01) : 0;
        double priority = r.task.calls * r.bestMs * (improvement + 0.05);
        if (priority > bestPriority) {
          bestPriority = priority;
          pick = t;
        }
      }
      if (bestPriority < 0)
        break;
      round(pick);
      report(pick);
    }
    for (size_t t = 0; t < results_.size(); ++t) {
      checkInterrupt();
      confirm(t);
    }
  } catch (const Interrupted &) {
    interrupted_ = true;
    clearInterrupt();
  }
}

} // namespace loupe::backend
