// FastSchedules: the building blocks opt_level 3's op-family schedules share — accumulators
// through a cache, register tiles computed at a loop, trees of partial sums, row reductions and
// injective stages.
#include "backend/x86/FastSchedules.h"

#include "backend/LowerFunction.h"
#include "core/DType.h"

#include <algorithm>
#include <limits>

namespace loupe::backend {

namespace x86 {

using namespace loop;

std::vector<int64_t> range(int64_t lo, int64_t hi) {
  std::vector<int64_t> v;
  for (int64_t i = lo; i <= hi; ++i)
    v.push_back(i);
  return v;
}

std::vector<int64_t> divisors(int64_t n, int64_t least) {
  std::vector<int64_t> v;
  for (int64_t d = 1; d <= n; ++d)
    if (n % d == 0 && (d >= least || d == n))
      v.push_back(d);
  return v;
}

ComputeRef accumulateThroughCache(Schedule &s, size_t conv, bool inlinePad) {
  return accumulateThroughPaddedCache(s, conv, 0, 1, inlinePad);
}

ComputeRef accumulateThroughPaddedCache(Schedule &s, size_t conv, size_t padAxis, int64_t padTo,
                                        bool inlinePad) {
  // stages[conv] is now the accumulator
  Stage &cache = s.cacheWritePadded(s.stages[conv], padAxis, padTo);
  ComputeRef cacheT = cache.tensor;
  for (Stage &st : s.stages) {
    if (st.tensor == cacheT || s.isOutput(st))
      continue;
    if ((st.tensor->tag == "pad" && !inlinePad) || st.tensor->tag == "compact")
      injective(s, st); // padded or unit-stride input materialised once, in parallel
    else
      s.computeInline(st);
  }
  return cacheT;
}

const Shape &productOperandShape(const Expr &sum, size_t k) {
  const Expr &term = sum->args[0];
  size_t group = term->kind != ExprKind::Call ? 1
                 : term->name == "dot4"       ? 4
                 : term->name == "dot2"       ? 2
                                              : 1;
  Expr e = term->args[group * k];
  if (e->kind == ExprKind::Cast)
    e = e->args[0];
  return e->tensor->shape;
}

bool convWithEpilogue(Schedule &s, size_t conv, size_t rank) {
  if (s.outputs.size() != 1)
    return false;
  const Stage &out = s.stage(s.outputs[0]);
  const ComputeRef &t = s.stages[conv].tensor;
  return t->shape.size() == rank && out.tensor->shape == t->shape &&
         (out.tensor == t || out.tensor->body->kind != ExprKind::Reduce);
}

Expr tileRowsAndWidth(Schedule &s, const ComputeRef &acc, int64_t tile, bool shifted) {
  Stage &out = s.stage(s.outputs[0]);
  Expr n = out.leaves[0].var, c = out.leaves[1].var, h = out.leaves[2].var, w = out.leaves[3].var;
  auto [wo, wi] = shifted ? s.splitShifted(out, w, tile) : s.split(out, w, tile);
  s.parallel(out, s.fuse(out, s.fuse(out, n, c), h));
  accumulateAt(s, acc, out, wo);
  return wi;
}

Stage &accumulateAt(Schedule &s, const ComputeRef &acc, Stage &out, const Expr &at) {
  Stage &a = s.stage(acc);
  s.computeAt(a, out, at);
  s.setLocal(a);
  return a;
}

Tile chooseTile(int64_t width, int64_t regsPerColumn, int64_t accumulators) {
  int64_t cap = std::max<int64_t>(1, accumulators / regsPerColumn);
  int64_t divisor = largestDivisorUpTo(width, cap);
  if (2 * divisor >= std::min(cap, width))
    return {divisor, false};
  int64_t tiles = (width + cap - 1) / cap;
  return {(width + tiles - 1) / tiles, true};
}

int64_t singleBlockAccumulators(const TargetCpu &cpu) { return cpu.registers - 4; }

int64_t multiBlockRoom(const TargetCpu &cpu, int64_t blockRegs, bool pointwise) {
  int64_t most = cpu.registers / 4 * 3;
  if (cpu.broadcastOperand)
    return most;
  int64_t columns = 0;
  for (int64_t n = 1; blockRegs * n <= most; ++n)
    if (blockRegs * n + (pointwise ? std::min(blockRegs, n) : blockRegs) + 1 <= cpu.registers)
      columns = n;
  return columns * blockRegs;
}

RegisterTile chooseRegisterTile(int64_t width, int64_t ocChunks, int64_t regsPerColumn,
                                int64_t chunkWeightBytes, const TargetCpu &cpu, bool pointwise,
                                bool pixels) {
  // 5/8 of the core's L2 for the weights (AVX-512 with a 1 MB L2: 512x7x7 with 512 3x3 filters
  // ran at 0.87x oneDNN with two blocks' 590 KB, 0.60x with four blocks' 1.2 MB).
  int64_t weightBytes = cpu.l2Bytes / 8 * 5;
  int64_t single = singleBlockAccumulators(cpu);
  // Several blocks need 7/16 of the registers as accumulators to keep both FMA units busy through
  // the FMA latency (14 of AVX-512's 32, 7 of AVX2's 16).
  int64_t least = cpu.registers / 16 * 7;
  RegisterTile best{1, chooseTile(width, regsPerColumn, single)};
  double bestCost = 0;
  for (int64_t blocks = 1; blocks <= 4; ++blocks) {
    // Over pixels the blocks need not divide the chunks: the last tile of blocks is shifted back
    // (squeezenet's 1000 classes are 125 chunks of 8, which no 2-4 blocks divide).
    bool shiftBlocks = ocChunks % blocks != 0;
    if ((shiftBlocks && (!pixels || ocChunks < blocks)) ||
        (blocks > 1 && blocks * chunkWeightBytes > weightBytes))
      continue;
    // One block keeps TVM's accumulators; several leave room for the operands.
    Tile t = blocks == 1 ? chooseTile(width, regsPerColumn, single)
                         : chooseTile(width, blocks * regsPerColumn,
                                      multiBlockRoom(cpu, blocks * regsPerColumn, pointwise));
    // Several blocks only with even tiles of `least` accumulators or more: with AVX-512 a
    // shifted last tile (width 7 in tiles of 4: 0.69x oneDNN against 0.9x for 2x7) and a 4x3
    // tile (0.70x against 0.99x for 2x9) measured slower than the tile with more loads. Over
    // pixels a shifted tile recomputes a few columns of the whole image, not of every row.
    if (blocks > 1 && ((t.shifted && !pixels) || blocks * regsPerColumn * t.regN < least))
      continue;
    double loads = static_cast<double>(blocks * regsPerColumn + t.regN);
    double fmas = static_cast<double>(blocks * regsPerColumn * t.regN);
    double covered = static_cast<double>((width + t.regN - 1) / t.regN * t.regN);
    double coveredChunks = static_cast<double>((ocChunks + blocks - 1) / blocks * blocks);
    double cost = loads / fmas * covered / static_cast<double>(width) * coveredChunks /
                  static_cast<double>(ocChunks);
    if (blocks == 1 || cost < bestCost - 1e-9) {
      best = {blocks, t, shiftBlocks};
      bestCost = cost;
    }
  }
  return best;
}

NchwTile chooseNchwTile(int64_t channels, int64_t height, int64_t accumulators) {
  int64_t rows = height % 2 == 0 ? 2 : 1;
  NchwTile best{1, rows, false};
  double bestCost = 0;
  for (int64_t oc = 1; oc <= std::min(channels, accumulators / rows); ++oc) {
    int64_t covered = (channels + oc - 1) / oc * oc;
    double cost = static_cast<double>(rows + oc) / static_cast<double>(rows * oc) *
                  static_cast<double>(covered) / static_cast<double>(channels);
    if (oc == 1 || cost < bestCost - 1e-9) {
      best = {oc, rows, covered != channels};
      bestCost = cost;
    }
  }
  return best;
}

namespace {

// Whether every read of `e` that uses variable `k` has it as its last index and nowhere else.
bool readsAlongLast(const Expr &e, const ExprNode *k) {
  if (e->kind == ExprKind::TensorRead) {
    if (!usesVar(e, k))
      return true;
    for (size_t i = 0; i + 1 < e->args.size(); ++i)
      if (usesVar(e->args[i], k))
        return false;
    return e->args.back().get() == k;
  }
  for (const Expr &a : e->args)
    if (!readsAlongLast(a, k))
      return false;
  return true;
}

} // namespace

bool vectorReducible(const Stage &st, const TargetCpu &cpu) {
  const Expr &body = st.body;
  int64_t lanes = cpu.lanes(dtypeBytes(st.tensor->dtype));
  return body->kind == ExprKind::Reduce && body->reduceAxes.size() == 1 && body->args.size() == 1 &&
         (body->reduceAxes[0].size || body->reduceAxes[0].extent >= 4 * lanes) &&
         !st.tensor->shape.empty() && readsAlongLast(body->args[0], body->reduceAxes[0].var.get());
}

std::vector<ComputeRef> partialTree(Schedule &s, const ComputeRef &t, int64_t partials) {
  // Each rfactor's partials read the previous one's, so the reverse of creation is consumers
  // first.
  std::vector<ComputeRef> tree;
  for (int64_t n = partials; n >= 2; n /= 2) {
    Stage &st = s.stage(t);
    tree.push_back(s.rfactor(st, st.body->reduceAxes[0].var, n).tensor);
  }
  std::reverse(tree.begin(), tree.end());
  return tree;
}

std::vector<ComputeRef> rowPartials(Schedule &s, const ComputeRef &t) {
  int64_t lanes = s.cpu.lanes(dtypeBytes(t->dtype));
  const IterVar &k = s.stage(t).body->reduceAxes[0];
  int64_t extent = k.size ? kSymbolicExtent : k.extent;
  // Four chains where the row has at least two vectors for each (one chain's adds wait on
  // each other: 48 dependent vector adds took 144 cycles of a 768-float row on Zen 4).
  int64_t chains = 4;
  while (chains > 1 && extent < 2 * chains * lanes)
    chains /= 2;
  std::vector<int64_t> candidates = {1};
  for (int64_t c = 2; c <= 8 && extent >= 2 * c * lanes; c *= 2)
    candidates.push_back(c);
  chains = s.define(s.stage(t).buffer + ".chains", candidates, chains,
                    "vectors of partial results accumulated independently along the row");
  return partialTree(s, t, lanes * chains);
}

void partialsInRegisters(Schedule &s, const ComputeRef &t,
                         const std::vector<ComputeRef> &partials) {
  size_t rank = t->shape.size();
  for (const ComputeRef &p : partials) {
    Stage &st = s.stage(t);
    auto last =
        std::find_if(st.leaves.rbegin(), st.leaves.rend(), [](const Leaf &l) { return !l.reduce; });
    Stage &acc = accumulateAt(s, p, st, last->var);
    Expr ki = acc.leaves[rank].var, ko = acc.leaves[rank + 1].var;
    s.reorder(acc, {ko, ki});
    s.vectorize(acc, ki);
  }
}

void vectorReduction(Schedule &s, const ComputeRef &t) {
  std::vector<ComputeRef> partials = rowPartials(s, t);
  Stage &d = s.stage(t);
  Expr rows = d.leaves[0].var;
  for (size_t i = 1; i < t->shape.size(); ++i)
    rows = s.fuse(d, rows, d.leaves[1].var);
  s.parallel(d, rows);
  partialsInRegisters(s, t, partials);
}

bool columnReduction(Schedule &s, Stage &st) {
  const Expr &body = st.body;
  size_t nd = st.tensor->shape.size();
  if (body->kind != ExprKind::Reduce || nd == 0 || body->args.size() != 1 ||
      st.leaves.size() != nd + body->reduceAxes.size())
    return false;
  Expr column = st.leaves[nd - 1].var;
  int64_t extent = st.leaves[nd - 1].extent;
  int64_t lanes = s.cpu.lanes(dtypeBytes(st.tensor->dtype));
  // Whole vectors only: a shifted last vector would add its overlap twice at every step.
  if (extent < lanes || extent % lanes != 0 || !readsAlongLast(body->args[0], column.get()))
    return false;
  std::vector<Expr> outer, reduce;
  for (size_t d = 0; d + 1 < nd; ++d)
    outer.push_back(st.leaves[d].var);
  for (size_t d = nd; d < st.leaves.size(); ++d)
    reduce.push_back(st.leaves[d].var);
  std::vector<int64_t> widths = {1};
  for (int64_t v = 2; v <= 4 && v * lanes <= 64; v *= 2)
    if (extent % (v * lanes) == 0)
      widths.push_back(v);
  int64_t vectors = s.define(st.buffer + ".vectors", widths, 1, "vectors per innermost step");
  auto [vo, vi] = s.split(st, column, lanes * vectors);
  std::vector<Expr> order = outer;
  order.insert(order.end(), reduce.begin(), reduce.end());
  order.push_back(vo);
  order.push_back(vi);
  s.reorder(st, order);
  if (!outer.empty()) {
    Expr rows = outer[0];
    for (size_t d = 1; d < outer.size(); ++d)
      rows = s.fuse(st, rows, outer[d]);
    s.parallel(st, rows);
  }
  s.vectorize(st, vi);
  return true;
}

bool transposedCopy(Schedule &s, Stage &st) {
  const Compute &t = *st.tensor;
  size_t nd = t.shape.size();
  int64_t lanes = s.cpu.lanes(dtypeBytes(t.dtype));
  const Expr &b = st.body;
  if (nd < 2 || st.leaves.size() != nd || !b || b->kind != ExprKind::TensorRead ||
      b->args.size() != nd || !b->tensor || b->tensor->dtype != t.dtype || lanes < 4 ||
      lanes > 16 || t.shape[nd - 1] < lanes || t.shape[nd - 2] < lanes)
    return false;
  for (size_t k = 0; k < nd; ++k) {
    size_t from = k + 2 < nd ? k : 2 * nd - 3 - k; // the last two swapped
    if (b->args[k] != t.axes[from])
      return false;
  }
  std::vector<Expr> outer;
  for (size_t k = 0; k + 2 < nd; ++k)
    outer.push_back(st.leaves[k].var);
  Expr rows = st.leaves[nd - 2].var, columns = st.leaves[nd - 1].var;
  auto [ro, ri] = s.splitTiles(st, rows, lanes);
  auto [co, ci] = s.splitTiles(st, columns, lanes);
  s.reorder(st, {ro, co, ri, ci});
  outer.push_back(ro);
  outer.push_back(co);
  Expr fused = outer[0];
  for (size_t k = 1; k < outer.size(); ++k)
    fused = s.fuse(st, fused, outer[k]);
  s.parallel(st, fused);
  s.unroll(st, ri);
  s.vectorize(st, ci);
  return true;
}

void injective(Schedule &s, Stage &st) {
  size_t nd = st.tensor->shape.size();
  if (nd == 0 || transposedCopy(s, st))
    return;
  int64_t lanes = s.cpu.lanes(dtypeBytes(st.tensor->dtype));
  Expr inner = st.leaves.back().var;
  int64_t extent = st.leaves.back().extent;
  // A symbolic innermost extent (a generic kernel's seq) is taken to be long: vectors of it,
  // the last one masked by its guard.
  bool symbolic = st.leaves.back().size != nullptr;
  if (symbolic)
    extent = std::numeric_limits<int64_t>::max();
  if (extent > 64) {
    // Rows that are not a multiple of the lanes end with a vector shifted back over the one
    // before (those columns are written twice, with the same values).
    std::vector<int64_t> widths = {1};
    for (int64_t v = 2; v <= 4 && v * lanes <= std::min<int64_t>(extent, 64); v *= 2)
      widths.push_back(v);
    int64_t vectors = s.define(st.buffer + ".vectors", widths, 1, "vectors per innermost step");
    auto [o, i] = s.splitTiles(st, inner, lanes * vectors);
    inner = i;
    extent = lanes * vectors;
  }
  // Up to three loops outside the vector one fused into one parallel loop (enough work to
  // share; fusing more only makes the indices longer).
  size_t outerCount = std::min<size_t>(st.leaves.size() - 1, 3);
  if (outerCount > 1)
    outerCount = static_cast<size_t>(
        s.define(st.buffer + ".parallel_loops", range(1, static_cast<int64_t>(outerCount)),
                 static_cast<int64_t>(outerCount), "outer loops fused into the parallel one"));
  if (outerCount > 0) {
    Expr outer = st.leaves[0].var;
    for (size_t k = 1; k < outerCount; ++k)
      outer = s.fuse(st, outer, st.leaves[1].var);
    s.parallel(st, outer);
  }
  if (extent >= 2 && extent <= 64)
    s.vectorize(st, inner);
}

} // namespace x86

} // namespace loupe::backend
