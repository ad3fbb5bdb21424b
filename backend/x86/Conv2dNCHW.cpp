// Conv2dNCHW: opt_level 3's schedule for convolutions AlterOpLayout leaves in NCHW (grouped ones,
// and ungrouped ones whose output columns fill the vectors better than their channels): vectors
// of output columns accumulated in registers over the taps, for a block of channels and rows.
#include "backend/x86/FastSchedules.h"

#include "core/DType.h"

#include <algorithm>
#include <vector>

namespace loupe::backend::x86 {

using namespace loop;

bool conv2dNCHW(Schedule &s, size_t idx) {
  if (!convWithEpilogue(s, idx, 4) || s.stages[idx].body->kind != ExprKind::Reduce ||
      s.stages[idx].body->reduceAxes.size() != 3)
    return false;
  const Shape convShape = s.stages[idx].tensor->shape; // N, C, OH, OW
  // The seed schedule accumulated in memory, a load and a store per tap and column; here a
  // vector of output columns stays in a register for all the taps (and input channels of the
  // group), then the fused epilogue runs on it before one store.
  int64_t lanes = s.cpu.lanes(dtypeBytes(s.stages[idx].tensor->dtype));
  int64_t width = convShape[3], vec = std::min(width, lanes);
  bool shifted = width % vec != 0;
  s.knob("vec", vec,
         shifted ? "output columns per vector; the last vector shifted back"
                 : "output columns per vector");

  // An ungrouped convolution (the input channels are the whole reduction): a block of output
  // channels and two rows share each input vector, every tap's weight broadcast once per
  // channel, so that a tile of oc_block x 2 vectors stays in registers (NCHW with a width that
  // fills the vectors better than the channels would, AlterOpLayout's choice at opt_level 3).
  // Six of the registers stay free for the input vectors and broadcasts: with AVX2's 16, a
  // 6 x 2 tile spilled (13 channels: 0.50 ms against 0.39 ms for 5 x 2, one block shifted).
  const Expr &body = s.stages[idx].body;
  const Shape &dataShape = productOperandShape(body, 0);
  if (dataShape.size() == 4 && body->reduceAxes[0].extent == dataShape[1]) {
    NchwTile rule = chooseNchwTile(convShape[1], convShape[2], s.cpu.registers - 6);
    int64_t channels = convShape[1], height = convShape[2];
    int64_t ocBlock = s.define("oc_block", range(1, std::min(channels, s.cpu.registers - 2)),
                               rule.ocBlock, "output channels per register tile");
    std::vector<int64_t> rowCandidates;
    for (int64_t r = 1; r <= std::min<int64_t>(height, 4); ++r)
      if (height % r == 0)
        rowCandidates.push_back(r);
    int64_t rowCount = s.define("rows", rowCandidates, rule.rows, "output rows per register tile");
    s.limit({"oc_block", "rows"}, s.cpu.registers - 2);
    NchwTile tile{ocBlock, rowCount,
                  ocBlock == rule.ocBlock ? rule.shifted : channels % ocBlock != 0};
    s.knob("oc_block", tile.ocBlock,
           tile.shifted ? "output channels per register tile; the last block shifted back"
                        : "output channels per register tile");
    s.knob("rows", tile.rows, "output rows per register tile");
    ComputeRef cacheT = accumulateThroughCache(s, idx);
    Stage &out = s.stage(s.outputs[0]);
    Expr n = out.leaves[0].var, c = out.leaves[1].var, h = out.leaves[2].var, w = out.leaves[3].var;
    auto [co, ci] =
        tile.shifted ? s.splitShifted(out, c, tile.ocBlock) : s.split(out, c, tile.ocBlock);
    int64_t rows = tile.rows;
    auto [ho, hi] = s.split(out, h, rows);
    auto [wo, wi] = shifted ? s.splitShifted(out, w, vec) : s.split(out, w, vec);
    s.reorder(out, {n, co, ho, wo, ci, hi, wi});
    s.parallel(out, s.fuse(out, s.fuse(out, n, co), ho));
    s.unroll(out, ci);
    s.unroll(out, hi);
    s.vectorize(out, wi);
    Stage &acc = accumulateAt(s, cacheT, out, wo);
    Expr cc = acc.leaves[1].var, ch = acc.leaves[2].var, cw = acc.leaves[3].var,
         rc = acc.leaves[4].var, ry = acc.leaves[5].var, rx = acc.leaves[6].var;
    s.reorder(acc, {rc, ry, rx, cc, ch, cw});
    s.unroll(acc, ry);
    s.unroll(acc, rx);
    s.unroll(acc, cc);
    s.unroll(acc, ch);
    s.vectorize(acc, cw);
    return true;
  }

  ComputeRef cacheT = accumulateThroughCache(s, idx);
  Expr wi = tileRowsAndWidth(s, cacheT, vec, shifted);
  s.vectorize(s.stage(s.outputs[0]), wi);
  Stage &acc = s.stage(cacheT);
  Expr cw = acc.leaves[3].var, rc = acc.leaves[4].var, ry = acc.leaves[5].var,
       rx = acc.leaves[6].var;
  s.reorder(acc, {rc, ry, rx, cw});
  s.unroll(acc, ry);
  s.unroll(acc, rx);
  s.vectorize(acc, cw);
  return true;
}

} // namespace loupe::backend::x86
