// BuildTest: what `:build` produces beyond the kernels — params and their precomputation, the
// export a C program can use, .npy files, flop counts and `:profile`.
#include "TestUtil.h"

#include "backend/Build.h"
#include "backend/DynamicBuild.h"
#include "backend/GraphExecutor.h"
#include "backend/LowerFunction.h"
#include "core/DType.h"
#include "core/File.h"
#include "core/Interrupt.h"
#include "core/Npy.h"
#include "core/Printer.h"
#include "core/TensorDiff.h"
#include "core/Text.h"
#include "repl/ProfileSummary.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>

using namespace loupe;
using namespace loupe::test;

namespace {

const char *kConvGraph = "x = Variable(\"x\", shape=(1, 3, 8, 8), dtype=0)\n"
                         "w = Variable(\"w\", shape=(4, 3, 3, 3), dtype=0)\n"
                         "s = Variable(\"s\", shape=(4, 1, 1), dtype=0)\n"
                         "y = relu(conv2d(x, w, channels=4, kernel_size=(3,3), padding=(1,1), "
                         "use_bias=False) * (s * 2))\n"
                         ":graph y";

Tensor ramp(const Shape &shape, double scale) {
  Tensor t(shape, kFloat32);
  for (size_t i = 0; i < t.data.size(); ++i)
    t.data[i] = roundToDType(std::sin(static_cast<double>(i) * scale), kFloat32);
  return t;
}

std::filesystem::path scratchDir(const std::string &name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("loupe-build-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

// The shell's output of `command`, and its exit status.
std::pair<std::string, int> shell(const std::string &command) {
  FILE *p = popen((command + " 2>&1").c_str(), "r");
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    text.append(buf, n);
  int status = pclose(p);
  return {text, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

// examples/deploy/run_network.c compiled against the export in `dir` to `bin`: "" when it
// compiled without a word, else what the compiler said and its status.
std::string compileRunNetwork(const std::filesystem::path &dir, const std::string &bin) {
  auto [said, status] =
      shell("cc -std=c11 -O2 -Wall -Werror -I" + dir.string() + " " + LOUPE_SOURCE_DIR +
            "/examples/deploy/run_network.c " + (dir / "deploy.so").string() + " -Wl,-rpath," +
            dir.string() + " -o " + bin);
  return status == 0 ? said : said + " (status " + std::to_string(status) + ")";
}

} // namespace

TEST(Npy, WriteThenReadGivesTheSameTensor) {
  auto dir = scratchDir("npy");
  std::filesystem::create_directories(dir);
  for (int dt = 0; dt < kNumDTypes; ++dt)
    for (const Shape &shape : {Shape::scalar(), Shape{5}, Shape{2, 3, 4}}) {
      Tensor t(shape, dt);
      for (size_t i = 0; i < t.data.size(); ++i)
        t.data[i] = roundToDType(
            dtypeIsFloat(dt) ? 0.1 * static_cast<double>(i) - 1 : static_cast<double>(i) - 7, dt);
      std::string path = (dir / "t.npy").string();
      writeNpy(path, t);
      Tensor back = readNpy(path);
      // NumPy has no bfloat16: its values come back as the float32s they are.
      int fileType = dt == kBFloat16 ? kFloat32 : dt;
      EXPECT_EQ(back.shape, t.shape);
      EXPECT_EQ(back.dtype, fileType);
      EXPECT_EQ(back.data, t.data);
      // numpy's own rule: the header is padded so the data starts at a multiple of 64.
      EXPECT_EQ(std::filesystem::file_size(path) % 64,
                (t.data.size() * static_cast<size_t>(dtypeBytes(fileType))) % 64);
    }
  std::filesystem::remove_all(dir);
}

TEST(CountFlops, ConvolutionAndDenseByHand) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1, 3, 5, 5))\n"
         "y = relu(conv2d(x, channels=4, kernel_size=(3,3), padding=(1,1), use_bias=False) + 1)\n"
         ":graph y\n:build");
  auto lib = backend::builtLibrary(e.current()->graph);
  ASSERT_TRUE(lib);
  // 4*5*5 outputs, each 3*3*3 taps of a multiply and an add; then +1 and max(…, 0) per output.
  ASSERT_EQ(lib->lowered.size(), 1u);
  EXPECT_EQ(backend::countFlops(*lib->lowered.begin()->second.schedule), 2 * 100 * 27 + 2 * 100);
  Engine d;
  run(d, "x = Variable(\"x\", shape=(2, 5))\ny = dense(x, units=3)\n:graph y\n:build");
  lib = backend::builtLibrary(d.current()->graph);
  ASSERT_TRUE(lib);
  // 2*3 outputs of 5 multiply-adds, then the bias.
  ASSERT_EQ(lib->lowered.size(), 1u);
  EXPECT_EQ(backend::countFlops(*lib->lowered.begin()->second.schedule), 2 * 3 * 5 * 2 + 6);
}

TEST(BuildParams, PrecomputePruneFoldsTheParamOnlyPart) {
  Engine e;
  run(e, kConvGraph);
  Graph source = e.current()->graph;
  run(e, ":build param w=random s=ones seed=3");
  const Graph &deploy = e.current()->graph;
  auto lib = backend::builtLibrary(deploy);
  ASSERT_TRUE(lib);
  // s * 2 depends on params only: it became the param __mul_scalar__0, computed once.
  ASSERT_EQ(lib->params.size(), 2u);
  const Tensor scale = lib->params.at("__mul_scalar__0").load();
  EXPECT_EQ(scale.shape, (Shape{4, 1, 1}));
  EXPECT_EQ(scale.data, std::vector<double>(4, 2.0));
  EXPECT_EQ(lib->params.at("w").shape(), (Shape{4, 3, 3, 3}));
  EXPECT_EQ(deploy.index().argNodes.size(), 3u);
  EXPECT_FALSE(deploy.attr("precompute_graph"));

  // The run binds the params; it must equal the source graph on the same values.
  Tensor x = ramp({1, 3, 8, 8}, 0.37);
  std::map<std::string, Tensor> in = loadAll(lib->params);
  in["x"] = x;
  backend::RunResult r = backend::runDeployGraph(deploy, in);
  Tensor s({4, 1, 1}, kFloat32);
  std::fill(s.data.begin(), s.data.end(), 1.0);
  std::vector<Tensor> want = interpret(applyPasses(source, {"InferShape", "InferType"}),
                                       {{"x", x}, {"w", lib->params.at("w").load()}, {"s", s}});
  ASSERT_EQ(r.outputs[0].data.size(), want[0].data.size());
  for (size_t i = 0; i < want[0].data.size(); ++i)
    EXPECT_NEAR(r.outputs[0].data[i], want[0].data[i], 1e-5 * (1 + std::fabs(want[0].data[i])));
  // :run uses the bound params unless told otherwise.
  std::string ran = output(e, ":run x=zeros");
  EXPECT_NE(ran.find("sum 0\n"), std::string::npos) << ran;

  // Below opt level 2 nothing is precomputed: the params stay as given.
  Engine e1;
  run(e1, kConvGraph);
  run(e1, ":build opt_level=1 param w=random s=ones");
  lib = backend::builtLibrary(e1.current()->graph);
  ASSERT_EQ(lib->params.size(), 2u);
  EXPECT_TRUE(lib->params.count("s") && lib->params.count("w"));
}

TEST(BuildParams, BadParamsAreRefusedWithNothingChanged) {
  Engine e;
  run(e, "x = Variable(\"x\")\nw = Variable(\"w\")\ny = dense(x, w, units=3, use_bias=False)\n"
         ":graph y");
  size_t steps = e.history().size();
  EXPECT_EQ(output(e, ":build shape x=(2, 5) param v=random"),
            "error: build: the graph has no input 'v' to bind a param to; its data inputs: x, w "
            "(:inputs lists all)\n");
  // Without x's shape InferShape cannot give w one either.
  EXPECT_EQ(output(e, ":build param w=random"),
            "error: build: param w=random needs a shape; give it with shape w=(…)\n");
  std::string ramp = LOUPE_SOURCE_DIR "/tests/data/ramp_2x3.npy";
  EXPECT_EQ(output(e, ":build shape x=(2, 5) w=(3, 5) param w=" + ramp),
            "error: " + ramp + " holds shape [2, 3] but param w has shape [3, 5]\n");
  EXPECT_EQ(output(e, ":build shape x=(2, 5) param w=" + ramp),
            "error: operator dense0 (dense): input 'weight' has shape [2, 3] but [3, 5] is "
            "required\n");
  EXPECT_EQ(e.history().size(), steps);
  // With it, w's shape (3, 5) comes from InferShape.
  EXPECT_NE(output(e, ":build shape x=(2, 5) param w=random").find("params w)"), std::string::npos);
  EXPECT_EQ(backend::builtLibrary(e.current()->graph)->params.at("w").shape(), (Shape{3, 5}));
}

TEST(Export, ExportedLibraryWorksFromC) {
  Engine e;
  run(e, kConvGraph);
  run(e, ":build param w=random s=ones seed=5");
  auto dir = scratchDir("export");
  std::string said = output(e, ":export " + dir.string());
  EXPECT_EQ(said, "exported step 1 to " + dir.string() +
                      ": deploy.json, deploy.so, deploy.h, params/__mul_scalar__0.npy, "
                      "params/w.npy\n");
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    EXPECT_NE(entry.path().filename().string().rfind(".loupe-export", 0), 0u) << entry.path();
  // The deploy graph reloads as a graph with the build's attributes.
  Engine reload;
  std::string loaded = output(reload, ":load " + (dir / "deploy.json").string());
  EXPECT_NE(loaded.find("4 nodes, 3 inputs, 1 output"), std::string::npos) << loaded;

  // A C program compiled against deploy.h calls the function from deploy.so.
  Tensor x = ramp({1, 3, 8, 8}, 0.11);
  writeNpy((dir / "x.npy").string(), x);
  std::string bin = (dir / "call_deploy").string();
  auto [ccOut, ccStatus] = shell("cc -std=c11 -Wall -Werror -I" + dir.string() + " " +
                                 LOUPE_SOURCE_DIR "/tests/c/call_deploy.c -o " + bin + " -ldl");
  ASSERT_EQ(ccStatus, 0) << ccOut;
  auto [text, status] = shell(bin + " " + dir.string() + " " + (dir / "x.npy").string() + " 256");
  ASSERT_EQ(status, 0) << text;
  std::vector<double> got;
  std::istringstream lines(text);
  for (float v; lines >> v;) // %.9g gives back the float exactly
    got.push_back(v);

  auto lib = backend::builtLibrary(e.current()->graph);
  std::map<std::string, Tensor> in = loadAll(lib->params);
  in["x"] = x;
  const Tensor inProcess = backend::runDeployGraph(e.current()->graph, in).outputs[0];
  // The same machine code, so the same bits; the sum shows the outputs are not all zero.
  EXPECT_EQ(got, inProcess.data);
  double sum = 0;
  for (double v : got)
    sum += std::fabs(v);
  EXPECT_GT(sum, 1.0);
  std::filesystem::remove_all(dir);
}

// The whole network from C: examples/deploy/run_network.c, compiled against an export's
// deploy.h and linked with its deploy.so, sets the input by name, runs the deploy graph on two
// threads of the REPL's pool (compiled into deploy.so) with the params deploy.so carries, and
// writes the output's bytes: the REPL's own run of the build on the same input, bit for bit
// (the same machine code, the same static split of each parallel loop).
TEST(Export, TheWholeNetworkRunsFromCOnTwoThreads) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1, 3, 16, 16))\n"
         "y = relu(conv2d(x, channels=16, kernel_size=(3, 3), padding=(1, 1)))\n"
         "y = max_pool2d(y, pool_size=(2, 2), strides=(2, 2))\n"
         "z = softmax(dense(flatten(y), units=10))\n"
         ":graph z");
  run(e, ":build opt_level=3 param conv2d0_weight=random param conv2d0_bias=random "
         "param dense0_weight=random param dense0_bias=random seed=3");
  auto dir = scratchDir("export-net");
  output(e, ":export " + dir.string());
  std::string header = readFile((dir / "deploy.h").string());
  EXPECT_NE(header.find(" *   x: float32 (1, 3, 16, 16)\n"), std::string::npos) << header;
  EXPECT_NE(header.find(" *   0: softmax0: float32 (1, 10)\n"), std::string::npos) << header;
  Tensor x = ramp({1, 3, 16, 16}, 0.07);
  std::string xBin = (dir / "x.bin").string(), outBin = (dir / "out.bin").string();
  {
    std::vector<float> f(x.data.begin(), x.data.end());
    writeFileAtomically(xBin, std::string(reinterpret_cast<const char *>(f.data()), f.size() * 4));
  }
  std::string bin = (dir / "run_network").string();
  ASSERT_EQ(compileRunNetwork(dir, bin), "");
  auto [text, status] = shell(bin + " -t 2 -n 3 -i x=" + xBin + " -o " + outBin);
  ASSERT_EQ(status, 0) << text;
  EXPECT_EQ(text.rfind("2 threads, 3 runs: median ", 0), 0u) << text;
  std::string bytes = readFile(outBin);
  ASSERT_EQ(bytes.size(), 40u);
  std::vector<double> got;
  for (size_t i = 0; i < 10; ++i) {
    float v;
    std::memcpy(&v, bytes.data() + 4 * i, 4);
    got.push_back(v);
  }
  auto lib = backend::builtLibrary(e.current()->graph);
  std::map<std::string, Tensor> in = loadAll(lib->params);
  in["x"] = x;
  EXPECT_EQ(got, backend::runDeployGraph(e.current()->graph, in).outputs[0].data);
  double sum = 0;
  for (double v : got)
    sum += v;
  EXPECT_NEAR(sum, 1.0, 1e-5); // a softmax: the run computed something
  // A wrong input is refused by name, nothing run.
  auto [wrong, wrongStatus] = shell(bin + " -i y=" + xBin);
  EXPECT_NE(wrongStatus, 0);
  EXPECT_EQ(wrong, "run_network: no input named in 'y=" + xBin + "'\n");
  std::filesystem::remove_all(dir);
}

// A dynamic build exports every size built into one deploy.so: run_network picks a variant by
// its sizes (-s), each variant computes what the REPL's run of it computes, bit for bit, and a
// size not built is refused naming those built. The size-independent exp(v) is one kernel of
// the same name in both variants: linked once.
TEST(Export, ADynamicBuildExportsEverySizeBuilt) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=\"(batch, 64)\")\nv = Variable(\"v\", shape=(4,))\n"
         "y = softmax(relu(dense(x, units=32)))\ng = Group([y, exp(v)])\n:graph g");
  auto dir = scratchDir("export-dynamic");
  run(e, ":build opt_level=3 param dense0_weight=random param dense0_bias=random seed=2");
  EXPECT_EQ(output(e, ":export " + dir.string()),
            "error: export: the dynamic build has no size built yet: :run a size, or :build … "
            "specialize SYMBOL=N,… to build those sizes\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "deploy.so"));
  run(e, ":undo\n:build opt_level=3 param dense0_weight=random param dense0_bias=random seed=2 "
         "specialize batch=2,5");
  EXPECT_EQ(output(e, ":export " + dir.string()),
            "exported step 1 to " + dir.string() +
                ": deploy.0.json, deploy.1.json, deploy.so, deploy.h, params/dense0_bias.npy, "
                "params/dense0_weight.npy\nvariants: batch=2; batch=5 "
                "(loupe_create_sizes(threads, \"batch=2\"); another size is refused: :export DIR "
                "SYMBOL=N,… builds and exports those)\n");
  std::string header = readFile((dir / "deploy.h").string());
  EXPECT_NE(
      header.find(
          "#define LOUPE_NUM_VARIANTS 2\n/* Variant 0, built for batch=2 "
          "(loupe_create's):\n * Inputs:\n *   x: float32 (2, 64)\n *   v: float32 "
          "(4,)\n * Outputs:\n *   0: softmax0: float32 (2, 32)\n *   1: exp0: float32 (4,)\n"),
      std::string::npos)
      << header;
  EXPECT_NE(header.find(" * Variant 1, built for batch=5:\n * Inputs:\n *   x: float32 (5, 64)\n"),
            std::string::npos);
  // The shared kernel is declared once.
  size_t first = header.find("void fuse_exp(");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(header.find("void fuse_exp(", first + 1), std::string::npos);
  std::string bin = (dir / "run_network").string();
  ASSERT_EQ(compileRunNetwork(dir, bin), "");
  const Graph dynamicStep = e.current()->graph;
  for (int64_t batch : {5, 2}) {
    Tensor x = ramp({batch, 64}, 0.03), v = ramp({4}, 0.5);
    std::string xBin = (dir / "x.bin").string(), vBin = (dir / "v.bin").string(),
                outBin = (dir / "out.bin").string();
    for (auto [t, path] : {std::pair{&x, xBin}, std::pair{&v, vBin}}) {
      std::vector<float> f(t->data.begin(), t->data.end());
      writeFileAtomically(path,
                          std::string(reinterpret_cast<const char *>(f.data()), f.size() * 4));
    }
    // Written with a space and the sizes as the user types them: matched by value.
    auto [text, status] = shell(bin + " -n 2 -s ' batch=" + std::to_string(batch) +
                                "' -i x=" + xBin + " -i v=" + vBin + " -o " + outBin);
    ASSERT_EQ(status, 0) << text;
    std::string bytes = readFile(outBin);
    ASSERT_EQ(bytes.size(), static_cast<size_t>(batch * 32 * 4));
    std::vector<double> got;
    for (size_t i = 0; i < bytes.size() / 4; ++i) {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      got.push_back(f);
    }
    Graph variant = backend::variantOf(dynamicStep, {{"batch", batch}});
    std::map<std::string, Tensor> in = loadAll(backend::builtLibrary(variant)->params);
    in["x"] = x;
    in["v"] = v;
    EXPECT_EQ(got, backend::runDeployGraph(variant, in).outputs[0].data) << "batch " << batch;
  }
  auto [refused, refusedStatus] = shell(bin + " -s batch=3");
  EXPECT_EQ(refusedStatus, 2);
  EXPECT_EQ(refused, "run_network: no variant was built for 'batch=3'; built: batch=2; batch=5\n");
  // Sizes given to :export are built now (batch 3 was not) and are all it holds.
  auto only = scratchDir("export-dynamic-sizes");
  EXPECT_NE(
      output(e, ":export " + only.string() + " batch=3,5")
          .find(": deploy.0.json, deploy.1.json, deploy.so, deploy.h, params/dense0_bias.npy, "
                "params/dense0_weight.npy\nvariants: batch=3; batch=5 ("),
      std::string::npos);
  std::string onlyHeader = readFile((only / "deploy.h").string());
  EXPECT_NE(onlyHeader.find("#define LOUPE_NUM_VARIANTS 2\n/* Variant 0, built for batch=3 "),
            std::string::npos)
      << onlyHeader;
  EXPECT_EQ(
      output(e, ":export " + only.string() + " seq=3"),
      "error: :export: 'seq=3' is not SYMBOL=N[,N…] for a size symbol of the graph (batch)\n");
  std::filesystem::remove_all(only);
  std::filesystem::remove_all(dir);
}

// A generic build exports its generic kernels: one deploy.so runs any sizes (storage, inputs
// and outputs bound when loupe_create_sizes is given them), each as the REPL's run of the
// generic build at those sizes computes, bit for bit; a size it specialized takes its own
// variant. Sizes that miss a symbol, name another, are 0, or overflow the storage make no
// network; one graph moves between sizes, growing its blocks only where they no longer hold
// them; and an export of the generic kernels alone needs sizes.
TEST(Export, AGenericBuildExportsOneNetworkForAnySize) {
  Engine e;
  run(e, ":set target llvm -mcpu=znver4\n:load " + std::string(LOUPE_SOURCE_DIR) +
             "/tests/onnx/data/blocks/test_transformer_block/model.onnx\n"
             ":build opt_level=3 generic specialize batch=2 sequence=6");
  auto dir = scratchDir("export-generic");
  std::string said = output(e, ":export " + dir.string());
  EXPECT_EQ(said.rfind("exported step 1 to " + dir.string() +
                           ": deploy.0.json, deploy.1.json, "
                           "deploy.so, deploy.h, params/",
                       0),
            0u)
      << said;
  EXPECT_NE(said.find("\nvariants: batch=2, sequence=6; generic kernels for any batch, sequence "
                      "(loupe_create_sizes(threads, \"batch=N, sequence=N\"))\n"),
            std::string::npos)
      << said;
  std::string header = readFile((dir / "deploy.h").string());
  EXPECT_NE(header.find("#define LOUPE_NUM_VARIANTS 2\n/* Variant 0, built for batch=2, "
                        "sequence=6 (loupe_create's):\n * Inputs:\n *   x: float32 (2, 6, 32)\n"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find(" * Variant 1, generic: any batch, sequence (loupe_create_sizes binds "
                        "them):\n * Inputs:\n *   x: float32 (batch, sequence, 32)\n * Outputs:\n"
                        " *   0: "),
            std::string::npos)
      << header;
  // deploy.1.json: the graph runtime's integer shapes (-1 where symbolic), and their symbols.
  std::string json = readFile((dir / "deploy.1.json").string());
  EXPECT_NE(json.find("\"(batch, sequence, 32)\""), std::string::npos);
  EXPECT_NE(json.find("[-1, -1, 32]"), std::string::npos);
  std::string bin = (dir / "run_network").string();
  ASSERT_EQ(compileRunNetwork(dir, bin), "");
  const Graph step = e.current()->graph;
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{3, 5}, {2, 6}, {1, 1}}) {
    Tensor x = ramp({batch, seq, 32}, 0.11);
    std::string xBin = (dir / "x.bin").string(), outBin = (dir / "out.bin").string();
    std::vector<float> f(x.data.begin(), x.data.end());
    writeFileAtomically(xBin, std::string(reinterpret_cast<const char *>(f.data()), f.size() * 4));
    auto [text, status] =
        shell(bin + " -t 2 -n 1 -s 'sequence=" + std::to_string(seq) +
              ", batch=" + std::to_string(batch) + "' -i x=" + xBin + " -o " + outBin);
    ASSERT_EQ(status, 0) << text;
    std::string bytes = readFile(outBin);
    ASSERT_EQ(bytes.size(), static_cast<size_t>(batch * seq * 32 * 4));
    std::vector<double> got(bytes.size() / 4);
    for (size_t i = 0; i < got.size(); ++i) {
      float v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      got[i] = v;
    }
    // The REPL's run at those sizes: the generic kernels, or batch 2 × 6's own.
    Graph variant = backend::variantOf(step, {{"batch", batch}, {"sequence", seq}});
    EXPECT_EQ(variant.attr("generic_kernels") != nullptr, batch != 2) << batch;
    std::map<std::string, Tensor> in = loadAll(backend::builtLibrary(variant)->params);
    in["x"] = x;
    EXPECT_EQ(got, backend::runDeployGraph(variant, in).outputs[0].data)
        << "batch " << batch << " sequence " << seq;
  }
  for (const char *wrong : {"batch=3", "batch=3, sequence=2, seq=1", "batch=0, sequence=2"}) {
    auto [refused, status] = shell(bin + " -s '" + wrong + "'");
    EXPECT_EQ(status, 2) << wrong;
    EXPECT_EQ(refused, "run_network: no variant was built for '" + std::string(wrong) +
                           "'; built: batch=2, sequence=6; batch=?, sequence=?\n");
  }
  auto [overflow, overflowStatus] = shell(bin + " -s 'batch=4000000000, sequence=4000000000'");
  EXPECT_EQ(overflowStatus, 1);
  EXPECT_EQ(overflow, "run_network: cannot make the network at those sizes (out of memory, its "
                      "storage past 2^48 bytes, or a size past what it allows)\n");
  // One graph moved between sizes (loupe_set_sizes): each run computes what a graph made at
  // those sizes computes; sizes it does not take leave it as it was.
  writeFileAtomically((dir / "resize.c").string(), R"C(
#include "deploy.h"
#include <stdio.h>
#include <stdlib.h>
static int run_at(loupe_graph *g, const char *path) {
  const loupe_tensor_info *in = loupe_input_info(g, 0), *out = loupe_output_info(g, 0);
  float *x = malloc((size_t)in->bytes), *y = malloc((size_t)out->bytes);
  for (long k = 0; k < in->bytes / 4; ++k)
    x[k] = (float)(k % 17) / 17.0f - 0.5f; /* run_network's ramp */
  loupe_set_input(g, in->name, x, (size_t)in->bytes);
  loupe_run(g);
  loupe_get_output(g, 0, y, (size_t)out->bytes);
  FILE *f = fopen(path, "wb");
  fwrite(y, 1, (size_t)out->bytes, f);
  fclose(f);
  free(x);
  free(y);
  return 0;
}
int main(int argc, char **argv) {
  (void)argc;
  loupe_graph *g = loupe_create_sizes(1, "batch=3, sequence=5");
  printf("%d", loupe_set_sizes(g, "batch=1, sequence=7"));
  run_at(g, argv[1]);
  printf(" %d", loupe_set_sizes(g, "sequence=11, batch=3"));
  run_at(g, argv[2]);
  printf(" %d", loupe_set_sizes(g, "batch=0, sequence=2"));
  printf(" %lld", (long long)loupe_input_info(g, 0)->bytes);
  loupe_graph *fixed = loupe_create_sizes(1, "batch=2, sequence=6");
  printf(" %d %d\n", loupe_set_sizes(fixed, "batch=2, sequence=7"),
         loupe_set_sizes(fixed, "sequence=6, batch=2"));
  loupe_destroy(fixed);
  loupe_destroy(g);
  return 0;
}
)C");
  auto [compiled, compiledStatus] =
      shell("cc -std=c11 -O2 -Wall -Werror -I" + dir.string() + " " + (dir / "resize.c").string() +
            " " + (dir / "deploy.so").string() + " -Wl,-rpath," + dir.string() + " -o " +
            (dir / "resize").string());
  ASSERT_EQ(compiledStatus, 0) << compiled;
  std::string a = (dir / "a.bin").string(), b = (dir / "b.bin").string();
  auto [moved, movedStatus] = shell((dir / "resize").string() + " " + a + " " + b);
  ASSERT_EQ(movedStatus, 0) << moved;
  EXPECT_EQ(moved, "0 0 -3 " + std::to_string(3 * 11 * 32 * 4) + " -3 0\n");
  std::string movedA = readFile(a), movedB = readFile(b);
  for (auto [sizes, got] : {std::pair<std::string, std::string *>{"batch=1, sequence=7", &movedA},
                            {"batch=3, sequence=11", &movedB}}) {
    std::string fresh = (dir / "fresh.bin").string();
    auto [text, status] = shell(bin + " -t 1 -n 1 -s '" + sizes + "' -o " + fresh);
    ASSERT_EQ(status, 0) << text;
    EXPECT_EQ(*got, readFile(fresh)) << sizes;
  }
  // The generic kernels alone: variant 0 needs sizes.
  run(e, ":undo\n:build opt_level=3 generic");
  auto only = scratchDir("export-generic-only");
  EXPECT_NE(output(e, ":export " + only.string())
                .find("\nvariants: generic kernels for any batch, sequence "
                      "(loupe_create_sizes(threads, \"batch=N, sequence=N\"))\n"),
            std::string::npos);
  std::string onlyBin = (only / "run_network").string();
  ASSERT_EQ(compileRunNetwork(only, onlyBin), "");
  auto [needs, needsStatus] = shell(onlyBin);
  EXPECT_EQ(needsStatus, 2);
  EXPECT_EQ(needs, "run_network: the network takes any sizes and needs them: -s 'batch=?, "
                   "sequence=?' with each ? a size\n");
  auto [ran, ranStatus] = shell(onlyBin + " -n 1 -s 'batch=1, sequence=7'");
  EXPECT_EQ(ranStatus, 0) << ran;
  std::filesystem::remove_all(only);
  std::filesystem::remove_all(dir);
}

// A slice of a fixed table to `seq` rows holds only while seq is within the table: the REPL's
// run past it is refused naming the node, and an export's generic graph at that size is not
// made (loupe_create_sizes gives NULL) while one within it runs.
TEST(Export, AGenericExportRefusesSizesPastItsSlices) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=\"(batch, seq, 8)\")\n"
         "pos = Variable(\"pos\", shape=(1, 16, 8))\n"
         "y = x + strided_slice(pos, begin=(0,), end=\"(seq,)\", axes=(1,))\n:graph y\n"
         ":build opt_level=3 generic param pos=random");
  EXPECT_EQ(output(e, ":run batch=2 seq=17"),
            "error: node strided_slice0 slices to seq = 17 within 16 at batch=2, seq=17: seq must "
            "be at most 16\n");
  auto dir = scratchDir("export-limits");
  output(e, ":export " + dir.string());
  std::string bin = (dir / "run_network").string();
  ASSERT_EQ(compileRunNetwork(dir, bin), "");
  auto [within, withinStatus] = shell(bin + " -n 1 -s 'batch=2, seq=16'");
  EXPECT_EQ(withinStatus, 0) << within;
  auto [past, pastStatus] = shell(bin + " -n 1 -s 'batch=2, seq=17'");
  EXPECT_EQ(pastStatus, 1);
  EXPECT_EQ(past, "run_network: cannot make the network at those sizes (out of memory, its "
                  "storage past 2^48 bytes, or a size past what it allows)\n");
  std::filesystem::remove_all(dir);
}

// A bfloat16 param goes to deploy as the uint16 bits deploy.h declares it with (.npy has no
// bfloat16), and deploy.h says so in its types.
TEST(Export, BFloat16ParamsAreWrittenAsTheirBits) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(2, 3), dtype=12)\n"
         "w = Variable(\"w\", shape=(2, 3), dtype=12)\ny = x * w\n:graph y");
  run(e, ":build param w=0.1");
  auto dir = scratchDir("export-bf16");
  output(e, ":export " + dir.string());
  Tensor w = readNpy((dir / "params" / "w.npy").string());
  EXPECT_EQ(w.dtype, kUint16);
  // 0.1 is 0x3dcccccd in float32, 0x3dcd in bfloat16 (the dropped 0xcccd is over half).
  EXPECT_EQ(w.data, std::vector<double>(6, 0x3dcd));
  std::string header = readFile((dir / "deploy.h").string());
  EXPECT_NE(header.find("(uint16_t *input0, uint16_t *input1, uint16_t *"), std::string::npos)
      << header;
  std::filesystem::remove_all(dir);
}

TEST(Export, RefusesAnUnbuiltGraphAndWritesNothing) {
  Engine e;
  run(e, kConvGraph);
  auto dir = scratchDir("unbuilt");
  EXPECT_EQ(output(e, ":export " + dir.string()),
            "error: the current graph was not built; run :build first\n");
  EXPECT_FALSE(std::filesystem::exists(dir));
  // A compiler that fails: the message says so and the directory gets no files.
  run(e, ":build param w=random s=ones");
  setenv("CC", "false", 1);
  std::string said = output(e, ":export " + dir.string());
  unsetenv("CC");
  EXPECT_EQ(said, "error: export: compile the network's runner with 'false' failed: \n");
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

// One row of `:profile`: kernel, min, median and max ms, share, GFLOP/s, % peak, layers.
struct ProfileLine {
  std::string kernel, layers;
  double minMs = 0, ms = 0, maxMs = 0, share = 0, gflops = 0, pct = 0;
};

// kConvGraph built with `build` (":build opt_level=0"), ready for :profile.
Engine builtConv(const std::string &build) {
  Engine e;
  run(e, kConvGraph);
  run(e, build);
  return e;
}

std::vector<ProfileLine> profileRows(const std::string &p) {
  std::vector<ProfileLine> rows;
  std::istringstream lines(p);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream f(line);
    ProfileLine r;
    std::string share, pct;
    if (!(f >> r.kernel >> r.minMs >> r.ms >> r.maxMs >> share >> r.gflops >> pct) ||
        share.back() != '%')
      continue;
    r.share = std::stod(share);
    r.pct = std::stod(pct);
    std::getline(f, r.layers);
    r.layers.erase(0, r.layers.find_first_not_of(' '));
    rows.push_back(r);
  }
  return rows;
}

// by=op totals the kernels by their master's op, by=layer by the master's scope: kConvGraph at
// opt level 0 has one kernel per op, so each op is one kernel, and names without scopes are
// all at the top level. The totals' figures are the sums of the kernels' medians.
TEST(Profile, TotalsByOpAndLayer) {
  Engine e = builtConv(":build opt_level=0");
  std::string p = output(e, ":profile 3 by=op");
  std::istringstream lines(p);
  std::string line, op;
  std::map<std::string, size_t> kernels;
  std::getline(lines, line);
  EXPECT_EQ(line.rfind("op ", 0), 0u) << p;
  EXPECT_NE(line.find("  kernels median ms   share   GFLOP/s   % peak"), std::string::npos) << p;
  while (std::getline(lines, line)) {
    std::istringstream f(line);
    size_t count = 0;
    if (f >> op >> count)
      kernels[op] = count;
  }
  EXPECT_EQ(
      kernels,
      (std::map<std::string, size_t>{
          {"conv2d", 1}, {"__mul_scalar__", 1}, {"broadcast_mul", 1}, {"relu", 1}, {"total", 4}}))
      << p;
  EXPECT_NE(p.find("3 runs, median per kernel, totals by master op, "), std::string::npos) << p;
  p = output(e, ":profile 3 by=layer");
  EXPECT_EQ(p.find("\n(top level)"), p.find('\n')) << p; // the first row, all four kernels
  EXPECT_NE(p.find("\n(top level)          4 "), std::string::npos) << p;
}

// The busy line: the middle half of the runs' totals (sorted) against their median. Eight runs
// 10, 10, 10, 10, 10.2, 10.3, 10.4, 30: quartiles at positions 2 and 6 (10 and 10.4), median
// 10.2 — 3.9%, quiet, though one run was three times as slow; 10, 10, 11, 12, 13, 14, 15, 16:
// 11 to 15 over 13, 31%.
TEST(Profile, SaysWhenTheRunsSpreadTooMuchToRankKernels) {
  EXPECT_EQ(busyLine({10, 10, 10, 10, 10.2, 10.3, 10.4, 30}), "");
  EXPECT_EQ(busyLine({10, 10, 11, 12, 13, 14, 15, 16}),
            "the machine was busy: the middle half of the runs' totals spread 31% of their median "
            "(11.0000-15.0000 ms, all 10.0000-16.0000); read the medians, or run more");
  EXPECT_EQ(busyLine({1, 2, 3}), ""); // too few runs to tell
}

TEST(Profile, ReportsEveryKernelAndTheTotal) {
  Engine e = builtConv(":build opt_level=0");
  std::string p = output(e, ":profile 3 sort=order");
  std::vector<ProfileLine> rows = profileRows(p);
  std::vector<std::string> names;
  for (const auto &r : rows)
    names.push_back(r.kernel);
  // opt level 0: one kernel per op, in node order; each names the node it computes.
  EXPECT_EQ(names, (std::vector<std::string>{"fuse_conv2d", "fuse___mul_scalar__",
                                             "fuse_broadcast_mul", "fuse_relu", "total"}))
      << p;
  EXPECT_EQ(rows[0].layers, "conv2d0") << p;
  EXPECT_EQ(rows[3].layers, "relu0") << p;
  EXPECT_NE(p.find("3 runs, median per kernel, in the order they run"), std::string::npos);
  // The share of peak: the printed peak (threads x one core's FMA loop), and on every row the
  // percentage that the row's GFLOP/s is of it (to the printed precision); each share is the
  // row's part of the total.
  EXPECT_NE(p.find("   min ms median ms    max ms   share   GFLOP/s   % peak   layers"),
            std::string::npos)
      << p;
  size_t at = p.find("; peak ");
  ASSERT_NE(at, std::string::npos) << p;
  double peak = std::stod(p.substr(at + 7));
  EXPECT_GT(peak, 0);
  for (const auto &r : rows) {
    // The median lies between the fastest and the slowest run (the total's: whole runs).
    EXPECT_LE(r.minMs, r.ms) << r.kernel;
    EXPECT_LE(r.ms, r.maxMs) << r.kernel;
    // Each printed figure is rounded: pct to 0.1, GFLOP/s to 0.01, the peak to 0.1 (which
    // matters where the peak is small: a -O0 sanitizer build measures 3 GFLOP/s).
    EXPECT_NEAR(r.pct, 100 * r.gflops / peak, 0.05 + 100 * 0.005 / peak + r.pct * 0.05 / peak)
        << r.kernel;
    // ms and the total are printed to 0.0001: each may be off by half of that, so the share
    // (of the unrounded times, printed to 0.1) lies between the quotients of those extremes.
    // (A first-order bound was too tight for microsecond kernels: 9.7% printed against 6.25%
    // from 0.0001 of 0.0016 ms, the true 0.000149 of 0.00154.)
    double total = rows.back().ms, h = 0.00005;
    double lo = 100 * std::max(r.ms - h, 0.0) / (total + h),
           hi = total > h ? 100 * (r.ms + h) / (total - h) : 100.0;
    EXPECT_GE(r.share, lo - 0.05) << r.kernel;
    EXPECT_LE(r.share, hi + 0.05) << r.kernel;
  }
  EXPECT_EQ(rows.back().share, 100.0);
  EXPECT_EQ(output(e, ":profile 0"),
            "error: N must be a number of runs from 1 to 100000, got '0'\n");
  EXPECT_EQ(output(e, ":profile sort=name"),
            "error: sort must be time (longest first) or order (as the graph calls them), got "
            "'name'\n");
  EXPECT_EQ(output(e, ":profile runs=3"),
            "error: unknown option 'runs'; usage: :profile [N] [sort=time|order] [top=K] "
            "[by=kernel|op|layer] [depth=D] [SYMBOL=N …] [shape NAME=(…) …]\n");
  // A fixed build has no sizes to choose.
  EXPECT_EQ(output(e, ":profile shape x=(1,2)"),
            "error: shape x=… picks a dynamic build's sizes; the current step has none\n");
  EXPECT_EQ(output(e, ":profile by=node"),
            "error: by must be kernel (each kernel), op (the kernels' master ops) or layer (the "
            "master nodes' scopes), got 'node'\n");
  EXPECT_EQ(output(e, ":profile depth=2"),
            "error: depth= is by=layer's: how many scopes deep a layer is\n");
  Engine u;
  run(u, kConvGraph);
  EXPECT_EQ(output(u, ":profile"), "error: the current graph was not built; run :build first\n");
}

// With timings hidden (a replayed session) the kernels are listed in the order they run, so the
// listing is the same on every run: the order by time was the one thing left to vary.
TEST(Profile, HiddenTimingsListTheKernelsInTheOrderTheyRun) {
  Engine e = builtConv(":build opt_level=0");
  run(e, ":set timings hidden");
  std::string byTime = output(e, ":profile 3"), inOrder = output(e, ":profile 3 sort=order");
  EXPECT_NE(byTime.find("in the order they run; timings hidden"), std::string::npos) << byTime;
  EXPECT_EQ(byTime, inOrder);
}

// By default the longest kernel comes first; top=K keeps K rows and sums the rest in one line,
// while the total still covers every kernel.
TEST(Profile, SortedByTimeWithTheRestSummed) {
  Engine e = builtConv(":build opt_level=0");
  std::string p = output(e, ":profile 3");
  std::vector<ProfileLine> rows = profileRows(p);
  ASSERT_EQ(rows.size(), 5u) << p;
  for (size_t i = 1; i + 1 < rows.size(); ++i)
    EXPECT_GE(rows[i - 1].ms, rows[i].ms) << p;
  EXPECT_NE(p.find("longest first"), std::string::npos) << p;
  p = output(e, ":profile 3 top=2");
  rows = profileRows(p);
  ASSERT_EQ(rows.size(), 3u) << p; // two kernels and the total
  EXPECT_EQ(rows.back().kernel, "total");
  EXPECT_NE(p.find("… 2 more kernels ("), std::string::npos) << p;
  EXPECT_EQ(output(e, ":profile top=0"), "error: top must be a positive integer, got '0'\n");
}

// A float64 kernel's share of the peak is of the float64 peak (half the float32 one: half the
// lanes per vector), and the footer names both.
TEST(Profile, AFloat64BuildIsMeasuredAgainstItsOwnPeak) {
  Engine e = builtConv(":build opt_level=0 dtype=float64");
  std::string p = output(e, ":profile 3");
  size_t at = p.find("; peak ");
  ASSERT_NE(at, std::string::npos) << p;
  double peak = std::stod(p.substr(at + 7));
  size_t f64 = p.find(" float32, ", at);
  ASSERT_NE(f64, std::string::npos) << p;
  double peak64 = std::stod(p.substr(f64 + 10));
  EXPECT_NEAR(peak64, peak / 2, 0.06) << p;
  EXPECT_NE(p.find(" float64 ("), std::string::npos) << p;
  for (const auto &r : profileRows(p))
    EXPECT_NEAR(r.pct, 100 * r.gflops / (peak / 2),
                0.05 + 100 * 0.005 / (peak / 2) + r.pct * 0.05 / (peak / 2))
        << r.kernel;
}

// Ctrl-C during :profile keeps the runs that finished and prints their table.
TEST(Profile, InterruptKeepsTheFinishedRuns) {
  Engine e = builtConv(":build opt_level=0");
  e.setProgress([](const std::string &text, double) {
    if (text == "profiling: run 3 of 50")
      requestInterrupt();
  });
  std::string p = output(e, ":profile 50");
  EXPECT_NE(p.find("interrupted: 2 of 50 runs, median per kernel"), std::string::npos) << p;
  EXPECT_EQ(profileRows(p).size(), 5u) << p;
  EXPECT_FALSE(interruptRequested());
}

// A kernel names the layers of the graph the build started from that it computes, with a
// shared path prefix printed once.
TEST(Profile, NamesTheLayersEachKernelFused) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1, 4, 8, 8))\n"
         "w = Variable(\"w\")\n"
         "c = conv2d(x, w, channels=4, kernel_size=(3, 3), padding=(1, 1), use_bias=False, "
         "name=\"/block/conv/Conv\")\n"
         "r = relu(c, name=\"/block/relu/Relu\")\n"
         ":graph r");
  run(e, ":build opt_level=2 param w=random");
  std::vector<ProfileLine> rows = profileRows(output(e, ":profile 2"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].kernel, "fuse_conv2d_relu");
  EXPECT_EQ(rows[0].layers, "/block/{conv/Conv, relu/Relu}");
}

TEST(BuildDTypes, AStringForAllInputsOrADictWithTheRestInferred) {
  auto inputDTypes = [](const std::string &buildLine) {
    Engine e;
    run(e, "x = Variable(\"x\", shape=(1, 3, 5, 5), dtype=1)\n"
           "y = conv2d(x, channels=2, kernel_size=(3,3))\n:graph y\n" +
               buildLine);
    const Graph &g = e.current()->graph;
    const IndexedGraph &idx = g.index();
    std::vector<std::string> names;
    for (uint32_t nid : idx.argNodes)
      names.emplace_back(dtypeName(static_cast<int>(g.attr("dtype")->ints[idx.entryId(nid, 0)])));
    return names;
  };
  using V = std::vector<std::string>;
  // NNVM's default dtype="float32" is a string: every input float32, x's own dtype=1 ignored.
  EXPECT_EQ(inputDTypes(":build"), (V{"float32", "float32", "float32"}));
  EXPECT_EQ(inputDTypes(":build dtype=float64"), (V{"float64", "float64", "float64"}));
  // A dict: the weight and bias follow x through conv2d's type rule.
  EXPECT_EQ(inputDTypes(":build dtype x=float64"), (V{"float64", "float64", "float64"}));
}

// A reduction that keeps its input's last axis runs its reduce loops outside whole vectors of that
// axis at opt_level 3 (each step a row of memory added to a row of results), and computes what
// the reference interpreter does; a last axis that is not whole vectors keeps the old loops.
TEST(FastReductions, KeptLastAxisIsVectorisedUnderTheReduceLoops) {
  for (int64_t width : {24, 20}) {
    SCOPED_TRACE("last axis " + std::to_string(width));
    Engine e;
    run(e, "x = Variable(\"x\", shape=(3, 40, " + std::to_string(width) +
               "))\n"
               "a = sum(x, axis=(1,))\n"
               "b = max(x, axis=(0,))\n"
               "c = mean(x, axis=(0, 1), keepdims=True)\n"
               "d = min(x * 2, axis=(1,), keepdims=True)\n"
               ":graph Group([a, b, c, d])\n"
               ":set target llvm -mcpu=znver3\n"
               ":build opt_level=3");
    std::string loops = output(e, ":lower fuse_sum");
    bool vectorised = loops.find("    for (k1, 0, 40) {\n      for (ax1.outer, 0, 3) {\n"
                                 "        vectorized (ax1.inner, 0, 8) {\n") != std::string::npos;
    EXPECT_EQ(vectorised, width == 24) << loops;
    std::string out = output(e, ":run");
    int outputs = 0;
    for (size_t at = out.find("max rel error "); at != std::string::npos;
         at = out.find("max rel error ", at + 1), ++outputs)
      EXPECT_LT(std::stod(out.substr(at + 14)), 1e-5) << out;
    EXPECT_EQ(outputs, 4) << out;
  }
}

// Python's nnvm.compiler.build passes each of the original's Graph.apply calls through
// nnvm.graph.Graph.apply: the hook sees every call in nnvm-spec §9's order, and the build with it
// is the build without it.
TEST(BuildHooks, EveryGraphApplyCallGoesThroughTheHookAndLoweringIsTold) {
  Engine e;
  run(e, kConvGraph);
  const Graph source = e.current()->graph;
  backend::BuildOptions o;
  o.params["w"] = ramp({4, 3, 3, 3}, 0.11);
  o.params["s"] = ramp({4, 1, 1}, 0.5);
  std::vector<std::string> calls;
  o.graphApply = [&](const Graph &g, const std::vector<std::string> &passes,
                     const std::function<Graph(const Graph &)> &run) {
    std::string label = passes.size() == 1 ? passes[0] : "[" + joinNames(passes) + "]";
    calls.push_back(label);
    return run(g);
  };
  std::vector<std::pair<std::string, std::string>> lowered;
  o.lowered = [&](const std::string &name, const std::string &loops) {
    lowered.emplace_back(name, loops);
  };
  backend::BuildOptions plain;
  plain.params = o.params;
  Graph hooked = backend::build(source, o, PassContext{});
  Graph unhooked = backend::build(source, plain, PassContext{});
  // With params, the dtypes are a dict (NNVM's _update_shape_dtype): InferType reads the rest.
  EXPECT_EQ(calls,
            (std::vector<std::string>{
                "SaveJSON", "CorrectLayout", "SaveJSON", "InferShape", "SaveJSON", "InferType",
                "[InferShape, SimplifyInference]", "PrecomputePrune", "SaveJSON", "InferShape",
                "SaveJSON", "InferShape", "InferType", "GraphFusePartition", "GraphFuseCompile"}));
  EXPECT_EQ(printGraphIR(hooked), printGraphIR(unhooked));
  const std::string funcs = printGraphIR(hooked);
  ASSERT_EQ(lowered.size(), 1u); // conv2d, relu and the precomputed scale fuse into one function
  EXPECT_NE(funcs.find("func_name='" + lowered[0].first + "'"), std::string::npos) << funcs;
  EXPECT_EQ(lowered[0].second,
            printLowered(backend::builtLibrary(hooked)->lowered.at(lowered[0].first)));
  // What the hook returns is what the build goes on with; its errors end the build.
  o.graphApply = [](const Graph &, const std::vector<std::string> &passes,
                    const std::function<Graph(const Graph &)> &) -> Graph {
    fail("refused ", passes[0]);
  };
  EXPECT_THROW(
      {
        try {
          backend::build(source, o, PassContext{});
        } catch (const Error &err) {
          EXPECT_STREQ(err.what(), "refused SaveJSON");
          throw;
        }
      },
      Error);
}

// A kernel on subnormal inputs: opt_level 3 flushes them by default (zeros, and the check says
// the reference kept them), `:set denormals keep` gives IEEE results, opt_level 2 keeps them by
// default and `:set denormals flush` flushes there too. The kernel is a parallel loop, so every
// thread of the pool runs in the mode the build chose.
TEST(Denormals, OptLevel3FlushesByDefaultAndKeepGivesIeeeResults) {
  struct Case {
    int optLevel;
    const char *mode;
    bool zeros;
  };
  for (Case c : {Case{3, "auto", true}, Case{3, "keep", false}, Case{2, "auto", false},
                 Case{2, "flush", true}}) {
    SCOPED_TRACE(std::to_string(c.optLevel) + " " + c.mode);
    Engine e;
    run(e, "x = Variable(\"x\", shape=(512, 1024))\ny = x * 0.5\n:graph y\n:set target llvm "
           "-mcpu=znver3\n:set denormals " +
               std::string(c.mode));
    run(e, ":build opt_level=" + std::to_string(c.optLevel));
    std::string out = output(e, ":run x=1e-39");
    EXPECT_NE(out.find(c.zeros ? "  sum 0\n" : "  sum 2.62144e-34\n"), std::string::npos) << out;
    EXPECT_EQ(out.find("(IEEE; the kernels flush subnormals)") != std::string::npos, c.zeros)
        << out;
  }
  Engine e;
  EXPECT_EQ(output(e, ":set denormals fast"),
            "error: denormals must be auto (flushed at opt_level 3, kept below), keep or flush, "
            "got 'fast'\n");
}

// A graph that rounds to steps in float (a QDQ export's QuantizeLinear): float32 sums that land
// on the other side of a rounding tie than the reference's doubles differ by a whole step, and
// :run's check says so next to the figure; without rounding there is no such note.
// :run's relative error takes each element against its own magnitude, but never against less
// than a millionth of the output's largest: an output of 0 off by 1e-3 beside one of 100 is
// 1e-3 / 1e-4 = 10 (it was 1e27), while 2.5 against 2 is 0.25 as before.
TEST(RunCheck, AnOutputNearZeroDoesNotMakeTheRelativeErrorHuge) {
  Tensor ref({3}, kFloat64), got({3}, kFloat64);
  ref.data = {100, 0, 2};
  got.data = {100, 1e-3, 2};
  auto [absErr, relErr] = difference(got, ref);
  EXPECT_DOUBLE_EQ(absErr, 1e-3);
  EXPECT_DOUBLE_EQ(relErr, 10);
  got.data = {100, 0, 2.5};
  EXPECT_DOUBLE_EQ(difference(got, ref).second, 0.25);
  Tensor zeros({2}, kFloat64);
  EXPECT_EQ(difference(zeros, zeros), (std::pair<double, double>{0, 0}));
}

TEST(RunCheck, ARoundingGraphSaysDifferencesOfWholeStepsAreTheRoundings) {
  const std::string note = "  note: the graph rounds values to quantization steps in float "
                           "arithmetic; a value near a rounding tie can land on the next step, so "
                           "differences of whole steps are the rounding's, not a wrong kernel's\n";
  Engine e;
  run(e, "x = Variable(\"x\", shape=(128, 512))\ny = round(dense(x, units=256) * 64.0)\n:graph "
         "y\n:set target llvm -mcpu=znver3\n:build opt_level=3");
  std::string out = output(e, ":run");
  EXPECT_NE(out.find("max abs error 1.0e+00"), std::string::npos) << out;
  EXPECT_NE(out.find(note), std::string::npos) << out;
  run(e, "z = dense(x, units=256) * 64.0\n:graph z\n:build opt_level=3");
  EXPECT_EQ(output(e, ":run").find("note:"), std::string::npos);
}
