// TuneCommands: the commands of tuning — :space (a function's knobs and their candidates) and
// :tune (a measured search of the built graph's kernels, every measurement logged).
#include "backend/BuiltLibrary.h"
#include "backend/DynamicBuild.h"
#include "backend/Peak.h"
#include "backend/Runtime.h"
#include "backend/tune/NetworkCheck.h"
#include "backend/tune/Records.h"
#include "backend/tune/SizeRanges.h"
#include "backend/tune/Tuner.h"
#include "core/Error.h"
#include "passes/Symbols.h"
#include "repl/commands/Commands.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace loupe {

/// The tune topic's command handlers (tuning: a function's knob space, the measured search): a
/// member of Commands, so they reach the engine as Commands does.
struct Commands::TuneTopic {
  static void space(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void tune(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  /// :tune of one built graph (a fixed build, or one size's variant): its tasks, or `only`'s.
  /// True when Ctrl-C stopped the search. `apply` says how what is kept is applied.
  static bool tuneBuilt(Engine &e, const Graph &g, backend::TuneOptions o, const std::string &only,
                        int checkRuns, std::ostream &out,
                        const std::string &apply = ":build again to apply");
  /// After :tune … sizes: each size's winners measured at the other sizes, and the table of
  /// which point wins where and the sizes each serves.
  static void acrossSizes(Engine &e, const std::vector<backend::SizeTasks> &tuned,
                          const std::string &target, const backend::TuneOptions &o,
                          std::ostream &out);
  /// After a size of a dynamic build was tuned: its variant dropped, so that its next run
  /// builds it at the points kept (a generic build's is built again now).
  static void retune(const backend::DynamicBuild &dyn, const SymBindings &b);
};

namespace {

const char *kTuneUsage = ":tune [FUNC|all|check] [trials=N] [time=SECONDS] [workers=N] "
                         "[check=RUNS] [sizes SYMBOL=N[,N…] …]";

// A function's name in the tables' 44-column first column (long ones cut with "…").
std::string columnName(const std::string &name) {
  return name.size() > 42 ? name.substr(0, 41) + "…" : name;
}

} // namespace

// The network check (backend/tune/NetworkCheck) of the built graph against the tuning log, as
// a table: per function the best record applies, its time per call in the network at the rule
// and at the point, and whether it stays applied.
void Commands::networkCheck(Engine &e, const Graph &g, const std::string &log, int runs,
                            std::ostream &out, const std::string &apply) {
  if (e.progress_)
    e.progress_("network check: the tuned and the rule's build, " + std::to_string(runs) +
                    " runs each",
                -1);
  backend::NetworkCheck c = backend::checkInNetwork(g, defaultRunInputs(e, g), e.tuningLocation(),
                                                    e.kernelCache_, runs, log);
  if (e.progress_)
    e.progress_("", 1.0);
  if (c.rows.empty()) {
    out << "network check: no function of this build has a record better than its rule\n";
    return;
  }
  out << "network check (" << c.runs << " runs of each build, in turns; ms per call):\n"
      << pad("function", 44) << pad("calls", 7) << pad("rule ms", 10) << pad("tuned ms", 10)
      << pad("gain", 8) << "\n";
  size_t kept = 0;
  for (const backend::NetworkCheckRow &r : c.rows) {
    kept += r.kept();
    out << pad(columnName(r.function), 44) << pad(std::to_string(r.calls), 7)
        << pad(fixed(r.ruleMs, 4), 10) << pad(fixed(r.tunedMs, 4), 10)
        << pad(r.tunedMs > 0 ? fixed(r.ruleMs / r.tunedMs, 2) + "x" : "-", 8)
        << (r.kept() ? "applied" : "slower in the network: the rule is built") << "\n";
  }
  out << "the network's kernels: " << fixed(c.ruleTotalMs, 3) << " ms at the rules, "
      << fixed(c.tunedTotalMs, 3) << " ms tuned; " << kept << " of "
      << plural(c.rows.size(), "point") << " kept; logged in " << log << "; " << apply << "\n";
}

void Commands::TuneTopic::space(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 1, 1, ":space FUNC");
  backend::LoweredFunction f = builtOrLowered(e.requireGraph(), a[0]);
  if (!f.fast)
    fail(a[0], " was made below opt_level 3, whose seed-era schedules have no knobs; "
               ":build opt_level=3 to tune it");
  out << "task " << backend::taskKey(f) << " on " << f.schedule->cpu.isa() << " ("
      << f.schedule->cpu.vectorBytes << "-byte vectors, " << f.schedule->cpu.registers
      << " registers)\n"
      << f.schedule->space.print();
}

void Commands::TuneTopic::tune(Engine &e, const Args &, const std::string &rest,
                               std::ostream &out) {
  Args a = splitArgs(rest);
  const Graph &g = e.requireGraph();
  if (e.tuning_ == "off")
    fail("tuning is off, so nothing measured would be kept: :set tuning on (the default "
         "log) or :set tuning FILE first");
  backend::TuneOptions o;
  std::string only, sizes;
  bool sizeWords = false;
  int checkRuns = 10;
  for (const std::string &w : a) {
    size_t eq = w.find('=');
    if (w == "sizes") {
      sizeWords = true;
      continue;
    }
    if (eq == std::string::npos) {
      if (!only.empty())
        fail("usage: ", kTuneUsage);
      only = w;
      continue;
    }
    std::string k = w.substr(0, eq), v = w.substr(eq + 1);
    if (sizeWords && k != "trials" && k != "time" && k != "workers" && k != "check")
      sizes += " " + w;
    else if (k == "trials")
      o.trialsPerTask = static_cast<int>(integerAtLeast("trials", v, 1));
    else if (k == "time")
      o.seconds = static_cast<double>(integerAtLeast("time", v, 1));
    else if (k == "workers")
      o.workers = static_cast<int>(integerAtLeast("workers", v, 1));
    else if (k == "check")
      checkRuns = static_cast<int>(integerAtLeast("check", v, 0));
    else
      fail("unknown option '", k, "'; usage: ", kTuneUsage);
  }
  if (sizeWords) {
    // A sample of a dynamic build's sizes: each size's variant tuned in turn, the time shared;
    // each is then built again at its points on its next :run.
    std::shared_ptr<const backend::DynamicBuild> dyn = backend::dynamicBuild(g);
    if (!dyn)
      fail("sizes picks a dynamic build's sizes to tune; the current step has none");
    if (!only.empty() && only != "all" && only != "check")
      fail("a function's name is one size's: :tune all sizes … tunes each size's functions, or "
           ":run a size and :tune ",
           only);
    if (sizes.empty())
      fail("sizes needs SYMBOL=N[,N…] after it; usage: ", kTuneUsage);
    std::vector<SymBindings> sample = sizeSample(dyn->graph(), sizes, "sizes");
    o.seconds /= static_cast<double>(sample.size());
    std::vector<backend::SizeTasks> tuned;
    std::string target; // the CPU the variants are built for
    bool stopped = false;
    for (const SymBindings &b : sample) {
      bool built = false;
      Graph v = backend::variantOf(g, b, &built, /*specialized=*/true);
      out << "variant " << bindingsText(b) << (built ? " (built now)" : "") << ":\n";
      stopped = tuneBuilt(e, v, o, only == "check" ? only : "", checkRuns, out,
                          "its next :run builds the variant again to apply");
      tuned.push_back({b, backend::extractTasks(v)});
      target = backend::targetDescription(
          backend::builtLibrary(v)->lowered.at(tuned.back().tasks.front().name).schedule->cpu);
      retune(*dyn, b);
      if (stopped)
        break;
    }
    if (!stopped && only != "check" && tuned.size() > 1)
      acrossSizes(e, tuned, target, o, out);
    out << "tuned " << plural(tuned.size(), "size") << "; each size's variant is built again, at "
        << "the points kept, on its next :run\n";
    return;
  }
  std::shared_ptr<const backend::DynamicBuild> dyn = backend::dynamicBuild(g);
  if (dyn && !backend::builtLibrary(g))
    requireBuilt(g); // a variant's sizes are tuned, one size at a time (or sizes …)
  if (SymBindings b = backend::variantBindings(g); dyn && !b.empty()) {
    // A variant is not built again by :build (the step is a deploy graph): its next :run of
    // these sizes is, at the points kept. A generic build's variant runs generic kernels: the
    // size compiled for itself is what is tuned.
    bool generic = g.attr("generic_kernels") != nullptr;
    if (generic && !only.empty() && only != "all" && only != "check")
      fail("this step runs the generic kernels, which are not tuned: :tune all tunes the "
           "functions of this size compiled for it (or :tune all sizes SYMBOL=N,… several)");
    Graph v = generic ? backend::variantOf(g, b, nullptr, /*specialized=*/true) : g;
    tuneBuilt(e, v, o, only, checkRuns, out, "its next :run builds the variant again to apply");
    retune(*dyn, b);
    return;
  }
  tuneBuilt(e, g, o, only, checkRuns, out);
}

void Commands::TuneTopic::retune(const backend::DynamicBuild &dyn, const SymBindings &b) {
  dyn.forget(b);
  // A generic build runs its generic kernels at a size with no variant of its own: the tuned
  // size gets one now, at the points kept.
  if (dyn.generic())
    dyn.specialize(b);
}

void Commands::TuneTopic::acrossSizes(Engine &e, const std::vector<backend::SizeTasks> &tuned,
                                      const std::string &target, const backend::TuneOptions &o,
                                      std::ostream &out) {
  std::filesystem::path log = e.tuningLogFile(target);
  if (log.empty())
    return;
  if (e.progress_)
    e.progress_("measuring each size's best at the other sizes", -1);
  int measured = 0;
  {
    int workers = o.workers > 0 ? o.workers : std::max(1, backend::numThreads());
    backend::MeasurePool pool(workers, o.measure);
    measured =
        backend::crossMeasure(tuned, backend::TuningLog::read(log, nullptr), log, target,
                              [&](const backend::Task &t, const std::vector<backend::Config> &c) {
                                return pool.measure(t, c);
                              });
  }
  if (e.progress_)
    e.progress_("", 1.0);
  backend::TuningLog read = backend::TuningLog::read(log, nullptr);
  // A row per function tuned at two sizes or more, in the first size's order.
  std::vector<backend::SizeRow> rows;
  for (const backend::Task &t : tuned.front().tasks) {
    std::vector<backend::SizeWinner> ws =
        backend::sizeWinners(read, log.string(), t.family, target, backend::numThreads());
    if (ws.size() > 1)
      rows.push_back({columnName(t.name), std::move(ws)});
  }
  out << "across the sizes (each size's best measured at the others, in turns with theirs: "
      << plural(static_cast<size_t>(measured), "measurement") << "):\n";
  if (rows.empty()) {
    out << "no function was measured at two sizes\n";
    return;
  }
  out << backend::sizesTable(rows);
  out << "a size not tuned builds each function at the point of its nearest size tuned (by the "
         "ratio of each symbol; a tie to the larger); rule: that size's own rule\n";
}

bool Commands::TuneTopic::tuneBuilt(Engine &e, const Graph &g, backend::TuneOptions o,
                                    const std::string &only, int checkRuns, std::ostream &out,
                                    const std::string &apply) {
  std::vector<backend::Task> tasks = backend::extractTasks(g);
  if (tasks.empty())
    fail("no function of this build has knobs to tune (only opt_level 3's schedules have them)");
  auto lib = backend::builtLibrary(g);
  // The log of the CPU the build sizes for (one for all its functions).
  o.target = backend::targetDescription(lib->lowered.at(tasks.front().name).schedule->cpu);
  std::filesystem::path log = e.tuningLogFile(o.target);
  if (only == "check") { // the network check alone, of what the log holds
    if (checkRuns == 0)
      fail(":tune check runs the network at least once: check=RUNS must be 1 or more");
    e.checkWrite(":tune check (its log)", log.string());
    networkCheck(e, g, log.string(), checkRuns, out, apply);
    return false;
  }
  if (!only.empty() && only != "all") {
    std::string key = backend::taskKey(builtOrLowered(g, only));
    tasks.erase(std::remove_if(tasks.begin(), tasks.end(),
                               [&](const backend::Task &t) { return t.key != key; }),
                tasks.end());
    if (tasks.empty())
      fail(only, " has no knobs to tune (:space ", only, ")");
  }
  if (!log.empty())
    e.checkWrite(":tune (its log)", log.string());
  o.log = log;
  o.peakGflops = backend::peakGflopsPerCore() * backend::numThreads();
  backend::Tuner tuner(tasks, o);
  auto percent = [&](double gflops) {
    return o.peakGflops > 0 ? " (" + fixed(100 * gflops / o.peakGflops, 0) + "% of peak)" : "";
  };
  tuner.run([&](const backend::TuneStatus &s) {
    if (!e.progress_)
      return;
    const backend::TaskResult &r = *s.result;
    e.progress_("tuning " + std::to_string(s.task + 1) + "/" + std::to_string(s.tasks) + " " +
                    r.task.name + ": " + std::to_string(r.trials) + " trials, best " +
                    fixed(r.bestGflops(), 1) + " GFLOP/s" + percent(r.bestGflops()) + ", " +
                    fixed(r.gain(), 2) + "x the rule; " + fixed(s.elapsed, 0) + " of " +
                    fixed(o.seconds, 0) + " s",
                std::min(1.0, s.elapsed / o.seconds));
  });
  if (e.progress_)
    e.progress_("", 1.0);
  // A row per task, the heaviest first.
  std::vector<const backend::TaskResult *> rows;
  int trials = 0;
  for (const backend::TaskResult &r : tuner.results()) {
    rows.push_back(&r);
    trials += r.trials;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto *x, const auto *y) {
    return x->task.calls * x->bestMs > y->task.calls * y->bestMs;
  });
  out << pad("function", 44) << pad("calls", 7) << pad("trials", 8) << pad("rule ms", 10)
      << pad("best ms", 10) << pad("gain", 8) << pad("GFLOP/s", 9) << "best point\n";
  for (const backend::TaskResult *r : rows) {
    out << pad(columnName(r->task.name), 44) << pad(std::to_string(r->task.calls), 7)
        << pad(std::to_string(r->trials) + (r->exhausted ? "*" : ""), 8)
        << pad(r->ruleMs > 0 ? fixed(r->ruleMs, 4) : "-", 10)
        << pad(r->bestMs > 0 ? fixed(r->bestMs, 4) : "-", 10)
        << pad(r->gain() > 0 ? fixed(r->gain(), 2) + "x" : "-", 8)
        << pad(fixed(r->bestGflops(), 1), 9)
        << (r->beatsRule() ? backend::configText(r->best) : std::string("the rule")) << "\n";
    size_t shown = 0;
    for (const std::string &n : r->notes)
      if (shown++ < 3)
        out << "  " << n << "\n";
    if (r->notes.size() > 3)
      out << "  … and " << r->notes.size() - 3 << " more failed candidates (in the log)\n";
  }
  out << (tuner.interrupted() ? "interrupted after " : "")
      << plural(static_cast<size_t>(trials), "trial") << " in "
      << plural(tuner.results().size(), "task") << " (* every point measured); logged in "
      << log.string() << "; " << apply << " the best\n";
  // What the search found alone, measured where it runs: among the network's other kernels.
  bool anyBetter = std::any_of(tuner.results().begin(), tuner.results().end(),
                               [](const backend::TaskResult &r) { return r.beatsRule(); });
  if (!tuner.interrupted() && checkRuns > 0 && anyBetter && !log.empty())
    networkCheck(e, g, log.string(), checkRuns, out, apply);
  return tuner.interrupted();
}

std::vector<Commands::Listed> Commands::tuneCommands() {
  using T = TuneTopic;
  return {
      {"schedule",
       {"space", "FUNC",
        "a function's tuning knobs at opt_level 3: each one's candidates and the rule's choice, "
        "and the size of the space",
        T::space}},
      {"profile",
       {"tune", "[FUNC|all|check] [trials=N] [time=SECONDS] [workers=N] [check=RUNS] [sizes …]",
        "searches the built graph's kernels' knob spaces on this machine (measured, every "
        "measurement logged; Ctrl-C keeps what was found), then runs the network at its rules "
        "and at the points found, in turns (check=RUNS runs each, default 10, 0 skips; "
        ":tune check alone): :build applies the best that is no slower in the network; a "
        "dynamic build's sizes SYMBOL=N[,N…] tunes each size's variant in turn, the time "
        "shared, then measures each size's best at the others and prints which point wins "
        "where; each size is built again at its points on its next :run, a size never tuned at "
        "its nearest tuned size's",
        T::tune}},
  };
}

} // namespace loupe
