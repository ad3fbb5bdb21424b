// BenchUtil: what the kernel benchmark programs share — a zoo network's convolution shapes,
// graph-language programs built with the run's tuning records, and the timing of Loupe's kernels
// and of a oneDNN primitive over a benchmark's iterations.
#pragma once

#include "backend/GraphExecutor.h"
#include "core/Graph.h"
#include "repl/Engine.h"

#include <benchmark/benchmark.h>
#include <dnnl.hpp>
#include <pthreadpool.h>
#include <xnnpack.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace loupe::bench {

/// One convolution layer at batch 1: input channels and size, output channels, kernel, strides,
/// padding and groups.
struct ConvShape {
  int64_t c, h, w, k, kh, kw, sh, sw, ph, pw;
  int64_t groups = 1; ///< c for a depthwise convolution
  /// "64x56x56_k256_1x1_s1_p0" (and "_dw"): the name a layer's benchmarks and rows share.
  std::string name() const;
  int64_t oh() const { return (h + 2 * ph - kh) / sh + 1; }
  int64_t ow() const { return (w + 2 * pw - kw) / sw + 1; }
  /// Multiply-adds counted twice.
  double flops() const { return 2.0 * k * oh() * ow() * (c / groups) * kh * kw; }
  bool operator<(const ConvShape &o) const { return name() < o.name(); }
};

/// The tuning records Loupe's builds apply (a program's --tuning=off|on|FILE; "off" unless set).
extern std::string gTuning;

/// Reads the program's own --tuning=off|on|FILE into gTuning and hands every other argument to
/// Google Benchmark (benchmark::Initialize).
void initialize(int &argc, char **argv);

/// Runs graph-language lines in `e` with gTuning applied; throws std::runtime_error naming the
/// line that failed.
Engine &run(Engine &e, const std::string &program);

/// Every distinct ungrouped or depthwise convolution of a zoo network at batch 1.
std::vector<ConvShape> convShapes(const std::string &model);

/// Values in [-1, 1) for every float of oneDNN's memories.
void fillRandom(std::initializer_list<dnnl::memory *> memories, std::mt19937 &rng);

/// Milliseconds all of the state's iterations of a oneDNN primitive took, after one warm-up run.
double timeDnnl(benchmark::State &state, const dnnl::primitive &prim, dnnl::stream &strm,
                const std::unordered_map<int, dnnl::memory> &args);

/// Milliseconds all of the state's iterations of a created XNNPACK operator took, after
/// `setup` (given a pthreadpool of numThreads() threads, none for one) and one warm-up run; the
/// operator is deleted. Negative, with the state skipped, when the setup fails.
double timeXnnpack(benchmark::State &state, xnn_operator_t op,
                   const std::function<xnn_status(pthreadpool_t)> &setup);

/// A built graph's inputs bound: its params as :build bound them, values in [-1, 1) elsewhere.
void bindInputs(backend::GraphRuntime &rt, const Graph &g);

/// Milliseconds all of the state's iterations spent in the kernels whose names contain one of
/// `kernels` (every kernel when it is empty), after one warm-up run.
double timeKernels(benchmark::State &state, backend::GraphRuntime &rt,
                   const std::vector<std::string> &kernels);

/// Milliseconds all of the state's iterations spent in the named kernels (timeKernels) of the
/// graph that `program` (graph-language lines ending in a :build) builds.
double timeProgram(benchmark::State &state, const std::string &program,
                   const std::vector<std::string> &kernels);

} // namespace loupe::bench
