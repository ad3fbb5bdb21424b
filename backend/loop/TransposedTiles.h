// TransposedTiles: finds, among a block's statements, a square tile of vector copies whose
// lanes read a strided column each — a transposition, which code generation then emits as row
// loads and shuffles instead of one gather per vector.
#pragma once

#include "core/loop/LoopIR.h"

#include <optional>
#include <vector>

namespace loupe::loop {

/// L consecutive statements, each `for (v, 0, L) vectorized { dst[out_c + v] = src[in_c + v*S] }`
/// with in_c = in_0 + c: together they copy the L×L block whose row j is the L consecutive
/// elements src[in_0 + j*S + 0 … L-1] into column j of the L vectors dst[out_c + 0 … L-1].
struct TransposedTile {
  int64_t lanes = 0;                ///< L: statements, lanes per vector, rows of the block
  int64_t rowStride = 0;            ///< S: elements between the source rows
  std::string src, dst;             ///< the buffers read and written
  int dtype = 0;                    ///< the element type of both
  Expr firstRow;                    ///< in_0: index of the source block's first element
  std::vector<Expr> columnStarts;   ///< out_c: index of each statement's first lane
  std::vector<const StmtNode *> at; ///< the statements the tile replaces, in order
};

/// The tile that starts at `body[first]`, when the statements there form one (lanes 4, 8 or 16,
/// no guards, no conversion, different buffers), else nullopt. The indices of `columnStarts`
/// and `firstRow` are those of the loops with their lane variable set to 0.
std::optional<TransposedTile> matchTransposedTile(const std::vector<Stmt> &body, size_t first);

} // namespace loupe::loop
