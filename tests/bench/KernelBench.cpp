// KernelBench: opt_level 3's generated code against this machine's peak and against oneDNN and
// XNNPACK, in one run. The FP32 peak is measured by an FMA loop in this binary; every distinct
// convolution of resnet-18, resnet-50, squeezenet 1.0 and mobilenet (batch 1, depthwise ones
// too) is timed as Loupe's kernel, as oneDNN's blocked convolution and as XNNPACK's NHWC
// convolution on the same shape and threads; transformers' dense layers, batch_matmuls,
// layer_norm and softmax against oneDNN's; whole zoo networks end to end. oneDNN and XNNPACK
// are linked into this benchmark only. Run by hand, never by ctest:
//   LOUPE_NUM_THREADS=1 build/tests/bench/loupe_kernel_bench [--tuning=off|on|FILE]
// Loupe's kernels are built at their schedules' rules unless --tuning names records to apply
// (as `:set tuning`: "on" is this machine's log in $XDG_CACHE_HOME/loupe/tuning).
#include "BenchUtil.h"

#include "backend/Build.h"
#include "backend/GraphExecutor.h"
#include "backend/Peak.h"
#include "backend/Runtime.h"
#include "backend/schedule/Schedule.h"
#include "core/DType.h"
#include "repl/Engine.h"

#include <benchmark/benchmark.h>
#include <dnnl.hpp>
#include <omp.h>
#include <pthreadpool.h>
#include <xnnpack.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

using namespace loupe;
using namespace loupe::bench;

namespace {

// --- the machine's peak --------------------------------------------------------------------

double onePeak() { return backend::peakGflopsPerCore(); }

double peak() { return onePeak() * backend::numThreads(); }

void BM_PeakFMA(benchmark::State &state) {
  volatile int64_t iters = 1'000'000;
  for (auto _ : state)
    benchmark::DoNotOptimize(backend::fmaLoop(iters));
  state.counters["GFLOP/s"] = benchmark::Counter(
      1e6 * backend::fmaLoopFlopsPerIter() * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  state.counters["peak_1core_GFLOP/s"] = onePeak();
}

// The bfloat16 peak (vdpbf16ps), where the CPU has avx512_bf16; skipped elsewhere.
void BM_PeakBf16(benchmark::State &state) {
  if (backend::bf16LoopFlopsPerIter() == 0) {
    state.SkipWithError("no avx512_bf16 on this CPU");
    return;
  }
  volatile int64_t iters = 1'000'000;
  for (auto _ : state)
    benchmark::DoNotOptimize(backend::bf16Loop(iters));
  state.counters["GFLOP/s"] =
      benchmark::Counter(1e6 * backend::bf16LoopFlopsPerIter() * state.iterations() / 1e9,
                         benchmark::Counter::kIsRate);
  state.counters["peak_1core_GFLOP/s"] = backend::peakBf16GflopsPerCore();
}

// --- shared by the cases ------------------------------------------------------------------------

// --- the thread pool ---------------------------------------------------------------------------

void emptyBody(int64_t, int64_t, void *) {}

// The cost of launching and joining a parallel loop whose bodies do nothing (each kernel of a
// network pays it once per parallel loop).
void BM_ParallelForEmpty(benchmark::State &state) {
  int64_t n = state.range(0);
  for (auto _ : state)
    loupe_parallel_for(n, emptyBody, nullptr);
  state.counters["threads"] = backend::numThreads();
}

// --- convolution layers of the zoo ------------------------------------------------------------

std::map<std::string, double> loupeGflops, dnnlGflops, xnnGflops; // by layer, for the table

// A case's counters from the milliseconds all iterations took (per run under `msCounter`,
// GFLOP/s and % of peak); its GFLOP/s kept in `table` by name for the closing table.
void reportFlops(benchmark::State &state, const std::string &name, double flops, double totalMs,
                 const char *msCounter, std::map<std::string, double> &table) {
  double perRun = totalMs / static_cast<double>(state.iterations());
  double gflops = flops / (perRun * 1e6);
  state.counters[msCounter] = perRun;
  state.counters["GFLOP/s"] = gflops;
  state.counters["pct_peak"] = 100 * gflops / peak();
  table[name] = gflops;
}

// A convolution layer's counters.
void report(benchmark::State &state, const ConvShape &cs, double totalMs,
            std::map<std::string, double> &table) {
  reportFlops(state, cs.name(), cs.flops(), totalMs, "conv_ms", table);
}

// Loupe: the convolution built alone at opt_level 3 (weights bound, so packed at build time);
// only the convolution kernel is timed, not the layout transforms around it.
void BM_LoupeConv(benchmark::State &state, ConvShape cs) {
  std::ostringstream prog;
  prog << "x = Variable(\"x\", shape=(1," << cs.c << "," << cs.h << "," << cs.w << "))\n"
       << "y = conv2d(x, channels=" << cs.k << ", kernel_size=(" << cs.kh << "," << cs.kw
       << "), strides=(" << cs.sh << "," << cs.sw << "), padding=(" << cs.ph << "," << cs.pw
       << "), groups=" << cs.groups
       << ", use_bias=False, name=\"c\")\n:graph y\n:build opt_level=3 param c_weight=random\n";
  report(state, cs, timeProgram(state, prog.str(), {"conv2d"}), loupeGflops);
}

// oneDNN: the same convolution, layouts chosen by oneDNN (its blocked nChw16c on AVX-512),
// reorders outside the timing, as a framework would prepare them once.
void BM_OneDNNConv(benchmark::State &state, ConvShape cs) {
  using namespace dnnl;
  omp_set_num_threads(backend::numThreads());
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  // Depthwise: oneDNN's grouped weights (groups, out/group, in/group, kh, kw).
  memory::dims src = {1, cs.c, cs.h, cs.w},
               wei = cs.groups > 1
                         ? memory::dims{cs.groups, cs.k / cs.groups, cs.c / cs.groups, cs.kh, cs.kw}
                         : memory::dims{cs.k, cs.c, cs.kh, cs.kw},
               dst = {1, cs.k, cs.oh(), cs.ow()}, strides = {cs.sh, cs.sw}, pad = {cs.ph, cs.pw};
  auto f32 = memory::data_type::f32;
  memory::desc srcAny(src, f32, memory::format_tag::any), weiAny(wei, f32, memory::format_tag::any),
      dstAny(dst, f32, memory::format_tag::any);
  convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct, srcAny,
                              weiAny, dstAny, strides, pad, pad);
  convolution_forward::primitive_desc pd(d, eng);
  memory srcM(pd.src_desc(), eng), weiM(pd.weights_desc(), eng), dstM(pd.dst_desc(), eng);
  std::mt19937 rng(0);
  fillRandom({&srcM, &weiM}, rng);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, srcM}, {DNNL_ARG_WEIGHTS, weiM}, {DNNL_ARG_DST, dstM}};
  report(state, cs, timeDnnl(state, convolution_forward(pd), strm, args), dnnlGflops);
}

// XNNPACK (Debian's 2022 snapshot): the same convolution in NHWC, its weights packed when the
// operator is created, with a pthreadpool of the same threads (none for one, so it runs on the
// calling thread as Loupe's small kernels do).
void BM_XnnpackConv(benchmark::State &state, ConvShape cs) {
  static const bool ready = xnn_initialize(nullptr) == xnn_status_success;
  if (!ready) {
    state.SkipWithError("xnn_initialize failed");
    return;
  }
  auto n = [](int64_t v) { return static_cast<size_t>(v); };
  size_t groupIn = n(cs.c / cs.groups), groupOut = n(cs.k / cs.groups);
  std::vector<float> w(n(cs.k) * groupIn * n(cs.kh * cs.kw)),
      x(n(cs.h * cs.w * cs.c) + XNN_EXTRA_BYTES / sizeof(float)), y(n(cs.oh() * cs.ow() * cs.k));
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> u(-1, 1);
  for (std::vector<float> *v : {&w, &x})
    for (float &f : *v)
      f = u(rng);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  xnn_operator_t op = nullptr;
  auto u32 = [](int64_t v) { return static_cast<uint32_t>(v); };
  if (xnn_create_convolution2d_nhwc_f32(u32(cs.ph), u32(cs.pw), u32(cs.ph), u32(cs.pw), u32(cs.kh),
                                        u32(cs.kw), u32(cs.sh), u32(cs.sw), 1, 1, u32(cs.groups),
                                        groupIn, groupOut, n(cs.c), n(cs.k), w.data(), nullptr,
                                        -kInf, kInf, 0, &op) != xnn_status_success) {
    state.SkipWithError("xnn_create_convolution2d_nhwc_f32 failed");
    return;
  }
  double total = timeXnnpack(state, op, [&](pthreadpool_t pool) {
    return xnn_setup_convolution2d_nhwc_f32(op, 1, n(cs.h), n(cs.w), x.data(), y.data(), pool);
  });
  if (total >= 0)
    report(state, cs, total, xnnGflops);
}

// --- row normalisations of transformers -------------------------------------------------------

// layer_norm over the last axis (BERT-base's and ViT-B/16's tokens of 768) and softmax over
// attention scores (12 heads x 128 x 128, 12 x 197 x 197): memory-bound, so reported as GB/s of
// one read and one write of the tensor.
struct RowCase {
  const char *op; ///< "layer_norm" or "softmax"
  int64_t rows, cols;
  std::string name() const {
    return std::string(op) + "_" + std::to_string(rows) + "x" + std::to_string(cols);
  }
  double bytes() const { return 2.0 * 4 * static_cast<double>(rows * cols); }
};

std::map<std::string, double> loupeRowMs, dnnlRowMs; // by case, for the table

void reportRow(benchmark::State &state, const RowCase &rc, double totalMs,
               std::map<std::string, double> &table) {
  double perRun = totalMs / static_cast<double>(state.iterations());
  state.counters["kernel_ms"] = perRun;
  state.counters["GB/s"] = rc.bytes() / (perRun * 1e6);
  table[rc.name()] = perRun;
}

void BM_LoupeRow(benchmark::State &state, RowCase rc) {
  std::string x = "(" + std::to_string(rc.rows) + ", " + std::to_string(rc.cols) + ")";
  std::string c = "(" + std::to_string(rc.cols) + ",)";
  std::string prog = "x = Variable(\"x\", shape=" + x + ")\n";
  prog += std::string(rc.op) == "softmax"
              ? "y = softmax(x)\n"
              : "g = Variable(\"g\", shape=" + c + ")\nb = Variable(\"b\", shape=" + c +
                    ")\ny = layer_norm(x, g, b)[0]\n";
  reportRow(state, rc, timeProgram(state, prog + ":graph y\n:build opt_level=3 dtype=float32", {}),
            loupeRowMs);
}

// oneDNN's layer normalization (scale and shift) or softmax on the same plain (rows, cols) tensor.
void BM_OneDNNRow(benchmark::State &state, RowCase rc) {
  using namespace dnnl;
  omp_set_num_threads(backend::numThreads());
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  memory::desc data({rc.rows, rc.cols}, memory::data_type::f32, memory::format_tag::ab);
  memory src(data, eng), dst(data, eng);
  std::mt19937 rng(0);
  fillRandom({&src}, rng);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
  primitive prim;
  if (std::string(rc.op) == "softmax") {
    softmax_forward::primitive_desc pd(softmax_forward::desc(prop_kind::forward_inference, data, 1),
                                       eng);
    prim = softmax_forward(pd);
  } else {
    layer_normalization_forward::primitive_desc pd(
        layer_normalization_forward::desc(prop_kind::forward_inference, data, 1e-5f,
                                          normalization_flags::use_scale |
                                              normalization_flags::use_shift),
        eng);
    memory scale(pd.weights_desc(), eng), shift(pd.weights_desc(), eng);
    fillRandom({&scale, &shift}, rng);
    args[DNNL_ARG_SCALE] = scale;
    args[DNNL_ARG_SHIFT] = shift;
    prim = layer_normalization_forward(pd);
  }
  reportRow(state, rc, timeDnnl(state, prim, strm, args), dnnlRowMs);
}

// --- transformer matrix products ------------------------------------------------------------

// BERT-base's and ViT-B/16's products at one sequence: dense layers (tokens x in) x (in x out)
// with the weight bound at build time, and the attention's batch_matmuls over 12 heads (scores
// Q K^T and context P V), both operands inputs. oneDNN's matmul with its weights in the layout
// it picks (reordered outside the timing, as for the convolutions).
struct MatmulCase {
  const char *name;
  int64_t batch, m, k, n;
  bool transposeB; ///< B given as (n, k): the scores' K
  double flops() const { return 2.0 * static_cast<double>(batch * m * k * n); }
};

std::map<std::string, double> loupeMatmul, dnnlMatmul; // GFLOP/s by case, for the table

void reportMatmul(benchmark::State &state, const MatmulCase &mc, double totalMs,
                  std::map<std::string, double> &table) {
  reportFlops(state, mc.name, mc.flops(), totalMs, "kernel_ms", table);
}

void BM_LoupeMatmul(benchmark::State &state, MatmulCase mc) {
  auto dims = [](std::initializer_list<int64_t> d) {
    std::string out;
    for (int64_t v : d)
      out += (out.empty() ? "(" : ", ") + std::to_string(v);
    return out + ")";
  };
  std::string prog;
  if (mc.batch == 1)
    prog = "a = Variable(\"a\", shape=" + dims({mc.m, mc.k}) +
           ")\ny = dense(a, units=" + std::to_string(mc.n) +
           ", use_bias=False, name=\"d\")\n:graph y\n" +
           ":build opt_level=3 dtype=float32 param d_weight=random\n";
  else
    prog =
        "a = Variable(\"a\", shape=" + dims({mc.batch, mc.m, mc.k}) + ")\nb = Variable(\"b\", " +
        "shape=" + (mc.transposeB ? dims({mc.batch, mc.n, mc.k}) : dims({mc.batch, mc.k, mc.n})) +
        ")\ny = batch_matmul(a, b, transpose_b=" + (mc.transposeB ? "True" : "False") +
        ")\n:graph y\n:build opt_level=3 dtype=float32\n";
  reportMatmul(state, mc, timeProgram(state, prog, {"dense", "batch_matmul"}), loupeMatmul);
}

void BM_OneDNNMatmul(benchmark::State &state, MatmulCase mc) {
  using namespace dnnl;
  omp_set_num_threads(backend::numThreads());
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  auto f32 = memory::data_type::f32;
  memory::desc src({mc.batch, mc.m, mc.k}, f32, memory::format_tag::abc),
      wei({mc.batch, mc.k, mc.n}, f32,
          mc.transposeB ? memory::format_tag::acb : memory::format_tag::abc),
      dst({mc.batch, mc.m, mc.n}, f32, memory::format_tag::abc);
  // A dense layer's weight is a constant: oneDNN may pack it in its own layout beforehand.
  memory::desc weiPd =
      mc.batch == 1 ? memory::desc({mc.batch, mc.k, mc.n}, f32, memory::format_tag::any) : wei;
  matmul::primitive_desc pd(matmul::desc(src, weiPd, dst), eng);
  memory srcM(pd.src_desc(), eng), weiM(pd.weights_desc(), eng), dstM(pd.dst_desc(), eng);
  std::mt19937 rng(0);
  fillRandom({&srcM, &weiM}, rng);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, srcM}, {DNNL_ARG_WEIGHTS, weiM}, {DNNL_ARG_DST, dstM}};
  reportMatmul(state, mc, timeDnnl(state, matmul(pd), strm, args), dnnlMatmul);
}

// --- whole networks ---------------------------------------------------------------------------

struct Net {
  const char *name;
  const char *program; ///< graph-language lines ending in a graph with its params bound
  const char *build;
};

const char *kTutorial = "x = Variable(\"x\", shape=(1,13,100,100))\n"
                        "z = relu(conv2d(data=x, channels=13, kernel_size=(3,3), padding=[1,1]))\n"
                        "z = relu(conv2d(data=z, channels=13, kernel_size=(3,3), padding=[1,1]))\n"
                        "z = sum(softmax(dense(flatten(x + z), units=10)), keepdims=True)\n"
                        ":graph z";
// The tutorial's weights bound at build time, as a deployed model has them.
#define kTutorialParams                                                                            \
  "param conv2d0_weight=random conv2d0_bias=random conv2d1_weight=random conv2d1_bias=random "     \
  "dense0_weight=random dense0_bias=random"

// End to end at opt_level 3 (every kernel, params bound and loaded once): ms per image,
// GFLOP/s over the kernels and % of this machine's peak at the threads used.
void BM_Network(benchmark::State &state, Net net) {
  Engine e;
  run(e, std::string(net.program) + "\n" + net.build);
  const Graph &g = e.current()->graph;
  auto lib = backend::builtLibrary(g);
  backend::GraphRuntime rt(g);
  bindInputs(rt, g);
  const IndexedGraph &idx = g.index();
  double flops = 0;
  for (const auto &n : idx.nodes)
    if (!n.node->isVariable())
      flops += static_cast<double>(
          backend::countFlops(*lib->lowered.at(n.node->parsed.getStr("func_name")).schedule));
  rt.run();
  for (auto _ : state)
    benchmark::DoNotOptimize(rt.run());
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops / 1e9 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["MFLOP"] = flops / 1e6;
  state.counters["peak_GFLOP/s"] = peak();
}

} // namespace

int main(int argc, char **argv) {
  initialize(argc, argv);
  benchmark::RegisterBenchmark("BM_PeakFMA", BM_PeakFMA);
  benchmark::RegisterBenchmark("BM_PeakBf16", BM_PeakBf16);
  benchmark::RegisterBenchmark("BM_ParallelForEmpty", BM_ParallelForEmpty)->Arg(2)->Arg(1024);
  std::set<ConvShape> seen;
  for (const char *model : {"resnet-18_v1", "resnet-50_v1", "squeezenet1.0", "mobilenet"})
    for (const ConvShape &cs : convShapes(model))
      if (seen.insert(cs).second) {
        benchmark::RegisterBenchmark(("BM_LoupeConv/" + cs.name()).c_str(), BM_LoupeConv, cs)
            ->Unit(benchmark::kMillisecond)
            ->MinTime(0.3);
        benchmark::RegisterBenchmark(("BM_OneDNNConv/" + cs.name()).c_str(), BM_OneDNNConv, cs)
            ->Unit(benchmark::kMillisecond)
            ->MinTime(0.3);
        benchmark::RegisterBenchmark(("BM_XnnpackConv/" + cs.name()).c_str(), BM_XnnpackConv, cs)
            ->Unit(benchmark::kMillisecond)
            ->MinTime(0.3);
      }
  for (RowCase rc : {RowCase{"layer_norm", 128, 768}, RowCase{"layer_norm", 197, 768},
                     RowCase{"softmax", 1536, 128}, RowCase{"softmax", 2364, 197}}) {
    benchmark::RegisterBenchmark(("BM_LoupeRow/" + rc.name()).c_str(), BM_LoupeRow, rc)
        ->MinTime(0.3);
    benchmark::RegisterBenchmark(("BM_OneDNNRow/" + rc.name()).c_str(), BM_OneDNNRow, rc)
        ->MinTime(0.3);
  }
  for (MatmulCase mc : {MatmulCase{"bert_qkv_768x768", 1, 128, 768, 768, false},
                        MatmulCase{"bert_ffn1_768x3072", 1, 128, 768, 3072, false},
                        MatmulCase{"bert_ffn2_3072x768", 1, 128, 3072, 768, false},
                        MatmulCase{"bert_scores_12x128x64x128", 12, 128, 64, 128, true},
                        MatmulCase{"bert_context_12x128x128x64", 12, 128, 128, 64, false},
                        MatmulCase{"vit_qkv_768x768", 1, 197, 768, 768, false},
                        MatmulCase{"vit_scores_12x197x64x197", 12, 197, 64, 197, true},
                        MatmulCase{"vit_context_12x197x197x64", 12, 197, 197, 64, false}}) {
    benchmark::RegisterBenchmark((std::string("BM_LoupeMatmul/") + mc.name).c_str(), BM_LoupeMatmul,
                                 mc)
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.3);
    benchmark::RegisterBenchmark((std::string("BM_OneDNNMatmul/") + mc.name).c_str(),
                                 BM_OneDNNMatmul, mc)
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.3);
  }
  const Net nets[] = {
      {"tutorial_f32", kTutorial, ":build opt_level=3 dtype=float32 " kTutorialParams},
      {"tutorial_f64", kTutorial, ":build opt_level=3 dtype=float64 " kTutorialParams},
      {"squeezenet1.0", ":model squeezenet1.0", ":build opt_level=3"},
      {"resnet-18", ":model resnet-18_v1", ":build opt_level=3"},
      {"resnet-50", ":model resnet-50_v1", ":build opt_level=3"},
      {"mobilenet", ":model mobilenet", ":build opt_level=3"},
      {"densenet-121", ":model densenet-121", ":build opt_level=3"},
      {"inception-v3", ":model inception-v3", ":build opt_level=3"},
      {"bert-base", ":model bert-base", ":build opt_level=3"},
      {"vit-b16", ":model vit-b16", ":build opt_level=3"},
  };
  for (const Net &n : nets)
    benchmark::RegisterBenchmark((std::string("BM_Network/") + n.name).c_str(), BM_Network, n)
        ->Unit(benchmark::kMillisecond)
        ->MinTime(1.0);
  benchmark::RunSpecifiedBenchmarks();
  if (!loupeGflops.empty()) {
    std::printf("\nthreads %d, FP32 peak %.1f GFLOP/s (%.1f per core, measured above), "
                "tuning records %s\n",
                backend::numThreads(), peak(), onePeak(), gTuning.c_str());
    std::printf("%-28s %10s %10s %7s %10s %7s\n", "layer", "Loupe", "oneDNN", "ratio", "XNNPACK",
                "ratio");
    std::vector<double> ratios;
    for (const auto &[name, l] : loupeGflops) {
      auto it = dnnlGflops.find(name);
      if (it == dnnlGflops.end())
        continue;
      ratios.push_back(l / it->second);
      double xnn = xnnGflops.count(name) ? xnnGflops.at(name) : 0;
      std::printf("%-28s %10.1f %10.1f %7.2f %10.1f %7.2f\n", name.c_str(), l, it->second,
                  ratios.back(), xnn, xnn > 0 ? l / xnn : 0.0);
    }
    if (!ratios.empty()) {
      std::sort(ratios.begin(), ratios.end());
      std::printf("median ratio %.2f, lowest %.2f over %zu layers\n", ratios[ratios.size() / 2],
                  ratios.front(), ratios.size());
    }
  }
  if (!loupeMatmul.empty()) {
    std::printf("\n%-28s %10s %10s %7s\n", "matmul (GFLOP/s)", "Loupe", "oneDNN", "ratio");
    for (const auto &[name, l] : loupeMatmul)
      if (auto it = dnnlMatmul.find(name); it != dnnlMatmul.end())
        std::printf("%-28s %10.1f %10.1f %7.2f\n", name.c_str(), l, it->second, l / it->second);
  }
  if (!loupeRowMs.empty()) {
    std::printf("\n%-28s %10s %10s %7s\n", "row op (ms)", "Loupe", "oneDNN", "ratio");
    for (const auto &[name, l] : loupeRowMs)
      if (auto it = dnnlRowMs.find(name); it != dnnlRowMs.end())
        std::printf("%-28s %10.4f %10.4f %7.2f\n", name.c_str(), l, it->second, it->second / l);
  }
  benchmark::Shutdown();
  return 0;
}
