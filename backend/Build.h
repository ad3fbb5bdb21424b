// Build: nnvm.compiler.build — the pass pipeline of nnvm-spec §9 for an opt level, then every
// fused function lowered, scheduled and compiled; the result is the deploy graph whose `module`
// attribute carries the compiled code.
#pragma once

#include "backend/BuiltLibrary.h"
#include "backend/Codegen.h"
#include "core/Buffers.h"
#include "core/FusedModule.h"
#include "core/Graph.h"
#include "core/SymExpr.h"
#include "core/Tensor.h"
#include "passes/Pass.h"

#include <functional>
#include <map>
#include <memory>
#include <ostream>

namespace loupe::backend {

/// What `:build` takes besides the graph.
/// What the built kernels do with subnormal floats (`:set denormals`).
enum class Denormals {
  Auto,  ///< flush at opt_level 3 (the fast path), keep below (IEEE, as the seeds' builds)
  Keep,  ///< IEEE arithmetic: subnormal operands and results as they are
  Flush, ///< subnormal operands read as zero, subnormal results flushed (KernelFloatMode)
};

/// `mode`'s choice for a build at `optLevel`: whether its kernels flush subnormals.
bool flushesDenormals(Denormals mode, int optLevel);

struct BuildOptions {
  int optLevel = 2;
  Denormals denormals = Denormals::Auto;
  /// `precision=bf16`: the convolutions and matrix products compute in bfloat16
  /// (ToMixedPrecision, after AlterOpLayout at opt_level 3); float32 everywhere else.
  bool bf16 = false;
  std::map<std::string, Shape> shapes; ///< input shapes (else the variables' `shape` attribute)
  /// NNVM's dtype dict: these inputs' dtypes, the others inferred (from the graph's type rules
  /// and the variables' own `dtype`). When empty (and without params), NNVM's dtype string:
  /// every input `defaultDType`, whatever the variables say.
  std::map<std::string, int> dtypes;
  int defaultDType = 0; ///< float32
  /// Bound parameter values (NNVM's `params`); their shapes and dtypes count as given. At opt
  /// level 2 and up PrecomputePrune cuts off what depends only on them, and the cut part is
  /// evaluated once, so the built library's params are the values the deploy graph reads.
  std::map<std::string, Tensor> params;
  /// Bound parameter values the build reads in place and never changes (a session's: a
  /// network's weights are not copied to be built), used when `params` is empty; names the graph
  /// has no variable for are passed over. A caller that adds or converts params gives them all
  /// in `params`.
  const StoredTensors *sharedParams = nullptr;
  /// Given the params the build made (PrecomputePrune's packed weights and the rest), before the
  /// library keeps them: may replace a tensor by an equal one held elsewhere, so that builds of
  /// one network share its weights' bytes (a dynamic build's variants). Unset: kept as made.
  std::function<void(StoredTensors &)> shareParams;
  /// Compiled kernels are looked up here and stored here (none: every kernel compiled).
  std::shared_ptr<const KernelCache> cache;
  /// Told how far compilation is (see CompileOptions::progress).
  std::function<void(const CompileStats &)> progress;
  /// Tuning records to apply at opt level 3 (AutoTVM's ApplyHistoryBest): a log file, or a folder
  /// whose log for the target is used (TuningLog::fileFor); empty for none. Each function whose
  /// task has a record faster than its rule is lowered at that record's point.
  std::string tuning;
  /// A variant of a dynamic build: the build's fingerprint and the sizes bound. A function whose
  /// task the log has no record of takes the point that won at the nearest size tuned of its
  /// family (taskFamily, nearestPoint).
  std::string sizeScope;
  SymBindings sizes;
  /// `:build … generic`: a graph with size symbols is built once with generic kernels (their
  /// loops read the symbols at run time), which every size not specialized runs (DynamicBuild).
  bool generic = false;
  /// Set by DynamicBuild: build the symbolic graph itself, every function lowered to a generic
  /// kernel; fails when a pass or a function's lowering needs a symbol's size.
  bool symbolic = false;
  /// Where the warnings of reading the log go (a damaged line is skipped, never a failed build).
  std::vector<std::string> *warnings = nullptr;
  /// Applies the passes of one of the original's `Graph.apply` calls (a single pass, or a list
  /// applied as one call); `run` does the work. Unset, `run` is called directly. Python's
  /// `nnvm.compiler.build` sets it so that each call goes through `nnvm.graph.Graph.apply`, as
  /// NNVM's did, and a user who replaces that function sees every pass of the build.
  std::function<Graph(const Graph &g, const std::vector<std::string> &passes,
                      const std::function<Graph(const Graph &)> &run)>
      graphApply;
  /// Told each fused function's lowered loops as it is lowered (NNVM logged them at DEBUG level).
  std::function<void(const std::string &function, const std::string &loops)> lowered;
};

/// The canonicalising passes `build` runs at opt_level 3 before AlterOpLayout, in order: they
/// turn what exporters write out in small ops into the ops the fast schedules know (a QDQ
/// export's dequantize → op → quantize regions into integer ops, which QnnCanonicalize then
/// writes as 8-bit convolutions). Each is
/// skipped when `PassContext::disabledPass` names it (`:set disabled_pass`).
const std::vector<std::string> &canonicalizingPasses();

/// Every pass `build` may leave out when `PassContext::disabledPass` names it: the canonicalising
/// ones, then the layout and scale rewrites of opt_level 3 (AlterOpLayout, FoldScaleAxis,
/// SinkLayoutTransform), so that a user can see what each one is worth; the others make the
/// build.
const std::vector<std::string> &optionalPasses();

/// Runs the build. Passes go through the runner (so `ctx`'s instruments, such as the trace, see
/// each `Graph.apply` of the original, including the throw-away SaveJSON that graph.index
/// caused); with `trace`, each function's lowered loops are printed as `lower function NAME`.
/// Throws Error, with nothing changed, when an input shape is missing or anything fails.
/// `opts` is taken by value so that a caller done with its params can move them in (a
/// network's weights are hundreds of megabytes).
Graph build(const Graph &g, BuildOptions opts, const PassContext &ctx,
            std::ostream *trace = nullptr);

/// A built deploy graph with its functions lowered and compiled again under `opts`' tuning log
/// and kernel cache; its graph, params and output names are the same. `:tune`'s network check
/// builds the same network at the rules and at the best records so. Throws Error for a graph
/// that was not built.
Graph recompile(const Graph &deploy, const BuildOptions &opts);

/// `g` with `shape_inputs` for InferShape: the shape given for each input by name, unknown for
/// the others.
Graph withShapeInputs(Graph g, const std::map<std::string, Shape> &shapes);

} // namespace loupe::backend
