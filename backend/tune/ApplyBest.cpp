// ApplyBest: the point a build applies from a tuning log, and across sizes the nearest size's.
#include "backend/tune/ApplyBest.h"

#include "core/Error.h"
#include "core/Text.h"
#include "passes/Symbols.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace loupe::backend {

PointChoice choosePoint(const TuningLog &log, const std::string &file, const std::string &task,
                        const std::string &target, int threads, const Config &rule) {
  PointChoice c;
  // Where the tuner measured its best against the rule again, those measurements decide (the
  // fastest of hundreds of single measurements is partly luck); otherwise all records do.
  // Only records measured at this thread count (a split that pays on two threads need not on
  // one).
  bool confirmed = log.best(task, target, true, threads) != nullptr;
  const TuningRecord *r = log.best(task, target, confirmed, threads);
  if (!r) {
    c.unmeasured = true;
    c.source = log.best(task, target) ? "the rule (the records of this task in " + file +
                                            " were measured at another thread count than " +
                                            std::to_string(threads) + ")"
                                      : "the rule (no record of this task in " + file + ")";
    return c;
  }
  if (r->config == rule) {
    c.source =
        "the rule (the best point measured, record " + file + ":" + std::to_string(r->line) + ")";
    return c;
  }
  // The rule's time: its fastest measurement in the log (the tuner measures it again beside a
  // best it found), else what the best's own record says.
  double ruleMs = r->ruleMs;
  if (const TuningRecord *fastestRule = log.fastest(task, target, rule, confirmed, threads))
    ruleMs = fastestRule->ms;
  char buf[240];
  // A gain within measurement noise is not worth a schedule nobody chose by reason.
  if (ruleMs > 0 && r->ms > kApplyShare * ruleMs) {
    std::snprintf(buf, sizeof buf,
                  "the rule (the best record, %s:%zu, was only %.2fx the rule's speed)",
                  file.c_str(), r->line, ruleMs / r->ms);
    c.source = buf;
    return c;
  }
  // A point that ran slower than the rule in the network (`:tune`'s check) is not applied:
  // alone, its operands stayed in caches that the network's other kernels evict.
  const TuningRecord *inNetwork = log.inNetwork(task, target, r->config, threads),
                     *ruleInNetwork = log.inNetwork(task, target, rule, threads);
  double networkGain = inNetwork && ruleInNetwork ? ruleInNetwork->ms / inNetwork->ms : 0;
  if (networkGain > 0 && networkGain < 1) {
    std::snprintf(buf, sizeof buf,
                  "the rule (the best record, %s:%zu, ran at %.2fx the rule's speed in the "
                  "network, record %zu)",
                  file.c_str(), r->line, networkGain, inNetwork->line);
    c.source = buf;
    return c;
  }
  std::string gain;
  if (ruleMs > 0) {
    std::snprintf(buf, sizeof buf, "; %.2fx the rule's speed when measured", ruleMs / r->ms);
    gain = buf;
    if (networkGain > 0) {
      std::snprintf(buf, sizeof buf, ", %.2fx in the network", networkGain);
      gain += buf;
    }
  }
  c.point = r->config;
  c.source = "record " + file + ":" + std::to_string(r->line) + " (trial " +
             std::to_string(r->trial) + gain + ")";
  return c;
}

std::vector<SizeWinner> sizeWinners(const TuningLog &log, const std::string &file,
                                    const std::string &family, const std::string &target,
                                    int threads) {
  // The family's tasks by their sizes (one task a size: the function at those sizes), with the
  // rule each measured. A record whose sizes do not read is another program's: passed over.
  std::map<SymBindings, SizeWinner> bySizes;
  for (const TuningRecord &r : log.records) {
    if (r.family != family || r.target != target || r.status != "ok")
      continue;
    SymBindings sizes;
    try {
      sizes = parseBindings(r.sizes);
    } catch (const Error &) {
      continue;
    }
    SizeWinner &w = bySizes[sizes];
    if (w.task.empty()) {
      w.sizes = sizes;
      w.task = r.task;
      w.function = r.function;
    }
    if (r.rule && r.task == w.task)
      w.rule = r.config;
  }
  std::vector<SizeWinner> out;
  for (auto &[sizes, w] : bySizes) {
    if (w.rule.empty())
      continue; // its rule was never measured (a log written before records said so)
    w.choice = choosePoint(log, file, w.task, target, threads, w.rule);
    if (!w.choice.unmeasured)
      out.push_back(std::move(w));
  }
  return out;
}

const SizeWinner *nearestSize(const std::vector<SizeWinner> &winners, const SymBindings &sizes) {
  const SizeWinner *nearest = nullptr;
  double nearestDistance = 0;
  for (const SizeWinner &w : winners) {
    if (w.sizes.size() != sizes.size())
      return nullptr;
    double d = 0;
    for (const auto &[symbol, size] : sizes) {
      auto it = w.sizes.find(symbol);
      if (it == w.sizes.end())
        return nullptr;
      d += std::fabs(std::log(static_cast<double>(it->second) / static_cast<double>(size)));
    }
    // Sizes are compared as a ratio; a tie (seq=48 between 32 and 72) goes to the larger, whose
    // tiles the smaller size's loops still fill.
    bool closer = !nearest || d < nearestDistance - 1e-12 ||
                  (d < nearestDistance + 1e-12 && w.sizes > nearest->sizes);
    if (closer) {
      nearest = &w;
      nearestDistance = d;
    }
  }
  return nearest;
}

PointChoice nearestPoint(const TuningLog &log, const std::string &file, const std::string &family,
                         const SymBindings &sizes, const std::string &target, int threads) {
  PointChoice c;
  std::vector<SizeWinner> winners = sizeWinners(log, file, family, target, threads);
  const SizeWinner *w = nearestSize(winners, sizes);
  if (!w) {
    c.unmeasured = true;
    c.source = "the rule (no record of this task in " + file + ", nor of its function at " +
               "another size)";
    return c;
  }
  std::vector<std::string> tuned;
  for (const SizeWinner &s : winners)
    tuned.push_back(bindingsText(s.sizes));
  std::string where = "at " + bindingsText(w->sizes) + ", the nearest size tuned (of " +
                      joinNames(tuned, "; ") + "): ";
  if (!w->choice.point) {
    // "the rule (why)" said once: the rule won there for the reason its own choice gives.
    std::string why = w->choice.source;
    if (why.starts_with("the rule (") && why.ends_with(")"))
      why = why.substr(10, why.size() - 11);
    c.source = "the rule (the rule won " + where + why + ")";
    return c;
  }
  c.point = w->choice.point;
  c.source = "the point that won " + where + w->choice.source;
  return c;
}

} // namespace loupe::backend
