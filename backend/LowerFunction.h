// LowerFunction: a fused function of GraphFuseCompile's module, lowered to loops — its compute
// graph from each op's lowering rule, the default x86 schedule, and the loop statement.
#pragma once

#include "backend/schedule/Schedule.h"
#include "core/FusedModule.h"
#include "core/Tensor.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace loupe::backend {

/// A lowered function: arguments (inputs in the tvm_op's order, then outputs) as flat buffers,
/// the schedule chosen, and the loops.
struct LoweredFunction {
  std::string name;
  std::vector<loop::ComputeRef> inputs;  ///< placeholders `input0`, … in argument order
  std::vector<loop::ComputeRef> outputs; ///< the function's result stages
  std::vector<std::string> outputBuffers;
  std::shared_ptr<Schedule> schedule;
  loop::Stmt body;
  /// Made at opt level 3: the fast schedules, and floating-point contraction (FMA) allowed,
  /// which changes results in the last bits; below 3 the code computes exactly what the loops
  /// say, in their order.
  bool fast = false;
  /// Whether float multiplies and adds may contract to FMAs: at opt level 3 but in functions that
  /// make 8-bit integers, whose float arithmetic is quantization's (a requantize's product and
  /// sum rounded as the reference interpreter rounds them, bit for bit).
  bool contract = false;
  /// Provenance: for each buffer a stage writes, the nodes of the function's body graph its
  /// stores compute — the stage's own node and those of the stages inlined into it — in the
  /// body's order. The body's nodes carry the names of the graph the build partitioned.
  std::map<std::string, std::vector<std::string>> bufferNodes;
  std::vector<std::string> nodes; ///< the body's op nodes in its order
  /// A generic kernel's size symbols (lowered from a body with symbolic shapes), in the order
  /// of its last input, `loupe_sizes`: an int64 array of their values, read once at entry into
  /// the loop variables its extents and indices use. Empty for a kernel of fixed sizes.
  std::vector<std::string> sizeSymbols;
};

/// The name of a generic kernel's last input, the values of its size symbols.
inline constexpr const char *kSizesBuffer = "loupe_sizes";

/// Applies the default x86 schedules of nnvm-spec §11: injective stages inlined, the output
/// stage's outer axes fused and parallel; conv2d with `pad_temp` materialised (fuse N, C +
/// parallel), the convolution's N and C fused and parallel, W split by 16 with the inner part
/// vectorised and the kernel taps unrolled; reductions with their output axes fused.
void applyDefaultSchedule(Schedule &s);

/// opt_level 3's schedules (backend/x86/): NCHW[x]c convolutions register-tiled for the
/// host's vector width; functions without a fast schedule get the default one.
void applyFastSchedule(Schedule &s);

/// A point of a function's knob space to lower it at, and what it is (`:schedule` prints it).
struct TunedPoint {
  Config config;
  std::string source; ///< "record 12 of FILE: …", "candidate 3 of :tune"
};

/// Lowers one fused function, at `tuned`'s point of its schedule's space when given (opt level
/// 3), else at the schedule's rules. Throws Error naming the op when one of its ops has no
/// lowering.
LoweredFunction lowerFunction(const FusedFunction &f, const TunedPoint *tuned = nullptr);

/// Runs a lowered function with the loop-IR interpreter (inputs in argument order, any shape
/// with the right number of elements) and returns its outputs: lowering and schedules are
/// checked against the reference interpreter this way, without LLVM.
std::vector<Tensor> evalLowered(const LoweredFunction &f, const std::vector<Tensor> &args);

/// The function's loops as `:lower` prints them.
std::string printLowered(const LoweredFunction &f);

/// The function's loops as `:lower` prints them, line by line, with what each line computes:
/// what code generation's debug locations, `:lower FUNC nodes`, `:asm` and `:where` point at.
struct LoweredListing {
  std::vector<std::string> lines; ///< the listing, without line ends (line n is lines[n - 1])
  loop::StmtLines lineOf;         ///< each statement's first line
  /// Per line, the nodes the statement starting there computes (every store inside it); empty
  /// for closing braces.
  std::vector<std::vector<std::string>> nodes;
  /// Per line, whether its statement computes values itself (a store or a produce), so that a
  /// listing marks those and not every loop around them.
  std::vector<bool> computes;
  /// Per line, the line of the statement around its statement (0 at the top).
  std::vector<int> parent;
};

/// Lists `f`'s loops with their provenance.
LoweredListing listLowered(const LoweredFunction &f);

} // namespace loupe::backend
