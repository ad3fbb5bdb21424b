// EvalBench: the graph language's evaluation time against the script's length — a residual
// ladder (`a1 = relu(a0) + x`, ...) of 1,000 to 20,000 statements. Linear means a statement costs
// the same however many came before. Run by hand (`build/tests/bench/loupe_eval_bench`).
#include "repl/Engine.h"

#include <benchmark/benchmark.h>

#include <sstream>
#include <stdexcept>
#include <string>

using namespace loupe;

namespace {

std::string ladder(int statements) {
  std::ostringstream s;
  s << "x = Variable(\"x\", shape=(1, 8))\na0 = relu(x)\n";
  for (int i = 1; i < statements; ++i)
    s << "a" << i << " = relu(a" << i - 1 << ")" << (i % 2 ? " + x" : "") << "\n";
  return s.str();
}

void BM_EvaluateLadder(benchmark::State &state) {
  int n = static_cast<int>(state.range(0));
  std::string script = ladder(n);
  for (auto _ : state) {
    Engine e;
    std::ostringstream out, err;
    if (!e.execute(script, out, err))
      throw std::runtime_error(err.str());
    benchmark::DoNotOptimize(e.variableNames().size());
  }
  // Seconds per statement.
  state.counters["per_statement"] = benchmark::Counter(
      n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_EvaluateLadder)
    ->Arg(1000)
    ->Arg(5000)
    ->Arg(10000)
    ->Arg(20000)
    ->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
