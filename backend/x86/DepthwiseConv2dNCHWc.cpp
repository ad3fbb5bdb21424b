// DepthwiseConv2dNCHWc: the register-tiled schedule of _contrib_depthwise_conv2d_NCHWc (topi's
// x86 depthwise_conv2d_NCHWc): reg_n output columns x the channel block held in vector
// registers over the kernel taps, the fused epilogue applied to them before the single store.
#include "backend/x86/FastSchedules.h"

#include "core/DType.h"

#include <algorithm>

namespace loupe::backend::x86 {

using namespace loop;

bool depthwiseConv2dNCHWc(Schedule &s, size_t idx) {
  if (!convWithEpilogue(s, idx, 5) || s.stages[idx].body->kind != ExprKind::Reduce ||
      s.stages[idx].body->reduceAxes.size() != 2)
    return false;
  const Shape convShape = s.stages[idx].tensor->shape; // N, C chunks, OH, OW, C block
  int64_t lanes = s.cpu.lanes(dtypeBytes(s.stages[idx].tensor->dtype));
  int64_t block = convShape[4];
  int64_t regsPerColumn = (block + lanes - 1) / lanes, width = convShape[3];
  Tile rule = chooseTile(width, regsPerColumn, singleBlockAccumulators(s.cpu));
  int64_t regN = s.define("reg_n", range(1, std::min(width, s.cpu.registers - 2)), rule.regN,
                          "output columns per register tile");
  s.limit({"reg_n"}, (s.cpu.registers - 1) / regsPerColumn);
  Tile tile{regN, regN == rule.regN ? rule.shifted : width % regN != 0};
  s.knob("oc_bn", block, "channels per block, the vector lanes");
  s.knob("reg_n", tile.regN,
         tile.shifted ? "output columns per register tile; the last tile shifted back"
                      : "output columns per register tile");

  // The padding is read through its bounds test, not copied first: with 9 FMAs per output a
  // padded copy of the input cost as much as the convolution (stride 2: 0.39-0.52x oneDNN with
  // the copy, 1.05-1.83x without; the test is the same for all lanes, a predictable branch).
  // PartitionLoops then takes the test out of the interior tiles and the row test out of each
  // tap (stride 1 on 112x112 and 56x56 maps: 0.44-0.48x oneDNN with a branch per tap and
  // column, 0.88-0.91x without).
  ComputeRef cacheT = accumulateThroughCache(s, idx, true);
  Expr wi = tileRowsAndWidth(s, cacheT, tile.regN, tile.shifted);
  Stage &out = s.stage(s.outputs[0]);
  s.unroll(out, wi);
  s.vectorize(out, out.leaves.back().var); // the channel block
  Stage &acc = s.stage(cacheT);
  Expr cw = acc.leaves[3].var, cb = acc.leaves[4].var, kh = acc.leaves[5].var,
       kw = acc.leaves[6].var;
  s.reorder(acc, {kh, kw, cw, cb});
  s.unroll(acc, kw);
  s.unroll(acc, cw);
  s.vectorize(acc, cb);
  return true;
}

} // namespace loupe::backend::x86
