// EngineersLoopTest: the steps from a loaded model to its slowest kernel — :inputs, :outputs,
// :vars after :load, the errors that name the inputs, and :groups and :why on a built step.
#include "TestUtil.h"

#include "core/Npy.h"
#include "frontend/onnx/OnnxImport.h"
#include "passes/Provenance.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <unistd.h>

namespace loupe::test {
namespace {

const std::string kBlock =
    std::string(LOUPE_SOURCE_DIR) + "/tests/onnx/data/blocks/test_mobilenetv3_block/model.onnx";

const std::string kData = std::string(LOUPE_SOURCE_DIR) +
                          "/tests/onnx/data/blocks/test_mobilenetv3_block/test_data_set_0";

// A fresh folder under the system's temporary one.
std::filesystem::path scratch(const std::string &name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("loupe-loop-" + name + "-" + std::to_string(::getpid())); // per process
  std::filesystem::remove_all(dir);
  return dir;
}

Engine loaded() {
  Engine e;
  run(e, ":load " + kBlock);
  return e;
}

TEST(EngineersLoop, InputsListDataApartFromParams) {
  Engine e = loaded();
  std::string in = output(e, ":inputs");
  EXPECT_EQ(in.substr(0, in.find("10 params")), "1 data input:\n"
                                                "name  shape               dtype     layout\n"
                                                "x     (1, 16, 10, 10)     float32   -\n");
  EXPECT_NE(in.find("10 params (bound; :run and :profile use their values):\n"), std::string::npos);
  EXPECT_NE(in.find("\nexpand.weight     (48, 16, 1, 1)      float32   -\n"), std::string::npos)
      << in;
  EXPECT_EQ(output(e, ":outputs"), "1 output:\n"
                                   "name    shape               dtype     layout\n"
                                   "add_12  (1, 16, 10, 10)     float32   -\n");
  EXPECT_EQ(output(e, ":vars"),
            "no symbols: step 0 (load " + kBlock +
                ") has 1 data input and 10 params; :inputs lists them, :outputs its outputs\n");
  EXPECT_EQ(output(e, ":inputs x"), "error: usage: :inputs\n");
}

TEST(EngineersLoop, InputsOfAGraphWithoutParams) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(2, 3))\ny = relu(x)\n:graph y");
  EXPECT_EQ(output(e, ":inputs"), "1 data input:\n"
                                  "name  shape               dtype     layout\n"
                                  "x     (2, 3)              float32   -\n"
                                  "0 params (bound; :run and :profile use their values):\n");
  // Defined symbols are listed as before, without the note.
  EXPECT_EQ(output(e, ":vars").find("no symbols"), std::string::npos);
}

TEST(EngineersLoop, NoInputErrorsNameTheDataInputs) {
  Engine e = loaded();
  EXPECT_EQ(output(e, ":build param input=zeros"),
            "error: build: the graph has no input 'input' to bind a param to; its data inputs: x "
            "(1, 16, 10, 10) (:inputs lists all)\n");
  run(e, ":build opt_level=3");
  EXPECT_EQ(output(e, ":run input=zeros"),
            "error: run: the graph has no input 'input'; its data inputs: x (1, 16, 10, 10) "
            "(:inputs lists all)\n");
}

// On the built step, :groups and :why answer for the partition the build made, as they do on
// the partition step of the same graph: the same groups, the same reasons.
TEST(EngineersLoop, GroupsAndWhyOnTheBuiltStepAgreeWithThePartitionStep) {
  const char *program = "x = Variable(\"x\", shape=(1, 3, 8, 8))\n"
                        "w = Variable(\"w\", shape=(4, 3, 3, 3))\n"
                        "c = conv2d(x, w, channels=4, kernel_size=(3, 3), padding=(1, 1), "
                        "use_bias=False)\n"
                        "r = relu(c)\n"
                        "y = r + exp(r)\n"
                        ":graph y";
  Engine e;
  run(e, program);
  run(e, ":build opt_level=2");
  auto afterHeader = [](const std::string &s) { return s.substr(s.find('\n') + 1); };
  std::string builtGroups = output(e, ":groups");
  std::string builtFused = output(e, ":why conv2d0 relu0");
  std::string builtCut = output(e, ":why relu0 exp0");
  EXPECT_EQ(builtGroups.substr(0, builtGroups.find('\n') + 1),
            "(the partition this step's functions were made from: opt_level 2, rules A)\n");
  EXPECT_EQ(builtFused, "(rules A, opt_level 2; the partition this step's functions were made "
                        "from)\nconv2d0 -> relu0: fused, in group relu0\n  " +
                            afterHeader(afterHeader(builtFused)).substr(2));
  // The partition step in a session of its own (whose function names are not taken yet).
  Engine p;
  run(p, program);
  run(p, ":set opt_level 2");
  run(p, ":apply InferShape InferType GraphFusePartition");
  EXPECT_EQ(afterHeader(builtGroups), output(p, ":groups"));
  EXPECT_EQ(afterHeader(builtFused), afterHeader(output(p, ":why conv2d0 relu0")));
  EXPECT_EQ(afterHeader(builtCut), afterHeader(output(p, ":why relu0 exp0")));
}

// At opt_level 3 (layout passes, params folded) each group :groups lists on the built step is a
// tvm_op of its deploy graph: the node named like the group's root calls the group's function.
TEST(EngineersLoop, BuiltGroupsAreTheDeployGraphsFunctions) {
  Engine e = loaded();
  run(e, ":set target llvm -mcpu=znver3\n:build opt_level=3"); // sized the same on any host
  std::string groups = output(e, ":groups");
  const Graph &g = e.current()->graph;
  const IndexedGraph &idx = g.index();
  size_t checked = 0;
  std::istringstream lines(groups);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with("group "))
      continue;
    std::string root = line.substr(6, line.find(':') - 6);
    std::string fn = line.substr(line.find("; function ") + 11);
    int nid = idx.findByName(root);
    ASSERT_GE(nid, 0) << root;
    EXPECT_EQ(idx.nodes[nid].node->parsed.getStr("func_name"), fn) << line;
    ++checked;
  }
  EXPECT_EQ(checked, 10u) << groups; // the build's 10 functions
}

// :run's options: save= writes each output under its name before the build, compare= measures
// against a file (here PyTorch's output), top= lists the largest values, check=off skips the
// reference interpreter and says so.
TEST(EngineersLoop, RunSavesComparesAndListsTopValues) {
  Engine e = loaded();
  run(e, ":build opt_level=3");
  auto dir = scratch("save");
  std::string in = kData + "/input_0.pb", expected = kData + "/output_0.pb";
  std::string said =
      output(e, ":run x=" + in + " save=" + dir.string() + " compare=" + expected + " top=3");
  EXPECT_NE(said.find("saved 1 output in " + dir.string() + ": add_12.npy\n"), std::string::npos)
      << said;
  Tensor saved = readNpy((dir / "add_12.npy").string());
  Tensor torch = frontend::readTensorProto(expected);
  ASSERT_EQ(saved.shape, torch.shape);
  double worst = 0;
  for (size_t i = 0; i < saved.data.size(); ++i)
    worst = std::max(worst, std::fabs(saved.data[i] - torch.data[i]));
  EXPECT_LT(worst, 1e-5);
  // The compare line states that worst difference, as the reference line does (%.1e).
  char line[64];
  std::snprintf(line, sizeof line, ", max abs error %.1e,", worst);
  EXPECT_NE(said.find(line), std::string::npos) << said;
  // The three largest values of the saved output, found here by sorting.
  std::vector<size_t> order(saved.data.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return saved.data[a] > saved.data[b]; });
  std::string top = "  top 3: ";
  for (size_t i = 0; i < 3; ++i) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s[%zu] %.6g", i ? ", " : "", order[i], saved.data[order[i]]);
    top += buf;
  }
  EXPECT_NE(said.find(top + "\n"), std::string::npos) << said << top;
  // The saved folder compares with itself exactly.
  said = output(e, ":run x=" + in + " compare=" + dir.string() + " check=off");
  EXPECT_NE(said.find("vs " + (dir / "add_12.npy").string() +
                      ": 1600 of 1600 within atol 1e-08 + rtol 1e-05·|expected| (100%), max abs "
                      "error 0.0e+00, max rel error 0.0e+00 where |expected| > atol\n"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("  vs reference interpreter: not checked (check=off)\n"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(EngineersLoop, RunOptionErrorsComeBeforeTheRun) {
  Engine e = loaded();
  run(e, ":build opt_level=3");
  auto dir = scratch("expected");
  std::filesystem::create_directories(dir);
  writeNpy((dir / "small.npy").string(), Tensor({2, 3}, kFloat32));
  EXPECT_EQ(output(e, ":run compare=" + (dir / "small.npy").string()),
            "error: compare: " + (dir / "small.npy").string() +
                " holds shape [2, 3] but output 0 (add_12) has shape [1, 16, 10, 10]\n");
  EXPECT_EQ(output(e, ":run compare=/nonexistent"),
            "error: compare=/nonexistent: not a .npy, .npz or .pb file, nor a folder of .npy "
            "files\n");
  EXPECT_EQ(output(e, ":run check=maybe"), "error: check must be on or off, got 'maybe'\n");
  EXPECT_EQ(output(e, ":run top=0"), "error: top must be a positive integer, got '0'\n");
  // A folder of several files without the output's names what it looked for (one file alone
  // would be taken by position).
  writeNpy((dir / "other.npy").string(), Tensor({2, 3}, kFloat32));
  EXPECT_EQ(output(e, ":run compare=" + dir.string()),
            "error: compare: " + dir.string() +
                " has no add_12.npy for output 0 (add_12); save=FILE.npz keeps outputs in order, "
                "for models that name them otherwise\n");
  EXPECT_EQ(output(e, ":run rtol=1e-3"),
            "error: rtol= and atol= are compare='s tolerance; give compare=FILE|DIR\n");
  EXPECT_EQ(output(e, ":run compare=" + (dir / "small.npy").string() + " atol=-1"),
            "error: atol must be a non-negative number, got '-1'\n");
  std::filesystem::remove_all(dir);
}

// A file of another dtype than the input is converted and the run says so; dtype= on a loaded
// float32 model converts its inputs and params (said once), and an integer dtype is refused.
TEST(EngineersLoop, ConversionsAreSaid) {
  Engine e = loaded();
  run(e, ":build opt_level=2");
  auto dir = scratch("f64");
  std::filesystem::create_directories(dir);
  Tensor x = frontend::readTensorProto(kData + "/input_0.pb");
  Tensor x64(x.shape, kFloat64);
  x64.data = x.data;
  writeNpy((dir / "x.npy").string(), x64);
  std::string said = output(e, ":run x=" + (dir / "x.npy").string());
  EXPECT_EQ(said.substr(0, said.find('\n') + 1), "note: input 'x': " + (dir / "x.npy").string() +
                                                     " holds float64, converted to float32\n");
  std::filesystem::remove_all(dir);
  Engine h = loaded();
  said = output(h, ":build opt_level=2 dtype=float16");
  EXPECT_NE(said.find("\nnote: dtype=float16: the model's 1 input and 10 params of float32 "
                      "converted to float16\n"),
            std::string::npos)
      << said;
  EXPECT_NE(output(h, ":run").find("output 0: shape (1, 16, 10, 10) float16\n"), std::string::npos);
  Engine i = loaded();
  EXPECT_EQ(output(i, ":build dtype=int8"),
            "error: dtype=int8: the model's params are float32; only a float model's precision "
            "converts (dtype=float16, bfloat16, float32 or float64)\n");
}

// Completion knows the names a command takes: nodes for :why and :where (the partition's on a
// built step),
// functions for :lower and :asm, files for :load and for an input's value, inputs and options
// for :run, networks for :model.
TEST(EngineersLoop, CompletionOfNodeFunctionFileAndInputNames) {
  Engine e = loaded();
  EXPECT_EQ(e.completions(":why conv_", "conv_"),
            (std::vector<std::string>{"conv_1", "conv_11", "conv_3", "conv_6", "conv_8"}));
  run(e, ":build opt_level=3");
  EXPECT_EQ(e.completions(":why conv_1 hard", "hard"),
            (std::vector<std::string>{"hardsigmoid_9", "hardsigmoid_9_alpha", "hardsigmoid_9_beta",
                                      "hardswish_2", "hardswish_4"}));
  EXPECT_EQ(e.completions(":where hardswish", "hardswish"),
            (std::vector<std::string>{"hardswish_2", "hardswish_4"}));
  EXPECT_EQ(e.completions(":lower fuse__contrib_d", "fuse__contrib_d"),
            (std::vector<std::string>{"fuse__contrib_depthwise_conv2d_NCHWc_hard_swish"}));
  EXPECT_EQ(e.completions(":tune a", "a"), (std::vector<std::string>{"all"}));
  EXPECT_EQ(e.completions(":run ", ""),
            (std::vector<std::string>{
                "atol=", "check=", "compare=", "rtol=", "save=", "seed=", "top=", "x="}));
  std::string dir = std::string(LOUPE_SOURCE_DIR) + "/tests/onnx/data/blocks/test_mobilenetv3_";
  EXPECT_EQ(e.completions(":load " + dir, dir), (std::vector<std::string>{dir + "block/"}));
  std::string file = "x=" + kData + "/in";
  EXPECT_EQ(e.completions(":run " + file, file),
            (std::vector<std::string>{"x=" + kData + "/input_0.pb"}));
  EXPECT_EQ(e.completions(":model resnet-1", "resnet-1"),
            (std::vector<std::string>{"resnet-18_v1", "resnet-18_v2"}));
}

// :set memory_limit holds for what :model, :load, :build and :run allocate in all, checked
// before they allocate: a zoo network's params together, an ONNX file's initializers together,
// the reference interpreter's values at its peak, the run's planned buffers.
TEST(EngineersLoop, TheMemoryLimitStopsModelLoadBuildAndRun) {
  Engine e;
  run(e, ":set memory_limit 1MiB");
  // resnet-18's 11,699,892 params are 89.3 MiB as doubles; each alone is under 18 MiB.
  EXPECT_EQ(output(e, ":model resnet-18"),
            "error: making the model's params needs 89.3 MiB (11699892 values, held as doubles); "
            "the memory limit is 1.0 MiB\n");
  // The block's 10 initializers hold 3,292 values (12.9 KiB as the float32 they are held in).
  run(e, ":set memory_limit 10KiB");
  EXPECT_EQ(output(e, ":load " + kBlock),
            "error: " + kBlock +
                ": loading its initializers needs 12.9 KiB (3292 values); the memory limit is "
                "10.0 KiB\n");
  run(e, ":set memory_limit none");
  // A chain of 1000×1000 values: the interpreter holds two at once (16 MB as doubles), the
  // build's planned buffers two float32 ones (8 MB).
  run(e, "x = Variable(\"x\", shape=(1000, 1000))\n:graph exp(relu(x))\n:build");
  run(e, ":set memory_limit 12MiB");
  EXPECT_EQ(output(e, ":run"), "error: the reference interpreter needs 15.3 MiB (the values it "
                               "holds at once); the memory limit is 12.0 MiB\n");
  EXPECT_NE(output(e, ":run check=off").find("output 0: shape (1000, 1000)"), std::string::npos);
  run(e, ":set memory_limit 5MiB");
  EXPECT_EQ(output(e, ":run check=off"),
            "error: input 'x' needs 7.6 MiB (1000×1000 float32); the memory limit is 5.0 MiB\n");
  run(e, ":set memory_limit none");
}

// A node of the loaded graph finds the kernel of the built step that computes it.
TEST(EngineersLoop, ANodeFindsItsKernel) {
  Engine e = loaded();
  run(e, ":build opt_level=3");
  const Graph &g = e.current()->graph;
  EXPECT_EQ(kernelComputing(g, "conv_11"), g.index().findByName("add_12"));
  EXPECT_EQ(kernelComputing(g, "hardsigmoid_9_alpha"), g.index().findByName("hardsigmoid_9"));
  EXPECT_EQ(fusedNodeNames(g, static_cast<uint32_t>(g.index().findByName("add_12"))),
            (std::vector<std::string>{"conv_11", "add_12"}));
  EXPECT_EQ(kernelComputing(g, "x"), -1); // a variable is no kernel's
  EXPECT_EQ(kernelComputing(g, "nosuchnode"), -1);
}

// Two groups that compile to one kernel share one function, lowered from the first group: the
// second group's nodes are attributed to their own call (its time, its group) and found in the
// listing at their counterparts' places (resnet-18's layer4.1 conv2 said "with layer4.0 …",
// "no store of its own", "0 of 366" instructions and "0.000 ms").
TEST(EngineersLoop, ANodeOfAKernelSeveralCallsShareIsAttributedToItsOwnCall) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1, 8, 12, 12))\n"
         "a = relu(conv2d(x, channels=8, kernel_size=(3, 3), padding=(1, 1)))\n"
         "b = relu(conv2d(a, channels=8, kernel_size=(3, 3), padding=(1, 1)))\n"
         ":graph b\n:build opt_level=2\n:set timings hidden");
  const Graph &g = e.current()->graph;
  std::optional<KernelSite> first = kernelSite(g, "conv2d0"), second = kernelSite(g, "conv2d1");
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->function, second->function);
  EXPECT_EQ(first->call, g.index().findByName("relu0"));
  EXPECT_EQ(second->call, g.index().findByName("relu1"));
  EXPECT_EQ(first->listedAs, "conv2d0");
  EXPECT_EQ(second->listedAs, "conv2d0");
  EXPECT_EQ(second->fusedWith, (std::vector<std::string>{"relu1"}));
  EXPECT_EQ(kernelSite(g, "relu1")->listedAs, "relu0");
  EXPECT_FALSE(kernelSite(g, "x"));
  run(e, ":profile 2");
  std::string firstWhere = output(e, ":where conv2d0"), where = output(e, ":where conv2d1");
  EXPECT_NE(where.find("conv2d1 (conv2d) is computed by fuse_conv2d_relu, with relu1\n"),
            std::string::npos)
      << where;
  EXPECT_NE(where.find("shared: 2 calls run fuse_conv2d_relu; its loops and instructions name the "
                       "first call's nodes, and conv2d1 is computed where they say conv2d0\n"),
            std::string::npos)
      << where;
  // The same lines and share of the arithmetic as its counterpart's.
  auto from = [](const std::string &text, const std::string &start) {
    size_t at = text.find(start);
    return at == std::string::npos ? std::string() : text.substr(at, text.find("time:") - at);
  };
  EXPECT_EQ(from(where, "loops ("), from(firstWhere, "loops ("));
  EXPECT_EQ(where.find("no store of its own"), std::string::npos) << where;
  EXPECT_EQ(where.find("arithmetic: 0 of"), std::string::npos) << where;
  EXPECT_EQ(firstWhere.find("shared:"), std::string::npos) << firstWhere;
}

TEST(EngineersLoop, OutputFileNamesStayInTheirFolder) {
  EXPECT_EQ(npyFileStem("/fc/Gemm"), "_fc_Gemm");
  EXPECT_EQ(npyFileStem("../../etc/passwd"), ".._.._etc_passwd");
  EXPECT_EQ(npyFileStem(".."), "_..");
  EXPECT_EQ(npyFileStem(""), "_");
  EXPECT_EQ(npyFileStem("layer1.0.conv1.weight"), "layer1.0.conv1.weight");
}

} // namespace
} // namespace loupe::test

namespace loupe::test {

// A bfloat16 output saved by :run: .npy has no bfloat16, so the file holds its values as
// float32, exactly, and :run says so.
TEST(EngineersLoop, RunSavesBFloat16AsFloat32AndSaysSo) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(2, 3))\ny = cast(x * 3, dtype=\"bfloat16\")\n:graph y\n"
         ":build");
  auto dir = scratch("bf16");
  std::string said = output(e, ":run x=0.1 save=" + dir.string());
  EXPECT_NE(said.find("note: cast0.npy holds bfloat16 values as float32 (exactly; .npy has no "
                      "bfloat16)\n"),
            std::string::npos)
      << said;
  Tensor saved = readNpy((dir / "cast0.npy").string());
  EXPECT_EQ(saved.dtype, kFloat32);
  // 0.1f * 3 is 0x3e99999a; to bfloat16, 0x3e9a (the dropped 0x999a is over half): 0.30078125.
  EXPECT_EQ(saved.data, std::vector<double>(6, 0.30078125));
  std::filesystem::remove_all(dir);
}

} // namespace loupe::test

namespace loupe::test {

// A generic build's step runs generic kernels, which are not tuned: :tune of one of its
// functions says what is (the size compiled for itself); :tune all tunes that size's own
// variant, which a run at the size then takes.
TEST(GenericBuild, TuningAndExportNameTheSizesCompiledForThemselves) {
  Engine e;
  std::filesystem::path dir = freshFolder("loupe-generic", "tune");
  run(e, ":load " + std::string(LOUPE_SOURCE_DIR) +
             "/tests/onnx/data/blocks/test_transformer_block/model.onnx\n"
             ":build opt_level=3 generic\n:run batch=2 sequence=4 check=off\n"
             ":set tuning " +
             (dir / "log.jsonl").string());
  EXPECT_EQ(output(e, ":tune fuse_softmax"),
            "error: this step runs the generic kernels, which are not tuned: :tune all tunes the "
            "functions of this size compiled for it (or :tune all sizes SYMBOL=N,… several)\n");
  std::string tuned = output(e, ":tune all trials=2");
  EXPECT_NE(tuned.find("its next :run builds the variant again to apply"), std::string::npos)
      << tuned;
  std::string ran = output(e, ":run batch=2 sequence=4 check=off");
  EXPECT_NE(ran.find("variant batch=2, sequence=4 of the dynamic build (built before"),
            std::string::npos)
      << ran;
  std::filesystem::remove_all(dir);
}

} // namespace loupe::test
