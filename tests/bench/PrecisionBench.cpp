// PrecisionBench: opt_level 3's 8-bit and bfloat16 convolutions against oneDNN's and XNNPACK's,
// layer by layer, in one run. Every distinct ungrouped convolution of resnet-50 (batch 1) is
// timed as Loupe's 8-bit kernel — uint8 data and int8 weights summed in int32 and requantized to
// uint8 in its epilogue, what FakeQuantizationToInteger makes of a QDQ export's convolution — as
// oneDNN's u8 × s8 → u8 convolution with an output scale and as XNNPACK's qs8 one (NHWC); and,
// where the CPU has avx512_bf16, as Loupe's bfloat16 kernel (`precision=bf16`: vdpbf16ps) against
// oneDNN's bf16 × bf16 → f32 one. Rates against this machine's int8 (vpdpbusd) and bfloat16
// (vdpbf16ps) peaks; oneDNN's implementation is named in each row's label. oneDNN and XNNPACK are
// linked into this benchmark only. Run by hand, never by ctest:
//   LOUPE_NUM_THREADS=1 build/tests/bench/loupe_precision_bench [--tuning=off|on|FILE]
#include "BenchUtil.h"

#include "backend/Peak.h"
#include "backend/Runtime.h"

#include <benchmark/benchmark.h>
#include <dnnl.hpp>
#include <omp.h>
#include <pthreadpool.h>
#include <xnnpack.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <vector>

using namespace loupe;
using namespace loupe::bench;

namespace {

// Per layer, Loupe's and the peers' rates (GOP/s or GFLOP/s), for the closing tables.
std::map<std::string, double> loupeInt8, dnnlInt8, xnnInt8, loupeBf16, dnnlBf16;

// The requantize's scales: an accumulator step of 1e-4 into output steps of 0.05.
constexpr float kAccScale = 1e-4f, kOutScale = 0.05f;

// A case's counters (per-run ms, the rate, its share of `peak`) and its rate kept by layer.
void report(benchmark::State &state, const ConvShape &cs, double totalMs, double peak,
            std::map<std::string, double> &table) {
  double perRun = totalMs / static_cast<double>(state.iterations());
  double rate = cs.flops() / (perRun * 1e6);
  state.counters["conv_ms"] = perRun;
  state.counters["G(FL)OP/s"] = rate;
  state.counters["pct_peak"] = peak > 0 ? 100 * rate / peak : 0;
  table[cs.name()] = rate;
}

double int8Peak() { return backend::peakInt8GopsPerCore() * backend::numThreads(); }
double bf16Peak() { return backend::peakBf16GflopsPerCore() * backend::numThreads(); }

// The convolution's attributes in the graph language.
std::string convAttrs(const ConvShape &cs) {
  std::ostringstream a;
  a << "channels=" << cs.k << ", kernel_size=(" << cs.kh << "," << cs.kw << "), strides=(" << cs.sh
    << "," << cs.sw << "), padding=(" << cs.ph << "," << cs.pw << "), use_bias=False";
  return a.str();
}

// Random bytes in every element of oneDNN's memories (8-bit data and weights).
void fillBytes(std::initializer_list<dnnl::memory *> memories, std::mt19937 &rng) {
  std::uniform_int_distribution<int> u(0, 255);
  for (dnnl::memory *m : memories) {
    auto *p = static_cast<uint8_t *>(m->get_data_handle());
    for (size_t i = 0; i < m->get_desc().get_size(); ++i)
      p[i] = static_cast<uint8_t>(u(rng));
  }
}

// Loupe: the 8-bit convolution and its requantize built alone at opt_level 3 (weights bound,
// packed at build time); only the convolution's kernel is timed.
void BM_LoupeConvInt8(benchmark::State &state, ConvShape cs) {
  std::ostringstream prog;
  prog << "x = Variable(\"x\", shape=(1," << cs.c << "," << cs.h << "," << cs.w << "), dtype=3)\n"
       << "w = Variable(\"w\", shape=(" << cs.k << "," << cs.c << "," << cs.kh << "," << cs.kw
       << "), dtype=5)\n"
       << "acc = conv2d(x, w, " << convAttrs(cs) << ", out_dtype=\"int32\", name=\"c\")\n"
       << "y = qnn.requantize(acc, const([" << kAccScale << "], dtype=\"float32\"), "
       << "const([0], dtype=\"int32\"), const([" << kOutScale << "], dtype=\"float32\"), "
       << "const([0], dtype=\"uint8\"), out_dtype=\"uint8\", compute_dtype=\"float32\")\n"
       << ":graph y\n:build opt_level=3 param w=random\n";
  report(state, cs, timeProgram(state, prog.str(), {"conv2d"}), int8Peak(), loupeInt8);
}

// Milliseconds all iterations of oneDNN's direct convolution of `cs` took, with the given
// operand types and attributes, layouts its own (blocked), reorders outside the timing; its
// implementation's name is the row's label.
double timeOneDNNConv(benchmark::State &state, const ConvShape &cs, dnnl::memory::data_type src,
                      dnnl::memory::data_type wei, dnnl::memory::data_type dst,
                      const dnnl::primitive_attr &attr) {
  using namespace dnnl;
  omp_set_num_threads(backend::numThreads());
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  memory::dims srcDims = {1, cs.c, cs.h, cs.w}, weiDims = {cs.k, cs.c, cs.kh, cs.kw},
               dstDims = {1, cs.k, cs.oh(), cs.ow()}, strides = {cs.sh, cs.sw},
               pad = {cs.ph, cs.pw};
  memory::desc srcAny(srcDims, src, memory::format_tag::any),
      weiAny(weiDims, wei, memory::format_tag::any), dstAny(dstDims, dst, memory::format_tag::any);
  convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct, srcAny,
                              weiAny, dstAny, strides, pad, pad);
  convolution_forward::primitive_desc pd(d, attr, eng);
  state.SetLabel(pd.impl_info_str());
  memory srcM(pd.src_desc(), eng), weiM(pd.weights_desc(), eng), dstM(pd.dst_desc(), eng);
  std::mt19937 rng(0);
  fillBytes({&srcM, &weiM}, rng);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, srcM}, {DNNL_ARG_WEIGHTS, weiM}, {DNNL_ARG_DST, dstM}};
  return timeDnnl(state, convolution_forward(pd), strm, args);
}

// oneDNN: u8 × s8 → u8 with the same output scale.
void BM_OneDNNConvInt8(benchmark::State &state, ConvShape cs) {
  using dt = dnnl::memory::data_type;
  dnnl::primitive_attr attr;
  attr.set_output_scales(0, {kAccScale / kOutScale});
  report(state, cs, timeOneDNNConv(state, cs, dt::u8, dt::s8, dt::u8, attr), int8Peak(), dnnlInt8);
}

// XNNPACK (Debian's 2022 snapshot): its qs8 convolution in NHWC, weights packed when the
// operator is created, a pthreadpool of the same threads (none for one).
void BM_XnnpackConvInt8(benchmark::State &state, ConvShape cs) {
  static const bool ready = xnn_initialize(nullptr) == xnn_status_success;
  if (!ready) {
    state.SkipWithError("xnn_initialize failed");
    return;
  }
  auto n = [](int64_t v) { return static_cast<size_t>(v); };
  auto u32 = [](int64_t v) { return static_cast<uint32_t>(v); };
  std::vector<int8_t> w(n(cs.k * cs.c * cs.kh * cs.kw)), x(n(cs.h * cs.w * cs.c) + XNN_EXTRA_BYTES),
      y(n(cs.oh() * cs.ow() * cs.k));
  std::mt19937 rng(0);
  std::uniform_int_distribution<int> u(-128, 127);
  for (std::vector<int8_t> *v : {&w, &x})
    for (int8_t &b : *v)
      b = static_cast<int8_t>(u(rng));
  xnn_operator_t op = nullptr;
  if (xnn_create_convolution2d_nhwc_qs8(
          u32(cs.ph), u32(cs.pw), u32(cs.ph), u32(cs.pw), u32(cs.kh), u32(cs.kw), u32(cs.sh),
          u32(cs.sw), 1, 1, 1, n(cs.c), n(cs.k), n(cs.c), n(cs.k), 0, 0.05f, kAccScale / 0.05f,
          w.data(), nullptr, 0, kOutScale, -128, 127, 0, &op) != xnn_status_success) {
    state.SkipWithError("xnn_create_convolution2d_nhwc_qs8 failed");
    return;
  }
  double total = timeXnnpack(state, op, [&](pthreadpool_t pool) {
    return xnn_setup_convolution2d_nhwc_qs8(op, 1, n(cs.h), n(cs.w), x.data(), y.data(), pool);
  });
  if (total >= 0)
    report(state, cs, total, int8Peak(), xnnInt8);
}

// Loupe: the float convolution built at opt_level 3 with precision=bf16 (its weight cast and
// packed in pairs at build time); only the convolution's kernel is timed. Skipped without
// avx512_bf16, where that build is refused.
void BM_LoupeConvBf16(benchmark::State &state, ConvShape cs) {
  if (backend::peakBf16GflopsPerCore() == 0) {
    state.SkipWithError("no avx512_bf16 on this CPU");
    return;
  }
  std::ostringstream prog;
  prog << "x = Variable(\"x\", shape=(1," << cs.c << "," << cs.h << "," << cs.w << "))\n"
       << "y = conv2d(x, " << convAttrs(cs) << ", name=\"c\")\n"
       << ":graph y\n:build opt_level=3 precision=bf16 param c_weight=random\n";
  report(state, cs, timeProgram(state, prog.str(), {"conv2d"}), bf16Peak(), loupeBf16);
}

// oneDNN: bf16 × bf16 → f32.
void BM_OneDNNConvBf16(benchmark::State &state, ConvShape cs) {
  using dt = dnnl::memory::data_type;
  report(state, cs, timeOneDNNConv(state, cs, dt::bf16, dt::bf16, dt::f32, {}), bf16Peak(),
         dnnlBf16);
}

// The closing table of one precision: per layer Loupe's rate, each peer's and Loupe's ratio to
// it, then the median ratio to the first peer.
void printTable(const char *title, const std::map<std::string, double> &loupe,
                const std::map<std::string, double> &dnnl,
                const std::map<std::string, double> *xnn) {
  if (loupe.empty())
    return;
  std::printf("\n%-28s %10s %10s %7s", title, "Loupe", "oneDNN", "ratio");
  if (xnn)
    std::printf(" %10s %7s", "XNNPACK", "ratio");
  std::printf("\n");
  std::vector<double> ratios;
  for (const auto &[name, l] : loupe) {
    auto it = dnnl.find(name);
    if (it == dnnl.end())
      continue;
    ratios.push_back(l / it->second);
    std::printf("%-28s %10.1f %10.1f %7.2f", name.c_str(), l, it->second, ratios.back());
    if (xnn) {
      double x = xnn->count(name) ? xnn->at(name) : 0;
      std::printf(" %10.1f %7.2f", x, x > 0 ? l / x : 0.0);
    }
    std::printf("\n");
  }
  if (!ratios.empty()) {
    std::sort(ratios.begin(), ratios.end());
    std::printf("median ratio to oneDNN %.2f, lowest %.2f over %zu layers\n",
                ratios[ratios.size() / 2], ratios.front(), ratios.size());
  }
}

} // namespace

int main(int argc, char **argv) {
  initialize(argc, argv);
  std::set<ConvShape> seen;
  for (const ConvShape &cs : convShapes("resnet-50_v1"))
    if (cs.groups == 1 && seen.insert(cs).second) {
      auto add = [&](const char *what, void (*fn)(benchmark::State &, ConvShape)) {
        benchmark::RegisterBenchmark((std::string(what) + "/" + cs.name()).c_str(), fn, cs)
            ->Unit(benchmark::kMillisecond)
            ->MinTime(0.3);
      };
      add("BM_LoupeConvInt8", BM_LoupeConvInt8);
      add("BM_OneDNNConvInt8", BM_OneDNNConvInt8);
      add("BM_XnnpackConvInt8", BM_XnnpackConvInt8);
      add("BM_LoupeConvBf16", BM_LoupeConvBf16);
      add("BM_OneDNNConvBf16", BM_OneDNNConvBf16);
    }
  benchmark::RunSpecifiedBenchmarks();
  std::printf("\nthreads %d, int8 peak %.1f GOP/s (vpdpbusd loop: %.1f a core), bfloat16 peak %.1f "
              "GFLOP/s (vdpbf16ps loop: %.1f a core), tuning records %s\n",
              backend::numThreads(), int8Peak(), backend::peakInt8GopsPerCore(), bf16Peak(),
              backend::peakBf16GflopsPerCore(), gTuning.c_str());
  printTable("int8 layer (GOP/s)", loupeInt8, dnnlInt8, &xnnInt8);
  printTable("bfloat16 layer (GFLOP/s)", loupeBf16, dnnlBf16, nullptr);
  benchmark::Shutdown();
  return 0;
}
