// SizeRangesTest: a dynamic build's tuned points across sizes — the point a build applies (the
// log's choice), each size's winner, the nearest size tuned, the spans of sizes each serves, the
// cross-measurement, and a variant never tuned built at its nearest size's point.
#include "TestUtil.h"

#include "backend/BuiltLibrary.h"
#include "backend/DynamicBuild.h"
#include "backend/Runtime.h"
#include "backend/tune/ApplyBest.h"
#include "backend/tune/SizeRanges.h"
#include "repl/Engine.h"
#include "view/TuningView.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace loupe::test {
namespace {

using backend::Config;
using backend::Measurement;
using backend::SizeWinner;
using backend::Task;
using backend::TuningLog;
using backend::TuningRecord;

namespace fs = std::filesystem;

const std::string kTarget = "x86-64 64B x32 l2=1024K llvm-19 test";

// An ok record of `task`, measured in `ms`, as the log would hold it (its line set as read).
TuningRecord rec(const std::string &task, const Config &c, double ms, bool rule = false,
                 const std::string &family = "", const std::string &sizes = "") {
  TuningRecord r;
  r.task = task;
  r.function = "fuse_dense";
  r.target = kTarget;
  r.config = c;
  r.ms = ms;
  r.rule = rule;
  r.family = family;
  r.sizes = sizes;
  r.trial = 1;
  return r;
}

TuningLog logOf(std::vector<TuningRecord> records) {
  TuningLog log;
  log.file = "log.jsonl";
  for (size_t i = 0; i < records.size(); ++i)
    records[i].line = i + 1;
  log.records = std::move(records);
  return log;
}

const std::string kA(16, 'a'), kB(16, 'b'), kC(16, 'c');
const Config kRule = {{"n", 4}}, kP = {{"n", 8}}, kQ = {{"n", 2}};

TEST(TuningRecord, KeepsTheFamilySizesAndRuleFlag) {
  TuningRecord r = rec(kA, kP, 1.5, true, kB, "batch=1, seq=64");
  TuningRecord back = backend::recordFromJson(backend::recordToJson(r));
  EXPECT_TRUE(back.rule);
  EXPECT_EQ(back.family, kB);
  EXPECT_EQ(back.sizes, "batch=1, seq=64");
  // A record of a fixed build says none of them.
  std::string plain = backend::recordToJson(rec(kA, kP, 1.5));
  EXPECT_EQ(plain.find("family"), std::string::npos);
  EXPECT_EQ(plain.find("\"rule\""), std::string::npos);
  try {
    backend::recordFromJson(R"({"v":1,"task":")" + kA + R"(","target":"t","status":"ok","ms":1,)" +
                            R"("config":{},"family":")" + kB + R"("})");
    ADD_FAILURE();
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()),
              "a record of family bbbbbbbbbbbbbbbb needs the sizes it was measured at");
  }
}

TEST(PointChoice, ChoosesTheFastestPointThatBeatsTheRuleClearly) {
  auto choose = [](const TuningLog &log) {
    return backend::choosePoint(log, "log.jsonl", kA, kTarget, 1, kRule);
  };
  backend::PointChoice none = choose(logOf({rec(kB, kP, 1)}));
  EXPECT_TRUE(none.unmeasured);
  EXPECT_EQ(none.source, "the rule (no record of this task in log.jsonl)");
  backend::PointChoice won = choose(logOf({rec(kA, kRule, 1.0), rec(kA, kP, 0.5)}));
  ASSERT_TRUE(won.point);
  EXPECT_EQ(*won.point, kP);
  EXPECT_EQ(won.source, "record log.jsonl:2 (trial 1; 2.00x the rule's speed when measured)");
  backend::PointChoice noise = choose(logOf({rec(kA, kRule, 1.0), rec(kA, kP, 0.98)}));
  EXPECT_FALSE(noise.point);
  EXPECT_EQ(noise.source,
            "the rule (the best record, log.jsonl:2, was only 1.02x the rule's speed)");
  // Confirmation records decide where there are any: the lucky 0.4 ms is not one.
  TuningRecord lucky = rec(kA, kQ, 0.4), again = rec(kA, kP, 0.6), ruleAgain = rec(kA, kRule, 1);
  again.confirm = ruleAgain.confirm = true;
  backend::PointChoice confirmed = choose(logOf({rec(kA, kRule, 1.0), lucky, ruleAgain, again}));
  ASSERT_TRUE(confirmed.point);
  EXPECT_EQ(*confirmed.point, kP);
}

// Family kC tuned at seq=32 (kP won, 2x) and at seq=128 (the rule won), with records the reader
// must pass over: sizes that do not read, a size whose rule was never measured.
TuningLog familyLog() {
  return logOf({rec(kA, kRule, 1.0, true, kC, "seq=32"), rec(kA, kP, 0.5, false, kC, "seq=32"),
                rec(kB, kRule, 2.0, true, kC, "seq=128"), rec(kB, kP, 2.5, false, kC, "seq=128"),
                rec(kB, kQ, 9.0, true, kC, "seq=big"), rec(kB, kQ, 9.0, false, kC, "seq=512"),
                rec(std::string(16, 'e'), kP, 0.1, false, "dddddddddddddddd", "seq=32")});
}

TEST(PointChoice, EachSizeTunedHasItsWinner) {
  TuningLog log = familyLog();
  std::vector<SizeWinner> ws = backend::sizeWinners(log, "log.jsonl", kC, kTarget, 1);
  ASSERT_EQ(ws.size(), 2u);
  EXPECT_EQ(ws[0].sizes, (SymBindings{{"seq", 32}}));
  EXPECT_EQ(ws[0].task, kA);
  EXPECT_EQ(ws[0].rule, kRule);
  ASSERT_TRUE(ws[0].choice.point);
  EXPECT_EQ(*ws[0].choice.point, kP);
  EXPECT_EQ(ws[1].sizes, (SymBindings{{"seq", 128}}));
  EXPECT_FALSE(ws[1].choice.point);
  EXPECT_EQ(ws[1].choice.source, "the rule (the best point measured, record log.jsonl:3)");
  EXPECT_TRUE(backend::sizeWinners(log, "log.jsonl", kB, kTarget, 1).empty());
}

TEST(PointChoice, TheNearestSizeIsByRatioATieToTheLarger) {
  std::vector<SizeWinner> ws(2);
  ws[0].sizes = {{"seq", 32}};
  ws[1].sizes = {{"seq", 128}};
  auto nearest = [&](int64_t seq) { return backend::nearestSize(ws, {{"seq", seq}})->sizes; };
  EXPECT_EQ(nearest(1), ws[0].sizes);
  EXPECT_EQ(nearest(63), ws[0].sizes); // 63/32 = 1.97 < 128/63 = 2.03
  EXPECT_EQ(nearest(64), ws[1].sizes); // twice each: the larger
  EXPECT_EQ(nearest(4096), ws[1].sizes);
  EXPECT_EQ(backend::nearestSize(ws, {{"batch", 2}}), nullptr);
  EXPECT_EQ(backend::nearestSize(ws, {{"batch", 2}, {"seq", 32}}), nullptr);
  EXPECT_EQ(backend::nearestSize({}, {{"seq", 32}}), nullptr);
  // Two symbols: the ratios add (batch 4 → 1 is as far as seq 64 → 256).
  std::vector<SizeWinner> two(2);
  two[0].sizes = {{"batch", 1}, {"seq", 64}};
  two[1].sizes = {{"batch", 4}, {"seq", 256}};
  EXPECT_EQ(backend::nearestSize(two, {{"batch", 1}, {"seq", 200}})->sizes, two[0].sizes);
  EXPECT_EQ(backend::nearestSize(two, {{"batch", 2}, {"seq", 128}})->sizes, two[1].sizes);
}

TEST(PointChoice, ASizeNeverTunedTakesItsNearestSizesWinner) {
  TuningLog log = familyLog();
  backend::PointChoice at48 =
      backend::nearestPoint(log, "log.jsonl", kC, {{"seq", 48}}, kTarget, 1);
  ASSERT_TRUE(at48.point);
  EXPECT_EQ(*at48.point, kP);
  EXPECT_EQ(at48.source, "the point that won at seq=32, the nearest size tuned (of seq=32; "
                         "seq=128): record log.jsonl:2 (trial 1; 2.00x the rule's speed when "
                         "measured)");
  backend::PointChoice at96 =
      backend::nearestPoint(log, "log.jsonl", kC, {{"seq", 96}}, kTarget, 1);
  EXPECT_FALSE(at96.point);
  EXPECT_FALSE(at96.unmeasured);
  EXPECT_EQ(at96.source, "the rule (the rule won at seq=128, the nearest size tuned (of seq=32; "
                         "seq=128): the best point measured, record log.jsonl:3)");
  backend::PointChoice other =
      backend::nearestPoint(log, "log.jsonl", kB, {{"seq", 96}}, kTarget, 1);
  EXPECT_TRUE(other.unmeasured);
  EXPECT_EQ(other.source, "the rule (no record of this task in log.jsonl, nor of its function at "
                          "another size)");
}

SizeWinner winnerAt(int64_t seq, std::optional<Config> point) {
  SizeWinner w;
  w.sizes = {{"seq", seq}};
  w.choice.point = std::move(point);
  return w;
}

TEST(SizeRanges, EachPointServesTheSizesNearestItsWinners) {
  std::vector<SizeWinner> ws = {winnerAt(64, kP), winnerAt(16, kP), winnerAt(256, std::nullopt),
                                winnerAt(1024, kQ)};
  EXPECT_EQ(backend::varyingSymbol(ws), "seq");
  std::vector<backend::SizeSpan> spans = backend::sizeSpans(ws);
  ASSERT_EQ(spans.size(), 3u);
  // 16 and 64 build the same point: one span; 128 is as far from 64 as from 256.
  EXPECT_EQ(spans[0].winner->sizes.at("seq"), 16);
  EXPECT_EQ(spans[0].from, 1);
  EXPECT_EQ(spans[0].to, 128);
  EXPECT_FALSE(spans[1].winner->choice.point);
  EXPECT_EQ(spans[1].from, 128);
  EXPECT_EQ(spans[1].to, 512);
  EXPECT_EQ(spans[2].from, 512);
  EXPECT_EQ(spans[2].to, 0);
  // Each span's ends are what nearestSize picks.
  for (const backend::SizeSpan &s : spans)
    for (int64_t seq : {s.from, s.to > 0 ? s.to - 1 : int64_t{5000}})
      EXPECT_EQ(backend::nearestSize(ws, {{"seq", seq}})->choice.point, s.winner->choice.point)
          << seq;
  std::vector<SizeWinner> two = {winnerAt(64, kP), winnerAt(16, kP)};
  two[1].sizes["batch"] = 2;
  two[0].sizes["batch"] = 1;
  EXPECT_EQ(backend::varyingSymbol(two), "");
  EXPECT_TRUE(backend::sizeSpans(two).empty());
  EXPECT_EQ(backend::varyingSymbol({winnerAt(64, kP)}), "");
}

// The table :tune … sizes prints: a column per size any row has ("-" where one has not), the
// winners by letter, each row's spans, the points' knobs.
TEST(SizeRanges, TheTableHasAColumnPerSizeAndALetterPerPoint) {
  std::vector<backend::SizeRow> rows = {
      {"fuse_dense", {winnerAt(64, kP), winnerAt(256, std::nullopt)}},
      {"fuse_layer_norm", {winnerAt(64, kQ), winnerAt(128, kP), winnerAt(256, kQ)}}};
  EXPECT_EQ(
      backend::sizesTable(rows),
      "function                                    seq=64   seq=128  seq=256  sizes each "
      "point serves\n"
      "fuse_dense                                  A        -        rule     A for seq < "
      "128; rule for seq ≥ 128\n"
      "fuse_layer_norm                             B        A        B        B for seq < 91; "
      "A for 91 ≤ seq < 182; B for seq ≥ 182\n"
      "  A: n=8\n"
      "  B: n=2\n");
  // Past Z the letters take a number.
  EXPECT_EQ(backend::PointLetters::letter(0), "A");
  EXPECT_EQ(backend::PointLetters::letter(25), "Z");
  EXPECT_EQ(backend::PointLetters::letter(26), "A1");
  EXPECT_EQ(backend::PointLetters::letter(53), "B2");
}

fs::path scratch(const std::string &name) { return freshFolder("loupe-size-ranges", name); }

// A measurement of `ms` of point `c` of task `t`, as the tuner logs it (at any thread count).
TuningRecord measured(const Task &t, const Config &c, double ms, const std::string &target) {
  Measurement m;
  m.ms = ms;
  TuningRecord r = backend::measurementRecord(t, c, m, target, 1);
  r.threads = 0;
  return r;
}

// A dynamic dense and its tasks at batch 4 and 64, with a point both sizes' spaces hold.
struct DenseSizes {
  Engine e;
  Graph dynamicStep;
  std::vector<backend::SizeTasks> sizes;
  std::string target;
  Config shared;

  explicit DenseSizes(const fs::path &log) {
    run(e, "x = Variable(\"x\", shape=\"(batch, 64)\")\ny = dense(x, units=64)\n:graph y");
    run(e, ":set tuning " + log.string() + "\n:build opt_level=3");
    dynamicStep = e.current()->graph;
    for (int64_t batch : {4, 64}) {
      Graph v = backend::variantOf(dynamicStep, {{"batch", batch}});
      sizes.push_back({{{"batch", batch}}, backend::extractTasks(v)});
      target = backend::targetDescription(
          backend::builtLibrary(v)->lowered.at(sizes.back().tasks.at(0).name).schedule->cpu);
    }
    const Task &small = sizes[0].tasks.at(0), &large = sizes[1].tasks.at(0);
    for (uint64_t i = 0; i < small.space.size() && shared.empty(); ++i) {
      Config c = small.space.at(i);
      if (c != small.rule && c != large.rule && small.space.contains(c) && large.space.contains(c))
        shared = c;
    }
  }

  // The log of the shared point winning at batch 4 (2x its rule) and of batch 64 measuring only
  // its rule.
  void logSharedWinsAtFour(const fs::path &file) const {
    const Task &small = sizes[0].tasks.at(0), &large = sizes[1].tasks.at(0);
    TuningLog::append(file, {measured(small, small.rule, 1.0, target),
                             measured(small, shared, 0.5, target),
                             measured(large, large.rule, 4.0, target)});
  }
};

TEST(SizeRanges, EachSizesWinnerIsMeasuredAtTheOthersInTurns) {
  fs::path file = scratch("cross") / "log.jsonl";
  DenseSizes d(file);
  ASSERT_FALSE(d.shared.empty());
  const Task &small = d.sizes[0].tasks.at(0), &large = d.sizes[1].tasks.at(0);
  EXPECT_EQ(small.sizes, "batch=4");
  EXPECT_EQ(small.family, large.family); // the same node at two sizes
  EXPECT_NE(small.key, large.key);
  // The shared point won at batch 4; batch 64 measured only its rule.
  d.logSharedWinsAtFour(file);
  // Measured here, the shared point is faster at every size.
  std::vector<std::string> measured;
  auto fake = [&](const Task &t, const std::vector<Config> &configs) {
    std::vector<Measurement> out;
    for (const Config &c : configs) {
      measured.push_back(t.sizes + (c == d.shared ? " shared" : c == t.rule ? " rule" : " other"));
      out.emplace_back();
      out.back().ms = c == d.shared ? 3.0 : 4.0;
    }
    return out;
  };
  EXPECT_EQ(backend::crossMeasure(d.sizes, TuningLog::read(file, nullptr), file, d.target, fake),
            4);
  EXPECT_EQ(measured, (std::vector<std::string>{"batch=64 rule", "batch=64 shared", "batch=64 rule",
                                                "batch=64 shared"}));
  TuningLog after = TuningLog::read(file, nullptr);
  ASSERT_EQ(after.records.size(), 7u);
  for (size_t i = 3; i < 7; ++i) {
    EXPECT_TRUE(after.records[i].confirm);
    EXPECT_EQ(after.records[i].task, large.key);
    EXPECT_EQ(after.records[i].family, large.family);
    EXPECT_EQ(after.records[i].sizes, "batch=64");
    EXPECT_EQ(after.records[i].rule, i % 2 == 1);
    EXPECT_EQ(after.records[i].ruleMs, 4.0);
    EXPECT_EQ(after.records[i].trial, static_cast<int>(i - 1));
  }
  std::vector<SizeWinner> ws =
      backend::sizeWinners(after, file.string(), large.family, d.target, backend::numThreads());
  ASSERT_EQ(ws.size(), 2u);
  ASSERT_TRUE(ws[1].choice.point);
  EXPECT_EQ(*ws[1].choice.point, d.shared); // 3 ms against the rule's 4, in turns
  // Measured again, nothing is new: each size's winner is the other's.
  measured.clear();
  EXPECT_EQ(backend::crossMeasure(d.sizes, after, file, d.target, fake), 0);
}

TEST(SizeRanges, ASizeNeverTunedIsBuiltAtItsNearestSizesPoint) {
  fs::path file = scratch("nearest") / "log.jsonl";
  DenseSizes d(file);
  ASSERT_FALSE(d.shared.empty());
  d.logSharedWinsAtFour(file);
  // batch 8 is nearer 4; batch 16 is as far from 4 as from 64, so it takes 64's rule.
  run(d.e, ":run batch=8 check=off");
  std::string fn = d.e.current()->graph.index().nodes.back().node->parsed.getStr("func_name");
  std::string at8 = output(d.e, ":schedule " + fn);
  EXPECT_NE(at8.find("tuned: the point that won at batch=4, the nearest size tuned (of batch=4; "
                     "batch=64): record " +
                     file.string() + ":2 (trial 1; 2.00x the rule's speed when measured)\n"),
            std::string::npos)
      << at8;
  const auto &schedule = *backend::builtLibrary(d.e.current()->graph)->lowered.at(fn).schedule;
  ASSERT_TRUE(schedule.config);
  EXPECT_EQ(*schedule.config, d.shared);
  run(d.e, ":run batch=16 check=off");
  fn = d.e.current()->graph.index().nodes.back().node->parsed.getStr("func_name");
  EXPECT_NE(output(d.e, ":schedule " + fn)
                .find("tuned: the rule (the rule won at batch=64, the nearest size tuned (of "
                      "batch=4; batch=64): the best point measured, record " +
                      file.string() + ":3)\n"),
            std::string::npos);
}

// The Tuning panel's model of a size never tuned: its function's sizes tuned, each winner.
TEST(SizeRanges, TheTuningViewOfAVariantListsTheSizesItsFunctionWasTunedAt) {
  fs::path file = scratch("view") / "log.jsonl";
  DenseSizes d(file);
  ASSERT_FALSE(d.shared.empty());
  d.logSharedWinsAtFour(file);
  std::vector<Task> tasks =
      backend::extractTasks(backend::variantOf(d.dynamicStep, {{"batch", 8}}));
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].family, d.sizes[0].tasks.at(0).family);
  gui::TuningView v = gui::tuningView(tasks, d.target, file);
  ASSERT_EQ(v.tasks.size(), 1u);
  EXPECT_EQ(v.tasks[0].trials, 0); // this size itself was never measured: batch 4's point shown
  EXPECT_EQ(v.tasks[0].best, d.shared);
  EXPECT_EQ(v.tasks[0].bestFrom, "batch=4");
  const std::vector<SizeWinner> &ws = v.tasks[0].sizes;
  ASSERT_EQ(ws.size(), 2u);
  EXPECT_EQ(ws[0].sizes, (SymBindings{{"batch", 4}}));
  ASSERT_TRUE(ws[0].choice.point);
  EXPECT_EQ(*ws[0].choice.point, d.shared);
  EXPECT_EQ(ws[1].sizes, (SymBindings{{"batch", 64}}));
  EXPECT_FALSE(ws[1].choice.point);
  // A fixed build's task has no family, and no sizes.
  Engine fixed;
  run(fixed, "x = Variable(\"x\", shape=(8, 64))\ny = dense(x, units=64)\n:graph y");
  run(fixed, ":build opt_level=3");
  std::vector<Task> fixedTasks = backend::extractTasks(fixed.current()->graph);
  ASSERT_EQ(fixedTasks.size(), 1u);
  EXPECT_EQ(fixedTasks[0].family, "");
  EXPECT_TRUE(gui::tuningView(fixedTasks, d.target, file).tasks[0].sizes.empty());
}

TEST(SizeRanges, AWinnerThatIsNoPointOfThisSizeIsNotBuilt) {
  fs::path file = scratch("unfit") / "log.jsonl";
  DenseSizes d(file);
  ASSERT_FALSE(d.shared.empty());
  const Task &small = d.sizes[0].tasks.at(0);
  Config unfit = d.shared;
  unfit.begin()->second = 999;
  TuningLog::append(
      file, {measured(small, small.rule, 1.0, d.target), measured(small, unfit, 0.5, d.target)});
  run(d.e, ":run batch=8 check=off");
  std::string fn = d.e.current()->graph.index().nodes.back().node->parsed.getStr("func_name");
  EXPECT_NE(output(d.e, ":schedule " + fn)
                .find("tuned: the rule (the point that won at batch=4, the nearest size tuned (of "
                      "batch=4): record " +
                      file.string() +
                      ":2 (trial 1; 2.00x the rule's speed when measured); that point is not one "
                      "of this size's)\n"),
            std::string::npos);
}

} // namespace
} // namespace loupe::test
