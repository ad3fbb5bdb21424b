// Dense: the fast schedule of dense — the reduction over k rfactor'ed into vectors of partial
// sums (TVM's rfactor) for a block of outputs at once, both operands read contiguously in k with
// full vectors and the partials held in registers, then added pairwise per output.
#include "backend/x86/FastSchedules.h"

#include "core/DType.h"

#include <algorithm>
#include <set>

namespace loupe::backend::x86 {

using namespace loop;

namespace {

// Outputs per block: a divisor of the output count up to half the vector registers (the other
// half for the loads: 16 with AVX-512, 8 with AVX2), at most half of them when that still gives
// four or more, so two threads have a block each; a count without such a divisor (a prime) gets
// blocks of half the registers or of 8, the last one shifted back.
int64_t outputBlock(int64_t units, int64_t registers) {
  int64_t most = registers / 2;
  int64_t cap = units >= 8 ? std::min(most, units / 2) : units;
  int64_t block = largestDivisorUpTo(units, cap);
  return block >= 4 || block == units ? block : std::min({int64_t{8}, most, units});
}

// Several rows (a transformer's tokens): a tile of rows x outputs whose partial sums stay in
// registers for the whole reduction, each input vector loaded once for the tile's outputs and
// each weight vector once for its rows (4 rows x 3 outputs with AVX2: 12 partial sums, 3 weight
// vectors and an input vector in 16 registers; 4 x 6 with AVX-512). The output blocks are the
// outer loop, so a block's weights stay in cache while every row passes them.
void rowTiles(Schedule &s, const ComputeRef &denseT, const std::vector<ComputeRef> &partials) {
  Stage &d = s.stage(denseT); // rows, outputs, the sum over the partials
  // Symbolic rows (a generic kernel's batch*seq) are taken to be many: their tiles' tail is
  // guarded.
  int64_t rows = d.leaves[0].size ? kSymbolicExtent : d.leaves[0].extent,
          units = d.leaves[1].extent;
  int64_t ruleRows = std::min<int64_t>(4, rows);
  int64_t rowBlock = s.define("row_block", range(1, std::min<int64_t>(rows, 8)), ruleRows,
                              "rows whose partial sums are held in registers together");
  int64_t unitBlock = s.define("out_block", range(1, std::min<int64_t>(units, s.cpu.registers - 2)),
                               std::min<int64_t>(units, (s.cpu.registers - 1) / (ruleRows + 1)),
                               "outputs whose partial sums are held in registers together");
  s.limit({"row_block", "out_block"}, s.cpu.registers - 2);
  s.knob("row_block", rowBlock, "rows whose partial sums are held in registers together");
  s.knob("out_block", unitBlock, "outputs whose partial sums are held in registers together");
  Expr i = d.leaves[0].var, j = d.leaves[1].var;
  auto [io, ii] = s.splitTiles(d, i, rowBlock);
  auto [jo, ji] = s.splitTiles(d, j, unitBlock);
  s.reorder(d, {jo, io, ii, ji});
  Expr tiles = s.fuse(d, jo, io);
  s.parallel(d, tiles);
  for (const ComputeRef &t : partials) {
    Stage &acc = accumulateAt(s, t, s.stage(denseT), tiles);
    Expr pi = acc.leaves[0].var, pj = acc.leaves[1].var, ki = acc.leaves[2].var,
         ko = acc.leaves[3].var;
    s.reorder(acc, {ko, pi, pj, ki});
    s.unroll(acc, pi);
    s.unroll(acc, pj);
    s.vectorize(acc, ki);
  }
}

// The reduction at `idx` rfactor'ed into vectors of partial sums, one vector of the target each
// (the k_lanes knob), then added pairwise (partialTree); operands copied to read along k (the
// compute rules' `compact` stages) and the epilogue (a bias, a scale) in their own parallel,
// vectorised loops, the rest inlined. Returns the partial stages, consumers first.
std::vector<ComputeRef> partialSums(Schedule &s, size_t idx) {
  ComputeRef productT = s.stages[idx].tensor;
  int64_t lanes = s.cpu.lanes(dtypeBytes(productT->dtype));
  int64_t extent = s.stage(productT).body->reduceAxes[0].extent;
  std::vector<int64_t> vectors = {1};
  for (int64_t v = 2; v <= 4 && extent >= 4 * v * lanes; v *= 2)
    vectors.push_back(v);
  int64_t kVectors = s.define("k_vectors", vectors, 1,
                              "vectors of partial sums of the reduction over k, per output");
  s.knob("k_lanes", lanes * kVectors,
         kVectors == 1
             ? "partial sums of the reduction over k, one vector"
             : "partial sums of the reduction over k, " + std::to_string(kVectors) + " vectors");
  std::vector<ComputeRef> partials = partialTree(s, productT, lanes * kVectors);
  std::set<const Compute *> mine{productT.get()};
  for (const ComputeRef &p : partials)
    mine.insert(p.get());
  for (Stage &other : s.stages)
    if (!mine.count(other.tensor.get())) {
      if (s.isOutput(other) || other.tensor->tag == "compact")
        injective(s, other);
      else
        s.computeInline(other);
    }
  return partials;
}

} // namespace

bool densePack(Schedule &s, size_t idx) {
  const Stage &p0 = s.stages[idx];
  int64_t bytes = dtypeBytes(p0.tensor->dtype), lanes = s.cpu.lanes(bytes);
  if (p0.body->kind != ExprKind::Reduce || p0.tensor->shape.size() != 3 ||
      p0.body->reduceAxes.size() != 1 || p0.tensor->shape[2] % lanes != 0 || s.outputs.size() != 1)
    return false;
  int64_t rows = extentOrMany(p0.tensor->shape, 0), tiles = p0.tensor->shape[1],
          width = p0.tensor->shape[2];
  int64_t K = p0.body->reduceAxes[0].extent, vectors = width / lanes;
  int64_t mostRows = matmulTileRows(vectors, s.cpu);
  int64_t rowBlock =
      s.define("row_block", range(1, std::min(rows, mostRows)), std::min(rows, mostRows),
               "rows whose accumulators are held in registers together");
  // A block of k whose packed panel (k x the tile's columns) takes at most an eighth of the L2,
  // so that it stays there while every tile of rows passes it, beside the rows' block of k.
  std::vector<int64_t> kBlocks = divisors(K, 32);
  int64_t panelCap = std::max<int64_t>(1, s.cpu.l2Bytes / 8 / (width * bytes));
  int64_t ruleK = kBlocks.front();
  for (int64_t d : kBlocks)
    if (d <= panelCap)
      ruleK = d;
  int64_t kBlock = s.define("k_block", kBlocks, ruleK,
                            "steps of k per block, the tiles' sums added to the product's");
  // Column tiles shared out in at least four tasks where there are four, so that every thread
  // has one and each reads its share of the weights once.
  int64_t chunk = s.define("tiles_per_task", divisors(tiles),
                           largestDivisorUpTo(tiles, std::max<int64_t>(1, tiles / 4)),
                           "column tiles in one parallel task");
  s.knob("row_block", rowBlock, "rows whose accumulators are held in registers together");
  s.knob("col_vectors", vectors, "vectors of columns per register tile (the pack width)");
  s.knob("k_block", kBlock, "steps of k per block, the tiles' sums added to the product's");
  s.knob("tiles_per_task", chunk, "column tiles in one parallel task");

  ComputeRef cacheT = accumulateThroughPaddedCache(s, idx, 0, rowBlock);
  for (Stage &st : s.stages)
    if (s.isOutput(st))
      injective(s, st);
  Stage &acc = s.stage(cacheT);
  Expr m = acc.leaves[0].var, no = acc.leaves[1].var, ni = acc.leaves[2].var, k = acc.leaves[3].var;
  auto [ko, ki] = s.split(acc, k, kBlock);
  auto [mo, mi] = s.split(acc, m, rowBlock);
  auto [nv, nl] = s.split(acc, ni, lanes);
  auto [task, nt] = s.split(acc, no, chunk);
  s.reorder(acc, {task, ko, nt, mo, ki, mi, nv, nl});
  s.parallel(acc, task);
  s.unroll(acc, mi);
  s.unroll(acc, nv);
  s.vectorize(acc, nl);
  return true;
}

bool dense(Schedule &s, size_t idx) {
  const Stage &d0 = s.stages[idx];
  int64_t lanes = s.cpu.lanes(dtypeBytes(d0.tensor->dtype));
  if (d0.body->kind != ExprKind::Reduce || d0.tensor->shape.size() != 2 ||
      d0.body->reduceAxes.size() != 1 || d0.body->reduceAxes[0].extent < 4 * lanes)
    return false;
  ComputeRef denseT = d0.tensor;
  std::vector<ComputeRef> partials = partialSums(s, idx);
  // A block of outputs accumulated together: each vector of the input row is loaded once for
  // the whole block, and the block's partial sums are independent chains, so the loop runs at
  // load/bandwidth speed instead of waiting on one accumulator's add latency (4 cycles per
  // vector FMA). Blocks in parallel; at least two when there are two threads to share them.
  Stage &d = s.stage(denseT);
  int64_t rows = d.leaves[0].extent, units = d.leaves[1].extent;
  if (rows > 1 || d.leaves[0].size)
    return rowTiles(s, denseT, partials), true;
  int64_t block = s.define("out_block", range(1, std::min<int64_t>(units, s.cpu.registers - 1)),
                           outputBlock(units, s.cpu.registers),
                           "outputs whose partial sums are held in registers together");
  s.knob("out_block", block, "outputs whose partial sums are held in registers together");
  Expr i = d.leaves[0].var, j = d.leaves[1].var;
  auto [jo, ji] = s.splitTiles(d, j, block);
  Expr blocks = s.fuse(d, i, jo);
  s.parallel(d, blocks);
  for (const ComputeRef &t : partials) {
    Stage &acc = accumulateAt(s, t, s.stage(denseT), blocks);
    Expr pj = acc.leaves[1].var, ki = acc.leaves[2].var, ko = acc.leaves[3].var;
    s.reorder(acc, {ko, pj, ki});
    s.unroll(acc, pj);
    s.vectorize(acc, ki);
  }
  return true;
}

} // namespace loupe::backend::x86
