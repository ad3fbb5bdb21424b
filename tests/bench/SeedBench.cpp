// SeedBench: compile time, run time, GFLOP/s and memory of what backend::build makes of the seed
// graphs, one larger convolution and three networks of the model zoo. Run by hand
// (`build/tests/bench/loupe_bench`), never by ctest.
#include "backend/Build.h"
#include "backend/GraphExecutor.h"
#include "core/DType.h"
#include "repl/Engine.h"

#include <benchmark/benchmark.h>

#include <random>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

using namespace loupe;

namespace {

// The graph `out` of a graph-language program (or, with no `out`, the graph the program's
// commands made, such as `:model`).
Graph graphOf(const std::string &program, const std::string &out) {
  Engine e;
  std::istringstream in(program + (out[0] ? "\n:graph " + std::string(out) : ""));
  std::string line;
  while (std::getline(in, line)) {
    std::ostringstream o, err;
    if (!e.execute(line, o, err))
      throw std::runtime_error(line + ": " + err.str());
  }
  return e.current()->graph;
}

struct Workload {
  const char *program;
  const char *out;
  std::map<std::string, Shape> shapes;
  int dtype;
};

// Seed 000: conv2d, then conv2d + add, on x (7, 3, 11, 13).
const Workload kSeed000 = {
    "x = Variable(\"x\")\nw = Variable(\"w\")\nb = Variable(\"b\")\n"
    "z = conv2d(data=x, weight=w, bias=b, channels=3, kernel_size=(5,5))\n"
    "z = z + conv2d(data=z, weight=w, bias=b, channels=3, kernel_size=(5,5), padding=[2,2])",
    "z",
    {{"x", {7, 3, 11, 13}}},
    kFloat32};

// Seed 001's tutorial network: two 13-channel 3x3 convolutions on (1, 13, 100, 100), a residual
// add, dense to 10, softmax, sum.
const char *kSeed001Program =
    "x = Variable(\"x\", shape=(1,13,100,100))\n"
    "z = relu(conv2d(data=x, channels=13, kernel_size=(3,3), padding=[1,1]))\n"
    "z = relu(conv2d(data=z, channels=13, kernel_size=(3,3), padding=[1,1]))\n"
    "z = sum(softmax(dense(flatten(x + z), units=10)), keepdims=True)";
const Workload kSeed001F64 = {kSeed001Program, "z", {}, kFloat64};
const Workload kSeed001F32 = {kSeed001Program, "z", {}, kFloat32};

// Whole networks of the model zoo at batch 1, 224x224 (weights as random inputs).
const Workload kSqueezenet = {":model squeezenet1.0", "", {}, kFloat32};
const Workload kResnet18 = {":model resnet-18", "", {}, kFloat32};
const Workload kMobilenet = {":model mobilenet", "", {}, kFloat32};

// A ResNet-style layer: 64 -> 64 channels, 3x3, on 56x56, with bias and relu.
const Workload kResNetConv = {"x = Variable(\"x\", shape=(1,64,56,56))\n"
                              "y = relu(conv2d(x, channels=64, kernel_size=(3,3), padding=(1,1)))",
                              "y",
                              {},
                              kFloat32};

backend::BuildOptions optionsFor(const Workload &w) {
  backend::BuildOptions o;
  o.shapes = w.shapes;
  o.defaultDType = w.dtype;
  return o;
}

void BM_Build(benchmark::State &state, const Workload *w) {
  Graph g = graphOf(w->program, w->out);
  for (auto _ : state) {
    Graph deploy = backend::build(g, optionsFor(*w), PassContext{});
    benchmark::DoNotOptimize(deploy);
  }
}

// One executor run per iteration (buffers, input copies and every kernel). The counters give
// the kernels' own share: their summed time per run and the GFLOP/s over it.
void BM_Run(benchmark::State &state, const Workload *w) {
  Graph deploy = backend::build(graphOf(w->program, w->out), optionsFor(*w), PassContext{});
  auto lib = backend::builtLibrary(deploy);
  const IndexedGraph &idx = deploy.index();
  const auto &shapes = deploy.attr("shape")->shapes;
  std::mt19937 rng(0);
  std::uniform_real_distribution<double> u(-1, 1);
  std::map<std::string, Tensor> in;
  for (uint32_t nid : idx.argNodes) {
    Tensor t(shapes[idx.entryId(nid, 0)], w->dtype);
    for (double &x : t.data)
      x = roundToDType(u(rng), w->dtype);
    in[idx.nodes[nid].node->name] = std::move(t);
  }
  double flops = 0;
  for (const auto &n : idx.nodes)
    if (!n.node->isVariable())
      flops += static_cast<double>(
          backend::countFlops(*lib->lowered.at(n.node->parsed.getStr("func_name")).schedule));
  double kernelMs = 0;
  for (auto _ : state) {
    backend::RunResult r = backend::runDeployGraph(deploy, in);
    for (const auto &[name, ms] : r.kernelMillis)
      kernelMs += ms;
    benchmark::DoNotOptimize(r);
  }
  double runs = static_cast<double>(state.iterations());
  state.counters["kernel_ms"] = kernelMs / runs;
  state.counters["kernel_GFLOP/s"] = flops * runs / (kernelMs * 1e6);
  state.counters["MFLOP"] = flops / 1e6;
  // PlanMemory's storage against one buffer per entry.
  double planned = 0, naive = 0;
  for (const backend::StorageSlot &slot : backend::storageSlots(deploy))
    planned += static_cast<double>(slot.bytes);
  const auto &dtypes = deploy.attr("dtype")->ints;
  for (uint32_t e = 0; e < idx.numEntries(); ++e)
    naive += static_cast<double>(numElements(shapes[e]) * (dtypes[e] == kFloat64 ? 8 : 4));
  state.counters["planned_MB"] = planned / 1e6;
  state.counters["naive_MB"] = naive / 1e6;
}

// `:build opt_level=3` of a zoo network with its params, as a user runs it, against the kernel
// cache: cold (emptied before each build) or warm (filled by a build before timing). The
// network and its params are made once, outside the timing; each iteration is one `:build`
// (then `:undo`, untimed, so the next builds the same graph). The cache lives in a folder of
// the benchmark's own.
void BM_BuildCached(benchmark::State &state, const char *model, bool warm) {
  std::string dir = "/tmp/loupe-bench-cache-" + std::to_string(::getpid());
  ::setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  Engine e;
  auto run = [&e](const std::string &input) {
    std::ostringstream o, err;
    if (!e.execute(input, o, err))
      throw std::runtime_error(input + ": " + err.str());
  };
  run(std::string(":model ") + model);
  run(":set cache clear");
  if (warm) {
    run(":build opt_level=3");
    run(":undo");
  }
  for (auto _ : state) {
    if (!warm) {
      state.PauseTiming();
      run(":set cache clear");
      state.ResumeTiming();
    }
    run(":build opt_level=3");
    state.PauseTiming();
    run(":undo");
    state.ResumeTiming();
  }
  run(":set cache clear");
}

} // namespace

BENCHMARK_CAPTURE(BM_Build, seed000, &kSeed000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Build, seed001_f64, &kSeed001F64)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Build, resnet_conv, &kResNetConv)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Build, squeezenet1_0, &kSqueezenet)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Build, resnet18, &kResnet18)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Build, mobilenet, &kMobilenet)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Run, seed000, &kSeed000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Run, seed001_f64, &kSeed001F64)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Run, seed001_f32, &kSeed001F32)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Run, resnet_conv, &kResNetConv)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Run, squeezenet1_0, &kSqueezenet)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Run, resnet18, &kResnet18)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Run, mobilenet, &kMobilenet)->Unit(benchmark::kMillisecond);

// The build-time table of the README: each network cold, then warm.
const bool kBuildCachedRegistered = [] {
  for (const char *model :
       {"squeezenet1.0", "resnet-18", "resnet-50", "densenet-121", "inception-v3"})
    for (bool warm : {false, true})
      benchmark::RegisterBenchmark(
          (std::string("BM_BuildCached/") + model + (warm ? "_warm" : "_cold")).c_str(),
          [model, warm](benchmark::State &s) { BM_BuildCached(s, model, warm); })
          ->Unit(benchmark::kMillisecond)
          ->Iterations(3);
  return true;
}();

BENCHMARK_MAIN();
