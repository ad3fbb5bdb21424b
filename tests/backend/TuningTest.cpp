// TuningTest: knob spaces, the tuning log (format, damaged lines, merging, concurrent appends),
// measurement (the rule's output as the oracle, wrong answers, timeouts), the search and Ctrl-C.
#include "TestUtil.h"

#include "backend/Build.h"
#include "backend/DynamicBuild.h"
#include "backend/LowerFunction.h"
#include "backend/Runtime.h"
#include "backend/tune/Measure.h"
#include "backend/tune/Records.h"
#include "backend/tune/Task.h"
#include "backend/tune/Tuner.h"
#include "core/Interrupt.h"
#include "view/TuningView.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

namespace loupe::test {
namespace {

using backend::Config;
using backend::ConfigSpace;
using backend::Knob;
using backend::Measurement;
using backend::Task;
using backend::TuningLog;
using backend::TuningRecord;

namespace fs = std::filesystem;

// A fresh folder under the build tree's test cache, removed first.
fs::path scratch(const std::string &name) { return freshFolder("loupe-tuning-test", name); }

ConfigSpace smallSpace() {
  ConfigSpace s;
  s.knobs.push_back({"a", {1, 2, 4}, 2, "first"});
  s.knobs.push_back({"b", {0, 1}, 0, "second"});
  s.knobs.push_back({"c", {1, 3}, 3, "third"});
  s.limits.push_back({{"a", "c"}, 6});
  return s;
}

// --- spaces ----------------------------------------------------------------------------------

TEST(Space, NumbersPointsInMixedRadixFirstKnobSlowest) {
  ConfigSpace s = smallSpace();
  EXPECT_EQ(s.size(), 12u);
  // a=4 (index 2), b=1 (1), c=1 (0): 2*(2*2) + 1*2 + 0 = 10.
  EXPECT_EQ(s.at(10), (Config{{"a", 4}, {"b", 1}, {"c", 1}}));
  EXPECT_EQ(s.indexOf({{"a", 4}, {"b", 1}, {"c", 1}}), 10u);
  for (uint64_t i = 0; i < s.size(); ++i)
    EXPECT_EQ(s.indexOf(s.at(i)), i);
  EXPECT_EQ(s.defaultConfig(), (Config{{"a", 2}, {"b", 0}, {"c", 3}}));
}

TEST(Space, LimitsExcludePointsWhoseProductIsTooLarge) {
  ConfigSpace s = smallSpace();
  // a x c <= 6 leaves out a=4,c=3 (12) for both b: 12 - 2.
  EXPECT_EQ(s.validCount(), 10u);
  EXPECT_TRUE(s.contains({{"a", 2}, {"b", 1}, {"c", 3}}));
  EXPECT_FALSE(s.contains({{"a", 4}, {"b", 1}, {"c", 3}})); // over the limit
  EXPECT_FALSE(s.contains({{"a", 3}, {"b", 1}, {"c", 3}})); // 3 is not a candidate of a
  EXPECT_FALSE(s.contains({{"a", 2}, {"b", 1}}));           // c missing
  expectError([&] { s.indexOf({{"a", 3}, {"b", 0}, {"c", 1}}); }, "knob a has no candidate 3");
}

TEST(Space, PrintsKnobsLimitsAndSize) {
  EXPECT_EQ(smallSpace().print(), "knob a in {1 2 4}, rule 2  (first)\n"
                                  "knob b in {0 1}, rule 0  (second)\n"
                                  "knob c in {1 3}, rule 3  (third)\n"
                                  "limit a x c <= 6\n"
                                  "size 12 points, 10 within the limits\n");
  EXPECT_EQ(ConfigSpace().print(), "no knobs: this function's schedule has nothing to tune\n");
  EXPECT_EQ(backend::configText({{"reg_n", 6}, {"oc_tiles", 2}}), "oc_tiles=2 reg_n=6");
}

// --- records ---------------------------------------------------------------------------------

TuningRecord record(const std::string &task, Config c, double ms, const std::string &status = "ok",
                    const std::string &target = "AVX2 test") {
  TuningRecord r;
  r.task = task;
  r.function = "fuse_f";
  r.target = target;
  r.config = std::move(c);
  r.status = status;
  r.ms = ms;
  r.ruleMs = 2;
  r.gflops = 10;
  r.trial = 3;
  r.time = "2026-11-25T12:00:00Z";
  return r;
}

const std::string kTaskA = "0123456789abcdef";
const std::string kTaskB = "fedcba9876543210";

TEST(TuningLog, WritesOneVersionedJsonLinePerRecord) {
  TuningRecord r = record(kTaskA, {{"reg_n", 6}}, 0.5, "wrong");
  r.message = "its output differs";
  EXPECT_EQ(backend::recordToJson(r),
            R"({"config":{"reg_n":6},"function":"fuse_f","gflops":10.0,"message":"its output )"
            R"(differs","ms":0.5,"rule_ms":2.0,"status":"wrong","target":"AVX2 test","task":")" +
                kTaskA + R"(","time":"2026-11-25T12:00:00Z","trial":3,"v":1})");
  TuningRecord back = backend::recordFromJson(backend::recordToJson(r));
  EXPECT_EQ(back.config, r.config);
  EXPECT_EQ(back.status, "wrong");
  EXPECT_EQ(back.message, r.message);
  EXPECT_EQ(back.ms, 0.5);
  EXPECT_EQ(back.ruleMs, 2);
  EXPECT_EQ(back.trial, 3);
}

TEST(TuningLog, SkipsDamagedLinesWithAWarningNamingFileAndLine) {
  fs::path dir = scratch("damaged");
  fs::path file = dir / "log.jsonl";
  {
    std::ofstream out(file);
    out << backend::recordToJson(record(kTaskA, {{"k", 1}}, 3.0)) << "\n"
        << "{\"v\":1,\"task\":\"0123\n" // cut short
        << "\n"                         // blank: fine
        << "[1,2]\n"                    // not an object
        << R"({"v":2,"task":"0123456789abcdef"})"
        << "\n"                                                                   // other version
        << backend::recordToJson(record("xyz", {{"k", 1}}, 1.0)) << "\n"          // bad task
        << backend::recordToJson(record(kTaskA, {{"k", 2}}, 0.0)) << "\n"         // ok without ms
        << backend::recordToJson(record(kTaskA, {{"k", 3}}, 1.5, "fast")) << "\n" // bad status
        << backend::recordToJson(record(kTaskA, {{"k", 4}}, 2.0)) << "\n";
  }
  std::vector<std::string> warnings;
  TuningLog log = TuningLog::read(file, &warnings);
  ASSERT_EQ(log.records.size(), 2u);
  EXPECT_EQ(log.records[0].line, 1u);
  EXPECT_EQ(log.records[1].line, 9u);
  std::string f = file.string();
  ASSERT_EQ(warnings.size(), 6u);
  EXPECT_EQ(warnings[0], "warning: " + f + ":2: skipped a damaged tuning record (not JSON)");
  EXPECT_EQ(warnings[1],
            "warning: " + f + ":4: skipped a damaged tuning record (not a JSON object)");
  EXPECT_EQ(warnings[2],
            "warning: " + f + ":5: skipped a damaged tuning record (not a version 1 record)");
  EXPECT_EQ(warnings[3],
            "warning: " + f +
                ":6: skipped a damaged tuning record (task 'xyz' is not 16 hex digits)");
  EXPECT_EQ(warnings[4],
            "warning: " + f +
                ":7: skipped a damaged tuning record (an ok record needs a positive ms)");
  EXPECT_EQ(warnings[5], "warning: " + f +
                             ":8: skipped a damaged tuning record (status 'fast' is not ok, wrong, "
                             "timeout or error)");
  // The best of what survived.
  EXPECT_EQ(log.best(kTaskA, "AVX2 test")->config, (Config{{"k", 4}}));
  // A missing log is an empty one.
  EXPECT_TRUE(TuningLog::read(dir / "none.jsonl", &warnings).records.empty());
}

TEST(TuningLog, BestIsTheFastestOkRecordOfTheTaskOnTheTarget) {
  TuningLog log;
  log.records = {record(kTaskA, {{"k", 1}}, 3.0),
                 record(kTaskA, {{"k", 2}}, 0.1, "wrong"),
                 record(kTaskA, {{"k", 3}}, 0.2, "timeout"),
                 record(kTaskA, {{"k", 4}}, 1.0),
                 record(kTaskB, {{"k", 5}}, 0.5),
                 record(kTaskA, {{"k", 6}}, 0.3, "ok", "AVX-512")};
  EXPECT_EQ(log.best(kTaskA, "AVX2 test")->config, (Config{{"k", 4}}));
  EXPECT_EQ(log.best(kTaskA, "AVX-512")->config, (Config{{"k", 6}}));
  EXPECT_EQ(log.best(kTaskB, "AVX2 test")->config, (Config{{"k", 5}}));
  EXPECT_EQ(log.best(kTaskB, "AVX-512"), nullptr);
}

// A network check's record says so on its line; best() and fastest() never choose one (its time
// is per call in the network, not a candidate's alone), inNetwork() finds the fastest of a point.
TEST(TuningLog, NetworkRecordsAreKeptApartFromTheSearchs) {
  TuningRecord net = record(kTaskA, {{"k", 1}}, 0.5);
  net.network = true;
  net.threads = 2;
  std::string line = backend::recordToJson(net);
  EXPECT_NE(line.find(R"("network":true)"), std::string::npos) << line;
  EXPECT_TRUE(backend::recordFromJson(line).network);
  EXPECT_FALSE(backend::recordFromJson(backend::recordToJson(record(kTaskA, {}, 1))).network);
  TuningLog log;
  TuningRecord slower = net;
  slower.ms = 0.7;
  log.records = {record(kTaskA, {{"k", 1}}, 3.0), net, slower, record(kTaskA, {{"k", 2}}, 2.0)};
  EXPECT_EQ(log.best(kTaskA, "AVX2 test")->config, (Config{{"k", 2}}));
  EXPECT_EQ(log.fastest(kTaskA, "AVX2 test", {{"k", 1}})->ms, 3.0);
  EXPECT_EQ(log.inNetwork(kTaskA, "AVX2 test", {{"k", 1}})->ms, 0.5);
  EXPECT_EQ(log.inNetwork(kTaskA, "AVX2 test", {{"k", 1}}, 2)->ms, 0.5);
  EXPECT_EQ(log.inNetwork(kTaskA, "AVX2 test", {{"k", 1}}, 1), nullptr); // another thread count
  EXPECT_EQ(log.inNetwork(kTaskA, "AVX2 test", {{"k", 2}}), nullptr);
}

TEST(TuningLog, LogsFromSeveralMachinesMergeByConcatenation) {
  fs::path dir = scratch("merge");
  TuningLog::append(dir / "a.jsonl",
                    {record(kTaskA, {{"k", 1}}, 2.0), record(kTaskB, {{"k", 1}}, 1.0)});
  TuningLog::append(dir / "b.jsonl",
                    {record(kTaskA, {{"k", 2}}, 1.0), record(kTaskB, {{"k", 2}}, 3.0)});
  // What the README tells a team to do: cat host-b's log onto host-a's.
  {
    std::ifstream b(dir / "b.jsonl");
    std::ofstream a(dir / "a.jsonl", std::ios::app);
    a << b.rdbuf();
  }
  TuningLog merged = TuningLog::read(dir / "a.jsonl", nullptr);
  ASSERT_EQ(merged.records.size(), 4u);
  EXPECT_EQ(merged.best(kTaskA, "AVX2 test")->config, (Config{{"k", 2}}));
  EXPECT_EQ(merged.best(kTaskB, "AVX2 test")->config, (Config{{"k", 1}}));
  // One file per target description, named by its hash.
  EXPECT_EQ(TuningLog::fileFor(dir, "AVX2 test").parent_path(), dir);
  EXPECT_EQ(TuningLog::fileFor(dir, "AVX2 test").extension(), ".jsonl");
  EXPECT_NE(TuningLog::fileFor(dir, "AVX2 test"), TuningLog::fileFor(dir, "AVX-512"));
}

TEST(TuningLog, ConcurrentAppendsNeverInterleaveLines) {
  fs::path file = scratch("concurrent") / "log.jsonl";
  constexpr int kProcs = 4, kBatches = 50;
  std::vector<pid_t> kids;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (int b = 0; b < kBatches; ++b) {
        std::vector<TuningRecord> batch;
        for (int i = 0; i < 20; ++i) {
          TuningRecord r = record(kTaskA, {{"proc", p}, {"batch", b}, {"i", i}}, 1.0 + i);
          r.message = std::string(300, 'x'); // long lines: a torn write would show
          r.status = "error";
          batch.push_back(r);
        }
        TuningLog::append(file, batch);
      }
      ::_exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t k : kids) {
    int status = 0;
    ::waitpid(k, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::vector<std::string> warnings;
  TuningLog log = TuningLog::read(file, &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_EQ(log.records.size(), static_cast<size_t>(kProcs * kBatches * 20));
  std::set<Config> distinct;
  for (const TuningRecord &r : log.records)
    distinct.insert(r.config);
  EXPECT_EQ(distinct.size(), log.records.size());
}

TEST(TuningLog, AppendNamesTheFileItCannotWrite) {
  fs::path dir = scratch("readonly");
  fs::path file = dir / "sub";
  fs::create_directories(file); // a folder where the log should be
  expectError([&] { TuningLog::append(file, {record(kTaskA, {}, 1.0)}); },
              file.string() + ": cannot open the tuning log: Is a directory");
}

// --- measurement -----------------------------------------------------------------------------

TEST(Measure, OutputDifferenceIsRelativeToTheLargestMagnitude) {
  Tensor ref({3}, 0), got({3}, 0);
  ref.data = {1, -4, 2};
  got.data = {1, -4, 2};
  EXPECT_EQ(backend::outputDifference({ref}, {got}), 0);
  got.data = {1, -4, 2.5};
  EXPECT_DOUBLE_EQ(backend::outputDifference({ref}, {got}), 0.5 / 4);
  got.data = {1, NAN, 2};
  EXPECT_EQ(backend::outputDifference({ref}, {got}), INFINITY);
  EXPECT_EQ(backend::outputDifference({ref}, {Tensor({2}, 0)}), INFINITY);
  EXPECT_EQ(backend::outputDifference({ref}, {}), INFINITY);
}

// The opt_level 3 build of a small network: a 3x3 convolution, a dense layer and a softmax.
Graph builtNetwork(Engine &e) {
  run(e, "x = Variable(\"x\", shape=(1,8,10,10), dtype=0)\n"
         "c = relu(conv2d(x, channels=16, kernel_size=(3,3), padding=(1,1), name=\"conv\"))\n"
         "d = dense(flatten(c), units=10, name=\"fc\")\n"
         "y = softmax(d)\n"
         ":graph y\n"
         ":build opt_level=3");
  return e.current()->graph;
}

const Task &taskNamed(const std::vector<Task> &tasks, const std::string &prefix) {
  for (const Task &t : tasks)
    if (t.name.rfind(prefix, 0) == 0)
      return t;
  throw Error("no task " + prefix);
}

TEST(Measure, TasksAreTheBuildsDistinctKernelsWithTheirSpaces) {
  Engine e;
  std::vector<Task> tasks = backend::extractTasks(builtNetwork(e));
  std::set<std::string> keys;
  for (const Task &t : tasks) {
    keys.insert(t.key);
    EXPECT_EQ(t.rule, t.space.defaultConfig()) << t.name;
    EXPECT_TRUE(t.space.contains(t.rule)) << t.name;
    EXPECT_EQ(t.calls, 1) << t.name;
  }
  EXPECT_EQ(keys.size(), tasks.size());
  const Task &conv = taskNamed(tasks, "fuse__contrib_conv2d_NCHWc");
  // 8 -> 16 channels, 3x3 over 10x10: 2 flops per multiply-add; then the bias and the relu,
  // one each per output.
  EXPECT_EQ(conv.flops, 2 * 8 * 16 * 9 * 10 * 10 + 2 * 16 * 10 * 10);
  EXPECT_NE(conv.space.find("reg_n"), nullptr);
  // A reduction over rows declares its partial-sum chains.
  EXPECT_NE(taskNamed(tasks, "fuse_dense").space.knobs.size(), 0u);
}

TEST(Measure, EveryPointOfASpaceComputesWhatTheRuleComputes) {
  Engine e;
  std::vector<Task> tasks = backend::extractTasks(builtNetwork(e));
  backend::MeasureOptions o;
  o.minRepeatMs = 0.01;
  o.repeats = 1;
  for (const Task &t : tasks) {
    backend::CandidateRunner runner(*t.function);
    // Small spaces whole; the convolution's at every 7th point (a spread of tiles and orders).
    uint64_t step = t.space.size() > 64 ? 7 : 1;
    int measured = 0;
    for (uint64_t i = 0; i < t.space.size(); i += step) {
      Config c = t.space.at(i);
      if (!t.space.contains(c))
        continue;
      runner.compile(c);
      Measurement m = runner.measure(o);
      EXPECT_EQ(m.status, "ok") << t.name << " at " << backend::configText(c) << ": " << m.message;
      EXPECT_LE(m.relError, 1e-5) << t.name << " at " << backend::configText(c);
      EXPECT_GT(m.ms, 0);
      ++measured;
    }
    EXPECT_GT(measured, 0) << t.name;
  }
}

TEST(Measure, APoolOfWorkerProcessesMeasuresAndChecksCandidates) {
  ::setenv("LOUPE_TUNE_WORKER", LOUPE_REPL_BINARY, 1);
  Engine e;
  std::vector<Task> tasks = backend::extractTasks(builtNetwork(e));
  const Task &conv = taskNamed(tasks, "fuse__contrib_conv2d_NCHWc");
  backend::MeasureOptions o;
  o.minRepeatMs = 1;
  o.repeats = 2;
  backend::MeasurePool pool(2, o);
  Config other = conv.rule;
  other["reg_n"] = other["reg_n"] == 2 ? 5 : 2;
  std::vector<Measurement> ms = pool.measure(conv, {conv.rule, other, conv.rule});
  ASSERT_EQ(ms.size(), 3u);
  for (const Measurement &m : ms) {
    EXPECT_EQ(m.status, "ok") << m.message;
    EXPECT_GT(m.ms, 0);
    EXPECT_LE(m.relError, 1e-5);
  }
  // A point outside the space does not compile: an error, reported, and the pool goes on.
  Config bad = conv.rule;
  bad["reg_n"] = 0;
  ms = pool.measure(conv, {bad, conv.rule});
  EXPECT_EQ(ms[0].status, "error");
  EXPECT_EQ(ms[0].message, "lower " + conv.name + ": knob reg_n has no candidate 0");
  EXPECT_EQ(ms[1].status, "ok") << ms[1].message;
  ::unsetenv("LOUPE_TUNE_WORKER");
}

TEST(Measure, AWorkerThatDoesNotAnswerInTimeIsAbandoned) {
  // A worker that loads every task and then never finishes compiling.
  ::setenv("LOUPE_TUNE_WORKER", LOUPE_SOURCE_DIR "/tests/data/hanging_tune_worker.sh", 1);
  Engine e;
  std::vector<Task> tasks = backend::extractTasks(builtNetwork(e));
  backend::MeasureOptions o;
  o.timeoutSeconds = 0.3;
  backend::MeasurePool pool(2, o);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<Measurement> ms =
      pool.measure(tasks.front(), {tasks.front().rule, tasks.front().rule, tasks.front().rule});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(ms.size(), 3u);
  for (const Measurement &m : ms) {
    EXPECT_EQ(m.status, "timeout");
    EXPECT_EQ(m.message, "it did not compile within the time limit");
  }
  // Two rounds (two workers, three candidates), each abandoned at its deadline, not at the
  // worker's 60-second sleep: a loose bound, since the machine may be busy.
  EXPECT_LT(seconds, 20);
  ::unsetenv("LOUPE_TUNE_WORKER");
}

// --- the search ------------------------------------------------------------------------------

// A task over a hand-made space whose cost is known: ms = 1 + (a - 4)^2/4 + (b - 1)^2 + c/10.
Task syntheticTask() {
  Task t;
  t.key = kTaskA;
  t.name = "fuse_synthetic";
  t.space.knobs.push_back({"a", {1, 2, 3, 4, 5, 6, 7, 8}, 2, "a"});
  t.space.knobs.push_back({"b", {0, 1, 2, 3}, 0, "b"});
  t.space.knobs.push_back({"c", {0, 1, 2, 3, 4, 5}, 5, "c"});
  t.rule = t.space.defaultConfig();
  t.flops = 1000000;
  t.calls = 1;
  return t;
}

double syntheticMs(const Config &c) {
  double a = c.at("a"), b = c.at("b"), cc = c.at("c");
  return 1 + (a - 4) * (a - 4) / 4 + (b - 1) * (b - 1) + cc / 10;
}

backend::TuneOptions quickOptions(const fs::path &log) {
  backend::TuneOptions o;
  o.seconds = 600;
  o.log = log;
  o.target = "AVX2 test";
  return o;
}

TEST(Tuner, FindsTheBestPointAndLogsEveryMeasurement) {
  fs::path log = scratch("search") / "log.jsonl";
  backend::TuneOptions o = quickOptions(log);
  o.trialsPerTask = 64;
  int calls = 0;
  backend::Tuner tuner({syntheticTask()}, o, [&](const Task &, const std::vector<Config> &cs) {
    std::vector<Measurement> out;
    for (const Config &c : cs) {
      ++calls;
      Measurement m;
      m.ms = syntheticMs(c);
      out.push_back(m);
    }
    return out;
  });
  tuner.run();
  const backend::TaskResult &r = tuner.results()[0];
  EXPECT_FALSE(tuner.interrupted());
  // 64 points searched, then the best and the rule measured twice more each (confirm).
  EXPECT_EQ(r.trials, 68);
  EXPECT_EQ(calls, 68);
  EXPECT_EQ(r.ruleMs, syntheticMs(syntheticTask().rule)); // the rule is always measured
  EXPECT_EQ(r.best, (Config{{"a", 4}, {"b", 1}, {"c", 0}}));
  EXPECT_DOUBLE_EQ(r.bestMs, 1.0);
  TuningLog written = TuningLog::read(log, nullptr);
  ASSERT_EQ(written.records.size(), 68u);
  EXPECT_EQ(written.best(kTaskA, "AVX2 test")->config, r.best);
  // Every point searched once; the last four records are the confirmation, rule first.
  std::set<Config> seen;
  for (size_t i = 0; i < 64; ++i)
    EXPECT_TRUE(seen.insert(written.records[i].config).second)
        << backend::configText(written.records[i].config);
  for (size_t i = 64; i < 68; ++i)
    EXPECT_EQ(written.records[i].config, i % 2 == 0 ? syntheticTask().rule : r.best);
}

TEST(Tuner, ABestThatDoesNotBeatTheRuleWhenMeasuredAgainIsDropped) {
  fs::path log = scratch("lucky") / "log.jsonl";
  backend::TuneOptions o = quickOptions(log);
  o.trialsPerTask = 16;
  // Every point runs as fast as the rule (3 ms), but each measures lucky (2 ms) the first time.
  std::set<Config> seen;
  backend::Tuner tuner({syntheticTask()}, o, [&](const Task &t, const std::vector<Config> &cs) {
    std::vector<Measurement> out;
    for (const Config &c : cs) {
      Measurement m;
      m.ms = c != t.rule && seen.insert(c).second ? 2.0 : 3.0;
      out.push_back(m);
    }
    return out;
  });
  tuner.run();
  const backend::TaskResult &r = tuner.results()[0];
  EXPECT_EQ(r.trials, 16 + 4);
  EXPECT_EQ(r.best, syntheticTask().rule);
  EXPECT_EQ(r.bestMs, 3.0);
  EXPECT_EQ(r.gain(), 1.0);
}

TEST(Tuner, AWrongCandidateIsReportedAndNeverTheBest) {
  fs::path log = scratch("wrong") / "log.jsonl";
  backend::TuneOptions o = quickOptions(log);
  o.trialsPerTask = 192; // the whole space
  Config liar{{"a", 8}, {"b", 3}, {"c", 0}};
  backend::Tuner tuner({syntheticTask()}, o, [&](const Task &, const std::vector<Config> &cs) {
    std::vector<Measurement> out;
    for (const Config &c : cs) {
      Measurement m;
      m.ms = syntheticMs(c);
      if (c == liar) { // the fastest of all, but it computes something else
        m.ms = 0.01;
        m.status = "wrong";
        m.relError = 0.25;
        m.message = "its output differs from the rule's by 0.25 of the largest magnitude";
      }
      out.push_back(m);
    }
    return out;
  });
  tuner.run();
  const backend::TaskResult &r = tuner.results()[0];
  EXPECT_TRUE(r.exhausted);
  EXPECT_EQ(r.trials, 192 + 4);
  EXPECT_EQ(r.failures, 1);
  EXPECT_EQ(r.best, (Config{{"a", 4}, {"b", 1}, {"c", 0}}));
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("(a=8 b=3 c=0): wrong: its output differs from the rule's by 0.25"),
            std::string::npos)
      << r.notes[0];
  TuningLog written = TuningLog::read(log, nullptr);
  int wrong = 0;
  for (const TuningRecord &rec : written.records)
    wrong += rec.status == "wrong" && rec.config == liar;
  EXPECT_EQ(wrong, 1);
  EXPECT_EQ(written.best(kTaskA, "AVX2 test")->config, r.best);
}

TEST(Tuner, CtrlCStopsTheRunAndKeepsWhatWasMeasured) {
  fs::path log = scratch("interrupt") / "log.jsonl";
  backend::TuneOptions o = quickOptions(log);
  Task second = syntheticTask();
  second.key = kTaskB;
  second.name = "fuse_second";
  int calls = 0;
  backend::Tuner tuner({syntheticTask(), second}, o,
                       [&](const Task &, const std::vector<Config> &cs) {
                         std::vector<Measurement> out;
                         for (const Config &c : cs) {
                           Measurement m;
                           m.ms = syntheticMs(c);
                           out.push_back(m);
                         }
                         // Ctrl-C arrives during the third round's measurements.
                         if (++calls == 3)
                           requestInterrupt();
                         return out;
                       });
  tuner.run();
  EXPECT_TRUE(tuner.interrupted());
  EXPECT_FALSE(interruptRequested()); // handled: the REPL goes on
  int trials = 0;
  for (const backend::TaskResult &r : tuner.results()) {
    trials += r.trials;
    EXPECT_GT(r.bestMs, 0);
  }
  // The third round's batch was measured before the check, so it is kept too.
  EXPECT_EQ(trials, 3 * 8);
  EXPECT_EQ(TuningLog::read(log, nullptr).records.size(), 24u);
}

// --- applying records ------------------------------------------------------------------------

// The small network built at opt_level 3, its convolution's task and the target it was built
// for: what each test writes records against before building again.
class ApplyBest : public ::testing::Test {
protected:
  void SetUp() override {
    conv = taskNamed(backend::extractTasks(builtNetwork(e)), "fuse__contrib_conv2d_NCHWc");
    target = backend::targetDescription(
        backend::builtLibrary(e.current()->graph)->lowered.at(conv.name).schedule->cpu);
  }
  /// The convolution's point in the current build (null: the rule).
  std::shared_ptr<const Config> builtPoint() {
    return backend::builtLibrary(e.current()->graph)->lowered.at(conv.name).schedule->config;
  }
  /// Builds the network again with tuning from `log`; the convolution's point.
  std::shared_ptr<const Config> rebuiltWith(const fs::path &log) {
    run(e, ":undo\n:set tuning " + log.string());
    run(e, ":build opt_level=3");
    return builtPoint();
  }
  /// The first line of the convolution's `:schedule`: the record it was built at, or why none.
  std::string tunedLine() {
    std::string schedule = output(e, ":schedule " + conv.name);
    return schedule.substr(0, schedule.find('\n'));
  }
  Engine e;
  Task conv;
  std::string target;
};

TEST_F(ApplyBest, BuildLowersEachFunctionAtItsBestRecordAndSaysWhich) {
  Config point = conv.rule;
  point["reg_n"] = point["reg_n"] == 2 ? 5 : 2;
  fs::path log = scratch("apply") / "log.jsonl";
  TuningRecord slow = record(conv.key, conv.rule, 2.0, "ok", target);
  TuningRecord fast = record(conv.key, point, 1.0, "ok", target);
  fast.trial = 7;
  TuningLog::append(log, {slow, fast});
  {
    std::ofstream damage(log, std::ios::app);
    damage << "not a record\n";
  }
  run(e, ":undo\n:set tuning " + log.string());
  std::string built = output(e, ":build opt_level=3");
  EXPECT_NE(
      built.find("warning: " + log.string() + ":3: skipped a damaged tuning record (not JSON)\n"),
      std::string::npos)
      << built;
  EXPECT_NE(built.find("tuning: 1 function built at its best record"), std::string::npos) << built;
  auto tuned = backend::builtLibrary(e.current()->graph);
  EXPECT_EQ(*tuned->lowered.at(conv.name).schedule->config, point);
  std::string schedule = output(e, ":schedule " + conv.name);
  EXPECT_EQ(schedule.substr(0, schedule.find('\n')),
            "tuned: record " + log.string() + ":2 (trial 7; 2.00x the rule's speed when measured)");
  // The same network still computes what the reference interpreter does.
  EXPECT_EQ(output(e, ":undo").find("error"), std::string::npos);
  run(e, ":set tuning off");
  std::string untuned = output(e, ":build opt_level=3");
  EXPECT_EQ(untuned.find("tuning:"), std::string::npos) << untuned;
}

// A record says the thread count it was measured at; :build applies only records of its own
// (and those of older logs, which do not say), and :schedule says why a task's records were
// passed over.
TEST_F(ApplyBest, OnlyRecordsOfThisThreadCountApply) {
  Config point = conv.rule;
  point["reg_n"] = point["reg_n"] == 2 ? 5 : 2;
  const int here = backend::numThreads();
  fs::path log = scratch("threads") / "log.jsonl";
  std::vector<TuningRecord> rs = {record(conv.key, conv.rule, 2.0, "ok", target),
                                  record(conv.key, point, 1.0, "ok", target)};
  for (TuningRecord &r : rs)
    r.threads = here + 1;
  TuningLog::append(log, rs);
  // The line keeps the count, and reads back with it.
  EXPECT_EQ(TuningLog::read(log, nullptr).records[1].threads, here + 1);
  EXPECT_EQ(rebuiltWith(log), nullptr);
  EXPECT_EQ(tunedLine(), "tuned: the rule (the records of this task in " + log.string() +
                             " were measured at another thread count than " + std::to_string(here) +
                             ")");
  // The same measurements at this thread count apply.
  for (TuningRecord &r : rs)
    r.threads = here;
  TuningLog::append(log, rs);
  run(e, ":undo\n:build opt_level=3");
  EXPECT_EQ(*backend::builtLibrary(e.current()->graph)->lowered.at(conv.name).schedule->config,
            point);
}

TEST_F(ApplyBest, TheConfirmationDecidesOverALuckyMeasurement) {
  Config lucky = conv.rule, other = conv.rule;
  lucky["reg_n"] = lucky["reg_n"] == 2 ? 5 : 2;
  other["rows_outer"] = 1 - other["rows_outer"];
  fs::path log = scratch("confirm") / "log.jsonl";
  std::vector<TuningRecord> rs = {record(conv.key, conv.rule, 2.0, "ok", target),
                                  record(conv.key, lucky, 1.0, "ok", target), // luck, once
                                  record(conv.key, other, 1.5, "ok", target)};
  // Measured again: the lucky point runs as the rule does (1.99 against 2.0: within 3%).
  for (auto [c, ms] : std::vector<std::pair<Config, double>>{
           {conv.rule, 2.0}, {lucky, 1.99}, {conv.rule, 2.05}, {lucky, 2.01}}) {
    rs.push_back(record(conv.key, c, ms, "ok", target));
    rs.back().confirm = true;
  }
  TuningLog::append(log, rs);
  run(e, ":undo\n:set tuning " + log.string());
  std::string built = output(e, ":build opt_level=3");
  EXPECT_EQ(backend::builtLibrary(e.current()->graph)->lowered.at(conv.name).schedule->config,
            nullptr)
      << built;
  std::string schedule = output(e, ":schedule " + conv.name);
  EXPECT_EQ(schedule.substr(0, schedule.find('\n')), "tuned: the rule (the best record, " +
                                                         log.string() +
                                                         ":5, was only 1.01x the rule's speed)");
  // Without the confirmation records the lucky one would have been applied.
  TuningLog all = TuningLog::read(log, nullptr);
  EXPECT_EQ(all.best(conv.key, target)->config, lucky);
  EXPECT_EQ(all.best(conv.key, target, true)->config, lucky);
  EXPECT_EQ(all.best(conv.key, target, true)->ms, 1.99);
}

// A point faster alone that ran slower than the rule in the network (a network check's records)
// is not applied, and :schedule says so; one that ran faster there too is, with both gains.
TEST_F(ApplyBest, APointSlowerInTheNetworkIsNotApplied) {
  Config point = conv.rule;
  point["reg_n"] = point["reg_n"] == 2 ? 5 : 2;
  fs::path log = scratch("network") / "log.jsonl";
  auto inNetwork = [&](const Config &c, double ms) {
    TuningRecord r = record(conv.key, c, ms, "ok", target);
    r.network = true;
    return r;
  };
  TuningLog::append(log, {record(conv.key, conv.rule, 2.0, "ok", target),
                          record(conv.key, point, 1.0, "ok", target), inNetwork(conv.rule, 0.4),
                          inNetwork(point, 0.8)});
  EXPECT_EQ(rebuiltWith(log), nullptr);
  EXPECT_EQ(tunedLine(), "tuned: the rule (the best record, " + log.string() +
                             ":2, ran at 0.50x the rule's speed in the network, record 4)");
  // A later check where it ran faster: its fastest network record is now under the rule's.
  TuningLog::append(log, {inNetwork(point, 0.32)});
  ASSERT_NE(rebuiltWith(log), nullptr);
  EXPECT_EQ(*builtPoint(), point);
  EXPECT_EQ(tunedLine(),
            "tuned: record " + log.string() +
                ":2 (trial 3; 2.00x the rule's speed when measured, 1.25x in the network)");
}

// `:tune check` builds the network at its rules and at its best records, runs both in turns and
// writes two network records per applied point (the rule's and the point's time per call, at
// this thread count); with nothing to apply it says so and measures nothing. Bad run counts are
// refused. (The times themselves are this machine's: only their presence is asserted.)
TEST_F(ApplyBest, TheNetworkCheckRecordsEachAppliedPointAndItsRule) {
  fs::path log = scratch("check") / "log.jsonl";
  run(e, ":set tuning " + log.string());
  EXPECT_EQ(output(e, ":tune check"),
            "network check: no function of this build has a record better than its rule\n");
  EXPECT_TRUE(TuningLog::read(log, nullptr).records.empty());
  Config point = conv.rule;
  point["reg_n"] = point["reg_n"] == 2 ? 5 : 2;
  TuningLog::append(log, {record(conv.key, conv.rule, 2.0, "ok", target),
                          record(conv.key, point, 1.0, "ok", target)});
  std::string checked = output(e, ":tune check check=3");
  EXPECT_EQ(checked.rfind("network check (3 runs of each build, in turns; ms per call):\n", 0), 0u)
      << checked;
  EXPECT_NE(checked.find("\n" + conv.name + " "), std::string::npos) << checked;
  EXPECT_NE(checked.find("; logged in " + log.string() + "; :build again to apply\n"),
            std::string::npos)
      << checked;
  std::vector<TuningRecord> rs = TuningLog::read(log, nullptr).records;
  ASSERT_EQ(rs.size(), 4u);
  for (size_t k : {2u, 3u}) {
    EXPECT_TRUE(rs[k].network);
    EXPECT_EQ(rs[k].task, conv.key);
    EXPECT_EQ(rs[k].function, conv.name);
    EXPECT_EQ(rs[k].threads, backend::numThreads());
    EXPECT_GT(rs[k].ms, 0);
  }
  EXPECT_EQ(rs[2].config, conv.rule);
  EXPECT_EQ(rs[3].config, point);
  EXPECT_EQ(rs[2].ruleMs, rs[2].ms);
  EXPECT_EQ(output(e, ":tune check check=x"),
            "error: check must be a non-negative integer, got 'x'\n");
  EXPECT_EQ(output(e, ":tune check check=0"),
            "error: :tune check runs the network at least once: check=RUNS must be 1 or more\n");
}

TEST_F(ApplyBest, ARecordOutsideTheSpaceIsSkippedWithAWarningAndTheRuleBuilt) {
  Config stale = conv.rule;
  stale["reg_n"] = 99; // no such candidate: a record edited by hand, or of an older schedule
  fs::path log = scratch("stale") / "log.jsonl";
  TuningLog::append(log, {record(conv.key, stale, 1.0, "ok", target)});
  run(e, ":undo\n:set tuning " + log.string());
  std::string built = output(e, ":build opt_level=3");
  EXPECT_NE(built.find("warning: record " + log.string() +
                       ":1 (trial 3; 2.00x the rule's speed "
                       "when measured) skipped: lower " +
                       conv.name + ": knob reg_n has no candidate 99\n"),
            std::string::npos)
      << built;
  EXPECT_EQ(backend::builtLibrary(e.current()->graph)->lowered.at(conv.name).schedule->config,
            nullptr);
  std::string schedule = output(e, ":schedule " + conv.name);
  EXPECT_EQ(schedule.substr(0, schedule.find('\n')),
            "tuned: the rule (the best record does not fit: lower " + conv.name +
                ": knob reg_n has no candidate 99)");
}

// --- the viewer's model ----------------------------------------------------------------------

TEST(TuningView, JoinsTheBuildsTasksWithTheLogsRecordsInOrder) {
  Task heavy = syntheticTask(), light = syntheticTask();
  light.key = kTaskB;
  light.name = "fuse_light";
  light.flops = 10;
  fs::path log = scratch("view") / "log.jsonl";
  Config rule = heavy.rule, better = rule;
  better["a"] = 4;
  TuningLog::append(log, {record(kTaskA, rule, 2.0),                           // line 1
                          record(kTaskA, better, 1.0),                         // 2
                          record(kTaskA, {{"a", 8}}, 0.5, "wrong"),            // 3
                          record(kTaskA, better, 0.1, "ok", "another target"), // 4: not ours
                          record(kTaskB, rule, 4.0),                           // 5
                          record(kTaskA, rule, 1.5)});                         // 6
  gui::TuningView v = gui::tuningView({light, heavy}, "AVX2 test", log);
  ASSERT_EQ(v.tasks.size(), 2u);
  EXPECT_EQ(gui::heaviestTask(v), 1u);
  const gui::TaskTuning &k = v.tasks[1];
  EXPECT_EQ(k.trials, 4);
  EXPECT_EQ(k.failures, 1);
  EXPECT_EQ(k.ruleMs, 1.5); // the rule's fastest
  EXPECT_EQ(k.bestMs, 1.0);
  EXPECT_EQ(k.best, better);
  EXPECT_EQ(k.bestLine, 2u);
  EXPECT_EQ(k.curve, (std::vector<std::pair<int, double>>{{1, 2.0}, {2, 1.0}, {3, 1.0}, {4, 1.0}}));
  EXPECT_DOUBLE_EQ(k.gain(), 1.5);
  EXPECT_DOUBLE_EQ(k.speed(1.0), 1.0); // 1 MFLOP in 1 ms: 1 GFLOP/s
  std::vector<gui::KnobRow> rows = gui::knobRows(k);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "a");
  EXPECT_EQ(rows[0].rule, 2);
  EXPECT_EQ(rows[0].best, 4);
  EXPECT_EQ(rows[1].best, rows[1].rule);
  EXPECT_EQ(v.tasks[0].trials, 1);
  EXPECT_EQ(v.tasks[0].bestMs, 4.0);
  // Without a log: the tasks, no measurements.
  gui::TuningView off = gui::tuningView({heavy}, "AVX2 test", "");
  EXPECT_EQ(off.tasks[0].trials, 0);
  EXPECT_TRUE(off.tasks[0].curve.empty());
}

// `:tune … sizes` on a dynamic build: each size's variant is tuned in turn (its tasks' records
// logged), and is built again on its next :run — the current step's too — at the points kept.
TEST(TuneSizes, TunesEachSizesVariantAndRebuildsItOnItsNextRun) {
  fs::path log = scratch("sizes") / "log.jsonl";
  // Measured by the REPL's workers (this binary is no worker), so that each size has a winner.
  ::setenv("LOUPE_TUNE_WORKER", LOUPE_REPL_BINARY, 1);
  Engine e;
  run(e, "x = Variable(\"x\", shape=\"(batch, 64)\")\ny = relu(dense(x, units=64))\n:graph y");
  run(e, ":set tuning " + log.string() + "\n:build opt_level=3");
  const Graph dynamicStep = e.current()->graph;
  // The sizes' tasks, as the variants compute them.
  std::set<std::string> keys;
  for (int64_t batch : {4, 8})
    for (const Task &t : backend::extractTasks(backend::variantOf(dynamicStep, {{"batch", batch}})))
      keys.insert(t.key);
  ASSERT_FALSE(keys.empty());
  std::string tuned = output(e, ":tune all trials=3 time=60 check=0 sizes batch=4,8");
  EXPECT_NE(tuned.find("variant batch=4:\nfunction"), std::string::npos) << tuned;
  EXPECT_NE(tuned.find("variant batch=8:\nfunction"), std::string::npos) << tuned;
  EXPECT_NE(tuned.find("; its next :run builds the variant again to apply the best\n"),
            std::string::npos)
      << tuned;
  // Then each size's winner is measured at the other (what it measured depends on what won: only
  // a point other than a size's rule is tried elsewhere), and the table says where each wins.
  EXPECT_NE(tuned.find("across the sizes (each size's best measured at the others, in turns "
                       "with theirs: "),
            std::string::npos)
      << tuned;
  EXPECT_NE(tuned.find("\nfunction                                    batch=4  batch=8  sizes each "
                       "point serves\nfuse_dense"),
            std::string::npos)
      << tuned;
  EXPECT_NE(tuned.find("\na size not tuned builds each function at the point of its nearest size "
                       "tuned (by the ratio of each symbol; a tie to the larger); rule: that "
                       "size's own rule\n"),
            std::string::npos);
  EXPECT_TRUE(tuned.ends_with("tuned 2 sizes; each size's variant is built again, at the points "
                              "kept, on its next :run\n"))
      << tuned;
  // Each record says its sizes, and the one function is one family at both.
  std::set<std::string> logged, sizes, families;
  for (const TuningRecord &r : TuningLog::read(log, nullptr).records) {
    logged.insert(r.task);
    sizes.insert(r.sizes);
    families.insert(r.family);
  }
  EXPECT_EQ(logged, keys);
  EXPECT_EQ(sizes, (std::set<std::string>{"batch=4", "batch=8"}));
  EXPECT_EQ(families.size(), 1u);
  // A tuned size's variant is built again on its next :run, the current step's too.
  EXPECT_NE(
      output(e, ":run batch=4 check=off").find("variant batch=4 of the dynamic build (built now"),
      std::string::npos);
  EXPECT_NE(output(e, ":tune all trials=2 time=30 check=0 sizes batch=4")
                .find("variant batch=4:\nfunction"),
            std::string::npos);
  EXPECT_NE(output(e, ":run batch=4 check=off")
                .find("step 3: variant batch=4 of the dynamic build (built now; step 2 was "
                      "variant batch=4)"),
            std::string::npos);
  // :tune on a variant's step: :build cannot build a deploy graph again, its next :run does.
  std::string onVariant = output(e, ":tune all trials=2 time=30 check=0");
  EXPECT_TRUE(onVariant.ends_with("; its next :run builds the variant again to apply the best\n"))
      << onVariant;
  EXPECT_NE(
      output(e, ":run batch=4 check=off").find("variant batch=4 of the dynamic build (built now;"),
      std::string::npos);
  EXPECT_EQ(output(e, ":tune sizes"),
            "error: sizes needs SYMBOL=N[,N…] after it; usage: :tune [FUNC|all|check] [trials=N] "
            "[time=SECONDS] [workers=N] [check=RUNS] [sizes SYMBOL=N[,N…] …]\n");
  EXPECT_EQ(output(e, ":tune fuse_dense sizes batch=1"),
            "error: a function's name is one size's: :tune all sizes … tunes each size's "
            "functions, or :run a size and :tune fuse_dense\n");
  EXPECT_EQ(output(e, ":tune all sizes seq=4"),
            "error: sizes: 'seq=4' is not SYMBOL=N[,N…] for a size symbol of the graph (batch)\n");
  Engine fixed;
  run(fixed, "x = Variable(\"x\", shape=(8, 64))\ny = dense(x, units=64)\n:graph y");
  run(fixed, ":set tuning " + log.string() + "\n:build opt_level=3");
  EXPECT_EQ(output(fixed, ":tune all sizes batch=2"),
            "error: sizes picks a dynamic build's sizes to tune; the current step has none\n");
  ::unsetenv("LOUPE_TUNE_WORKER");
}

} // namespace
} // namespace loupe::test
