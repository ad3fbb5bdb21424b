// FastSchedules: the opt_level 3 schedules for x86 with AVX2 or AVX-512 (topi's x86 schedules
// with their fallback configurations), one file per op family in this folder.
#pragma once

#include "backend/schedule/Schedule.h"

namespace loupe::backend::x86 {

/// What the schedules take a symbolic extent (a generic kernel's rows, batch*seq) to be: more
/// than any tile of it, its last tile guarded.
inline constexpr int64_t kSymbolicExtent = int64_t{1} << 20;

/// A stage's extent along axis `d`: its size, or kSymbolicExtent for a symbolic one.
inline int64_t extentOrMany(const Shape &shape, size_t d) {
  return shape.dim(d).isConstant() ? shape[d] : kSymbolicExtent;
}

/// An op family's fast schedule for a function whose stage `stage` carries the family's tag;
/// false (changing nothing) when the function is not the shape it expects.
using FamilySchedule = bool (*)(Schedule &s, size_t stage);

/// One row of opt_level 3's schedule table (Dispatch.cpp).
struct FamilyEntry {
  const char *tag; ///< the tag of the compute rule that selects it
  FamilySchedule apply;
  /// When it refuses a function: the seed-era schedule (true) or the generic fast one (false).
  bool defaultWhenRefused;
};

/// The op families with a fast schedule, tried in order at each stage (Dispatch.cpp).
const std::vector<FamilyEntry> &familySchedules();

/// The integers lo, lo + 1, …, hi: a knob's candidates.
std::vector<int64_t> range(int64_t lo, int64_t hi);

/// The divisors of n from `least` up, and n itself, in increasing order: a knob's candidates
/// for tiles that divide an axis.
std::vector<int64_t> divisors(int64_t n, int64_t least = 1);

/// An injective stage computed in its own loops: outer axes fused and parallel, the innermost
/// vectorised (split by a vector's lanes when it is long). A copy that swaps its last two axes
/// is tiled instead (transposedCopy).
void injective(Schedule &s, Stage &st);

/// When `st` copies its input with the last two axes swapped and both are at least a vector's
/// lanes long: square tiles of lanes x lanes, each as `lanes` unrolled vector copies of strided
/// columns (which code generation emits as row loads and shuffles: TransposedTiles), the loops
/// outside them fused and parallel. Returns false, having done nothing, otherwise.
bool transposedCopy(Schedule &s, Stage &st);

/// Whether the reduction at `st` runs along a row: one reduce axis of at least four vectors of
/// `cpu`, no condition, read only as the last index of its tensors (softmax's max and sum over
/// the last axis, a sum over the last axis).
bool vectorReducible(const Stage &st, const TargetCpu &cpu);

/// The reduction at `t` (not yet scheduled) rfactor'ed into `partials` (a power of two) partial
/// results, then those added pairwise, halves as vectors, down to two that `t` combines: log2
/// steps where a chain of scalar adds waited on each other (dense's 16 partial sums per output
/// took a third of its time). Returns the partial stages, consumers first (for computeAt).
std::vector<loop::ComputeRef> partialTree(Schedule &s, const loop::ComputeRef &t, int64_t partials);

/// Such a reduction (at `t`, not yet scheduled) rfactor'ed into partial results: up to four
/// vectors of them accumulated independently along the row (partialTree of four vectors' lanes).
/// Returns the partial stages, consumers first (for computeAt).
std::vector<loop::ComputeRef> rowPartials(Schedule &s, const loop::ComputeRef &t);

/// The partial stages of `t` (from rowPartials) computed at `t`'s innermost data loop, each a
/// local vector, in registers.
void partialsInRegisters(Schedule &s, const loop::ComputeRef &t,
                         const std::vector<loop::ComputeRef> &partials);

/// A row reduction (vectorReducible) through rowPartials, its outputs in parallel.
void vectorReduction(Schedule &s, const loop::ComputeRef &t);

/// A reduction that keeps its input's last axis (a sum over axis 1 of (N, K, C), a max over the
/// batch): the reduce loops outside whole vectors of that axis, so every step reads a row of
/// memory and adds it to a row of results held in cache, the other output axes in parallel.
/// Returns false (nothing scheduled) for other reductions or a last axis not a multiple of the
/// lanes.
bool columnReduction(Schedule &s, Stage &st);

/// An output normalised by statistics of its rows — softmax's max and sum, layer_norm's mean
/// and deviation: each a value per row (the output's leading axes) reduced along the row. The
/// rows in parallel; in each, the statistics (reductions rfactor'ed into vectors of partial sums
/// in registers) and then the row in vectors, so the row is read from memory once and again from
/// L1. Returns false (and changes nothing) for other functions.
bool rowwise(Schedule &s);

/// The first step of the convolution schedules: the stage at `conv` written through a cache
/// (`conv` becomes the accumulator, returned), a padded input materialised once in parallel
/// (or, with `inlinePad`, read through the padding's bounds test where the convolution reads
/// it), every other producer inlined.
loop::ComputeRef accumulateThroughCache(Schedule &s, size_t conv, bool inlinePad = false);

/// accumulateThroughCache with the accumulator's axis `padAxis` rounded up to a multiple of
/// `padTo` (Schedule::cacheWritePadded), the padded input never materialised.
loop::ComputeRef accumulateThroughPaddedCache(Schedule &s, size_t conv, size_t padAxis,
                                              int64_t padTo, bool inlinePad = false);

/// The shape of the tensor a convolution's sum reads as its data (`k` 0) or weight (1): the
/// product's operand, through the casts that widen 8-bit operands, or dot4's (dot2's) first
/// data or weight read.
const Shape &productOperandShape(const loop::Expr &sum, size_t k);

/// Whether the function is the stage at `conv` (of rank `rank`) followed by an elementwise
/// epilogue of the same shape with one output: what the convolution schedules expect.
bool convWithEpilogue(Schedule &s, size_t conv, size_t rank);

/// The accumulator `acc` computed per iteration of `at` in `out` and held in a local buffer (the
/// register tile); returns its stage.
Stage &accumulateAt(Schedule &s, const loop::ComputeRef &acc, Stage &out, const loop::Expr &at);

/// The frame the NCHW and depthwise register tiles share: the output's width (axis 3) split by
/// `tile` (the last tile shifted back when `shifted`), its (n, c, h) rows fused into one
/// parallel loop, and the accumulator `acc` computed as a local buffer at each width tile.
/// Returns the output's inner width variable.
loop::Expr tileRowsAndWidth(Schedule &s, const loop::ComputeRef &acc, int64_t tile, bool shifted);

/// Output columns per register tile.
struct Tile {
  int64_t regN;
  bool shifted; ///< the width is not a multiple: the last tile is shifted back
};

/// TVM's fallback reg_n: the largest divisor of the output width whose `regsPerColumn`
/// accumulator registers per column fit in `accumulators` registers (TVM's 28 of AVX-512's 32,
/// four left for the operands). Where that divisor is less than half the room (a prime width
/// such as 109 gives 1), tiles as even as the room allows instead, the last one shifted back to
/// end at the edge.
Tile chooseTile(int64_t width, int64_t regsPerColumn, int64_t accumulators);

/// The accumulator registers a one-block tile of `cpu` may use: all but four, which hold the
/// weight vector and the broadcast inputs.
int64_t singleBlockAccumulators(const TargetCpu &cpu);

/// A convolution's register tile: `ocTiles` channel blocks x `cols.regN` output columns.
struct RegisterTile {
  int64_t ocTiles;
  Tile cols;
  bool ocShifted = false; ///< ocTiles does not divide the chunks: the last tile is shifted back
};

/// The accumulators a tile of several channel blocks (`blockRegs` registers per column) may use:
/// 3/4 of the registers when FMAs read broadcasts from memory (AVX-512: 24 of 32). Without
/// broadcast operands (AVX2) the tile keeps either its blocks' weight vectors or its columns'
/// broadcast inputs live, plus one operand being loaded: the weights (columns outermost) for a
/// kernel with taps, the fewer of the two for a 1x1 (`pointwise`) kernel, whose tile may then run
/// with its blocks outermost. Measured on AVX2: a 4 x 3 tile (16 registers with its 3 broadcasts
/// live) runs squeezenet's 27-column 1x1 layers at 92-97 GFLOP/s against 44-49 for 1 x 9, but its
/// 3x3 layers at 58-68 against 86-94 for 1 x 9 and 2 x 6.
int64_t multiBlockRoom(const TargetCpu &cpu, int64_t blockRegs, bool pointwise);

/// The register tile with the fewest loads per FMA: each reduction step loads ocTiles weight
/// vectors and regN broadcast inputs for ocTiles x regN FMAs, so a square-ish tile (4 blocks x 6
/// columns: 10 loads for 24 FMAs) keeps the loads under the FMAs where a row of 14 columns (15
/// loads for 14) is load-bound. Columns recomputed by a shifted last tile count as waste.
/// `ocChunks` is the number of channel blocks (ocTiles divides it, except over pixels, where a
/// shifted last tile of blocks counts its recomputed blocks as waste); a tile's blocks must keep
/// their weights (`chunkWeightBytes` each) in the core's L2 with room for the input rows, as
/// every row of the output reuses them. Register and L2 sizes are `cpu`'s; `pointwise` is a 1x1
/// kernel (see multiBlockRoom); `pixels` says that `width` is all of an image's pixels (a
/// unit-stride 1x1 summed over them), where tiles of several blocks may shift their last tile.
RegisterTile chooseRegisterTile(int64_t width, int64_t ocChunks, int64_t regsPerColumn,
                                int64_t chunkWeightBytes, const TargetCpu &cpu,
                                bool pointwise = false, bool pixels = false);

/// The register tile of a convolution left in NCHW (conv2dNCHW): `ocBlock` output channels x
/// `rows` output rows x one vector of columns.
struct NchwTile {
  int64_t ocBlock, rows;
  bool shifted; ///< ocBlock does not divide the channels: the last block is shifted back
};

/// Two rows when the height is even (else one), and the channel block with the fewest loads per
/// useful FMA within `accumulators` vectors: each tap loads `rows` input vectors and broadcasts
/// `ocBlock` weights for ocBlock x rows FMAs, and a shifted last block recomputes channels
/// (13 channels in blocks of 5 compute 15).
NchwTile chooseNchwTile(int64_t channels, int64_t height, int64_t accumulators);

/// topi's conv2d_NCHWc (conv2d_avx_common / conv2d_avx_1x1): the stage at `conv`
/// register-tiled, its epilogue applied to the tile before the single store. Returns false (and
/// changes nothing) when the function does not have the shape that schedule expects.
bool conv2dNCHWc(Schedule &s, size_t conv);

/// topi's depthwise_conv2d_NCHWc: a tile of reg_n output columns x the channel block
/// accumulated in registers over the kernel taps (per tap, reg_n input vectors times one weight
/// vector), the epilogue applied before the single store. Returns false (and changes nothing)
/// when the function does not have that shape.
bool depthwiseConv2dNCHWc(Schedule &s, size_t conv);

/// A convolution left in NCHW (depthwise, grouped): a vector of output columns accumulated in
/// a register over the taps, the epilogue applied to it before the store. Returns false (and
/// changes nothing) when the function does not have that shape.
bool conv2dNCHW(Schedule &s, size_t conv);

/// batch_matmul (and its elementwise epilogue) as a GEMM microkernel: a tile of rows x vectors
/// of columns accumulated in registers over k, each step broadcasting one lhs element per row
/// against the rhs row's vectors (the rhs copied to (k, n) first, in parallel, when it comes as
/// (n, k)); batches and tiles in parallel, column tiles outermost. Returns false (and changes
/// nothing) when the columns are fewer than a vector or the function is not that shape.
bool batchMatmul(Schedule &s, size_t batchMatmul);

/// `_contrib_dense_pack` (dense over rows, its weight packed as (units / n, k, n)) as a GEMM in
/// BLIS's loop order: k in blocks whose packed panels stay in L2, in each every tile of rows x
/// n columns accumulated in registers (the accumulator's rows padded to whole tiles) and
/// added to the product so far; column tiles in parallel. Returns false (and changes nothing)
/// when the pack is not of whole vectors or the function is not that shape.
bool densePack(Schedule &s, size_t densePack);

/// Dense at any batch: the reduction rfactor'ed into a vector of partial sums held in registers,
/// the outputs in parallel. Returns false (and changes nothing) for a short reduction.
bool dense(Schedule &s, size_t dense);

} // namespace loupe::backend::x86
