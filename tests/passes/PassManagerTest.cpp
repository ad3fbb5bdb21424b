// PassManagerTest: Relay's pass-running rules (relay-spec §1.2-1.6) — instrument hook order,
// should_run vetoes, required and disabled passes in a Sequential, nested events, timing.
#include "TestUtil.h"

#include "core/Error.h"
#include "passes/Instruments.h"

using namespace loupe;
using namespace loupe::test;

namespace {

/// Records every hook call as "name:hook:pass".
class Recorder : public PassInstrument {
public:
  Recorder(std::string n, std::vector<std::string> &log, bool allow = true)
      : name_(std::move(n)), log_(log), allow_(allow) {}
  std::string name() const override { return name_; }
  bool shouldRun(const Graph &, const PassInfo &p) override {
    log_.push_back(name_ + ":should:" + p.name);
    return allow_;
  }
  void beforePass(const Graph &, const PassInfo &p) override {
    log_.push_back(name_ + ":before:" + p.name);
  }
  void afterPass(const Graph &, const Graph &, const PassInfo &p) override {
    log_.push_back(name_ + ":after:" + p.name);
  }

private:
  std::string name_;
  std::vector<std::string> &log_;
  bool allow_;
};

Graph small() {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(2,2), dtype=0)\ny = relu(x)\n:graph y");
  return e.current()->graph;
}

using Log = std::vector<std::string>;

} // namespace

TEST(PassManager, HooksRunInListOrderAroundEachPass) {
  Log log;
  PassContext ctx;
  ctx.instruments = {std::make_shared<Recorder>("a", log), std::make_shared<Recorder>("b", log)};
  applyPasses(small(), {"InferShape"}, ctx);
  EXPECT_EQ(log, (Log{"a:should:InferShape", "b:should:InferShape", "a:before:InferShape",
                      "b:before:InferShape", "a:after:InferShape", "b:after:InferShape"}));
}

TEST(PassManager, ShouldRunIsAndedWithoutShortCircuit) {
  Log log;
  PassContext ctx;
  ctx.instruments = {std::make_shared<Recorder>("no", log, false),
                     std::make_shared<Recorder>("yes", log)};
  Graph g = small();
  Graph out = applyPasses(g, {"InferShape"}, ctx);
  EXPECT_EQ(log, (Log{"no:should:InferShape", "yes:should:InferShape"}));
  EXPECT_EQ(out.attr("shape"), nullptr); // skipped: returned unchanged, no before/after
}

TEST(PassManager, RequiredPassesBypassShouldRun) {
  Log log;
  PassContext ctx;
  ctx.requiredPass = {"InferShape"};
  ctx.instruments = {std::make_shared<Recorder>("no", log, false)};
  Graph out = applyPasses(small(), {"InferShape"}, ctx);
  EXPECT_EQ(log, (Log{"no:before:InferShape", "no:after:InferShape"}));
  EXPECT_NE(out.attr("shape"), nullptr);
}

TEST(PassManager, NestedPassesNestTheirEvents) {
  Log log;
  PassContext ctx;
  ctx.instruments = {std::make_shared<Recorder>("r", log)};
  Graph g = applyPasses(small(), {"InferShape", "InferType", "GraphFusePartition"});
  log.clear();
  applyPasses(g, {"GraphFuseCompile"}, ctx);
  EXPECT_EQ(log,
            (Log{"r:should:GraphFuseCompile", "r:before:GraphFuseCompile", "r:should:PlanMemory",
                 "r:before:PlanMemory", "r:after:PlanMemory", "r:after:GraphFuseCompile"}));
}

TEST(PassManager, SequentialFiltersByDisabledRequiredAndLevel) {
  // A test pass at level 3 that requires InferShape, to see every rule.
  PassInfo hi{.name = "HighLevel",
              .summary = "test",
              .optLevel = 3,
              .provides = {"visited"},
              .run =
                  [](const Graph &g, const PassContext &) {
                    Graph out = g;
                    out.attrs["visited"] = GraphAttr::integer(1);
                    return out;
                  },
              .required = {"InferShape"}};
  Log log;
  PassContext ctx;
  ctx.instruments = {std::make_shared<Recorder>("r", log)};
  std::vector<PipelineEntry> seq{{&hi, {}}};
  // Level 2 < 3: skipped silently — only the Sequential's own events; its required pass does
  // not run either.
  Graph out = runSequential(small(), seq, ctx);
  EXPECT_EQ(log, (Log{"r:should:sequential", "r:before:sequential", "r:after:sequential"}));
  EXPECT_EQ(out.attr("visited"), nullptr);
  log.clear();
  // Required: runs despite the level, with its own required pass first (every time).
  ctx.requiredPass = {"HighLevel"};
  out = runSequential(small(), {{&hi, {}}, {&hi, {}}}, ctx);
  EXPECT_EQ(log, (Log{"r:should:sequential", "r:before:sequential", "r:should:InferShape",
                      "r:before:InferShape", "r:after:InferShape", "r:before:HighLevel",
                      "r:after:HighLevel", "r:should:InferShape", "r:before:InferShape",
                      "r:after:InferShape", "r:before:HighLevel", "r:after:HighLevel",
                      "r:after:sequential"}));
  // Disabled wins over required.
  log.clear();
  ctx.disabledPass = {"HighLevel"};
  out = runSequential(small(), seq, ctx);
  EXPECT_EQ(log, (Log{"r:should:sequential", "r:before:sequential", "r:after:sequential"}));
  std::string why;
  EXPECT_FALSE(passEnabled(hi, ctx, &why));
  EXPECT_EQ(why, "HighLevel is in disabled_pass (disabled wins)");
}

TEST(PassManager, PipelineOptionsReachThePass) {
  Graph g = applyPasses(small(), {"InferShape", "InferType"});
  auto entries = parsePipeline("GraphFusePartition(fusion_rules=Z)");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].options.at("fusion_rules"), "Z");
  EXPECT_THROW(runSequential(g, entries, PassContext{}), Error); // Z is not a rule set
  EXPECT_THROW(parsePipeline("GraphFusePartition(fusion_rules=)"), Error);
  EXPECT_THROW(parsePipeline("GraphFusePartition(fusion_rules=B"), Error);
}

TEST(PassManager, TimingTreeNestsChildren) {
  auto timing = std::make_shared<TimingInstrument>();
  PassContext ctx;
  ctx.instruments = {timing};
  Graph g = applyPasses(small(), {"InferShape", "InferType", "GraphFusePartition"});
  applyPasses(g, {"GraphFuseCompile"}, ctx);
  std::string tree = timing->render();
  // Times vary; the shape of the tree does not.
  ASSERT_EQ(std::count(tree.begin(), tree.end(), '\n'), 2) << tree;
  EXPECT_EQ(tree.rfind("GraphFuseCompile: ", 0), 0u) << tree;
  EXPECT_NE(tree.find("\n\tPlanMemory: "), std::string::npos) << tree;
  EXPECT_NE(tree.find("(100.00%; 100.00%)"), std::string::npos) << tree;
  EXPECT_EQ(timing->render(), ""); // rendering clears
}

TEST(PassManager, TraceSkipsNestedPasses) {
  auto sink = std::make_shared<std::ostream *>(nullptr);
  std::ostringstream out;
  *sink = &out;
  PassContext ctx;
  ctx.instruments = {std::make_shared<TraceInstrument>(sink)};
  Graph g = applyPasses(small(), {"InferShape", "InferType", "GraphFusePartition"});
  applyPasses(g, {"GraphFuseCompile"}, ctx);
  EXPECT_EQ(out.str(), "Applied passes GraphFuseCompile\n"
                       "Graph(%x) {\n"
                       "  %1 = tvm_op(%x, num_outputs='1', num_inputs='1', flatten_data='1', "
                       "func_name='fuse_relu')\n"
                       "  ret %1\n"
                       "}\n"
                       "graph_attr_keys = [storage_id, dtype, dltype, shape, module]\n\n");
}

// A plugin that goes wrong leaves the registry as it was: another ABI version, an entry point
// that throws (after appending a pass), a file that is not a shared library. A plugin pass that
// throws std::runtime_error fails with an Error naming it and its plugin.
TEST(PassPlugins, FailedLoadsRegisterNothing) {
  registerAllPasses();
  std::string dir = std::string(LOUPE_REPL_BINARY);
  dir = dir.substr(0, dir.rfind("/repl/")) + "/plugins/";
  std::vector<std::string> before = PassRegistry::get().names();
  for (const char *bad : {"WrongAbi.so", "ThrowingEntry.so", "NoEntryPoint.so"})
    EXPECT_THROW(loadPassPlugin(dir + bad, bad), Error) << bad;
  EXPECT_THROW(loadPassPlugin(std::string(LOUPE_SOURCE_DIR) + "/README.md", "README.md"), Error);
  EXPECT_EQ(PassRegistry::get().names(), before);
  if (!PassRegistry::get().find("Throwing")) {
    EXPECT_EQ(loadPassPlugin(dir + "ThrowingPass.so", "ThrowingPass.so"),
              std::vector<std::string>{"Throwing"});
  }
  Graph g;
  try {
    runPass(g, requirePass("Throwing"), PassContext{});
    ADD_FAILURE() << "the pass did not throw";
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()),
              "pass Throwing (plugin ThrowingPass.so) failed: the plugin's pass gave up");
  }
}
