// BatchMatmul: the register-tiled schedule of batch_matmul (a GEMM microkernel, as the
// convolutions' tiles). A tile of rows x vectors of columns is accumulated in registers over k:
// per step, a few vector loads of the rhs row (k, n…) and one broadcast of the lhs per row, one
// FMA per accumulator, and no horizontal sums (k is often short in attention: 64). The epilogue
// (a scale) is applied to the tile before its single store.
#include "backend/x86/FastSchedules.h"

#include "core/DType.h"

#include <algorithm>

namespace loupe::backend::x86 {

using namespace loop;

bool batchMatmul(Schedule &s, size_t idx) {
  const Stage &p = s.stages[idx];
  size_t rank = p.tensor->shape.size();
  int64_t lanes = s.cpu.lanes(dtypeBytes(p.tensor->dtype));
  // Symbolic rows or columns (attention's seq) are tiled as many, their last tile guarded.
  int64_t rows = extentOrMany(p.tensor->shape, rank - 2),
          columns = extentOrMany(p.tensor->shape, rank - 1);
  if (!convWithEpilogue(s, idx, rank) || columns < lanes || p.body->reduceAxes.size() != 1)
    return false;
  MatmulTile rule = chooseMatmulTile(rows, columns, s.cpu, lanes);
  MatmulTile tile{s.define("row_block", range(1, std::min(rows, s.cpu.registers - 2)), rule.rows,
                           "rows whose accumulators are held in registers together"),
                  s.define("col_vectors", range(1, std::min<int64_t>(4, columns / lanes)),
                           rule.vectors, "vectors of columns per register tile")};
  s.limit({"row_block", "col_vectors"}, s.cpu.registers - 2);
  int64_t width = tile.vectors * lanes;
  s.knob("row_block", tile.rows, "rows whose accumulators are held in registers together");
  s.knob("col_vectors", tile.vectors, "vectors of columns per register tile");
  ComputeRef cacheT = accumulateThroughCache(s, idx);
  Stage &out = s.stage(s.outputs[0]);
  std::vector<Expr> batch;
  for (size_t b = 0; b + 2 < rank; ++b)
    batch.push_back(out.leaves[b].var);
  Expr m = out.leaves[rank - 2].var, n = out.leaves[rank - 1].var;
  // Tiles that do not divide their axis end with one shifted back over the one before.
  auto [mo, mi] = s.splitTiles(out, m, tile.rows);
  auto [no, ni] = s.splitTiles(out, n, width);
  auto [nv, nl] = s.split(out, ni, lanes);
  // Column tiles outside row tiles: a column tile's rhs panel (k x width) stays in L1 while
  // every row tile passes it.
  s.reorder(out, {no, mo, mi, nv, nl});
  Expr tiles = s.fuse(out, no, mo);
  for (size_t b = batch.size(); b-- > 0;)
    tiles = s.fuse(out, batch[b], tiles);
  s.parallel(out, tiles);
  s.unroll(out, mi);
  s.unroll(out, nv);
  s.vectorize(out, nl);
  Stage &acc = accumulateAt(s, cacheT, out, tiles);
  Expr am = acc.leaves[rank - 2].var, an = acc.leaves[rank - 1].var, k = acc.leaves[rank].var;
  auto [av, al] = s.split(acc, an, lanes);
  s.reorder(acc, {k, am, av, al});
  s.unroll(acc, am);
  s.unroll(acc, av);
  s.vectorize(acc, al);
  return true;
}

} // namespace loupe::backend::x86
