// Conv2dNCHWc: the register-tiled schedule of _contrib_conv2d_NCHWc (topi's x86 conv2d_NCHWc).
//
// An output tile of reg_n columns x oc_block channels is accumulated in a local buffer that
// LLVM keeps in vector registers for the whole reduction (ic_chunk, kh, kw, ic_block): per
// step, one vector load of the packed weights and reg_n broadcast FMAs. The fused epilogue
// (bias, batch-norm scale and shift, relu, residual add) reads the tile from registers and the
// result is stored once.
#include "backend/x86/FastSchedules.h"

#include "core/DType.h"

#include <set>
#include <tuple>

namespace loupe::backend::x86 {

using namespace loop;

namespace {

// A unit-stride 1x1 convolution summed over its pixels as one axis (N, OC chunks, pixels, OC
// block) and read back in rows by the elementwise epilogue: the function's one output.
bool pixelConvWithEpilogue(Schedule &s, size_t conv) {
  if (s.outputs.size() != 1)
    return false;
  const Stage &out = s.stage(s.outputs[0]);
  const Shape &c = s.stages[conv].tensor->shape, &o = out.tensor->shape;
  return c.size() == 4 && o.size() == 5 && o[0] == c[0] && o[1] == c[1] && o[2] * o[3] == c[2] &&
         o[4] == c[3] && out.tensor->body->kind != ExprKind::Reduce;
}

// The reads of a zero-padded tensor in `e` (the pad stage's body: tvm_if_then_else(in bounds,
// data, 0)), the first one found; null when there is none.
Expr zeroPadRead(const Expr &e) {
  if (e->kind == ExprKind::TensorRead) {
    const ComputeRef &t = e->tensor;
    const Expr &b = t->body;
    bool zeroPad = t->tag == "pad" && b && b->kind == ExprKind::Call &&
                   b->name == "tvm_if_then_else" && b->args.size() == 3 &&
                   ((b->args[2]->kind == ExprKind::FloatImm && b->args[2]->floatValue == 0) ||
                    isConst(b->args[2], 0));
    return zeroPad ? e : nullptr;
  }
  for (const Expr &a : e->args)
    if (Expr r = zeroPadRead(a))
      return r;
  return nullptr;
}

// Where a convolution's accumulator reads image rows, not the zero padding above and below
// them: the pad stage's tests of its row axis (`axis`) at the row the accumulator reads (an
// expression of the accumulator's output row and kernel row); null when the rows are not
// padded with zeros.
Expr insideRows(const Stage &acc, size_t axis) {
  const Expr &body = acc.tensor->body;
  Expr read = body && body->kind == ExprKind::Reduce ? zeroPadRead(body->args[0]) : nullptr;
  if (!read || read->args.size() <= axis)
    return nullptr;
  const Compute &pad = *read->tensor;
  const ExprNode *row = pad.axes[axis].get();
  std::set<const ExprNode *> others;
  for (const Expr &a : pad.axes)
    if (a.get() != row)
      others.insert(a.get());
  std::vector<Expr> parts;
  conjuncts(pad.body->args[0], &parts);
  Expr test;
  for (const Expr &c : parts) {
    if (!usesVar(c, row) || usesAnyVar(c, others))
      continue;
    Expr at = substitute(c, {{row, read->args[axis]}});
    test = test ? land(test, at) : at;
  }
  return test;
}

} // namespace

bool conv2dNCHWc(Schedule &s, size_t idx) {
  bool pixels = s.stages[idx].tensor->shape.size() == 4;
  if (!(pixels ? pixelConvWithEpilogue(s, idx) : convWithEpilogue(s, idx, 5)))
    return false;
  // N, OC chunks, OH, OW, OC block; or N, OC chunks, pixels, OC block.
  const Shape convShape = s.stages[idx].tensor->shape;
  int dtype = s.stages[idx].tensor->dtype;
  int64_t ocBlock = convShape.back(), ocChunks = convShape[1];
  int64_t width = pixels ? convShape[2] : convShape[3];
  int64_t lanes = s.cpu.lanes(dtypeBytes(dtype));
  int64_t regsPerColumn = (ocBlock + lanes - 1) / lanes;
  const Expr &body = s.stages[idx].body;
  int64_t chunkWeightBytes = ocBlock * body->reduceAxes[0].extent * body->reduceAxes[1].extent *
                             body->reduceAxes[2].extent * body->reduceAxes[3].extent *
                             dtypeBytes(dtype);
  bool pointwise = body->reduceAxes[1].extent == 1 && body->reduceAxes[2].extent == 1;
  // The rule (chooseRegisterTile and the orders below) is the space's default point; every knob
  // can be tuned (backend/schedule/Space.h).
  RegisterTile rt = chooseRegisterTile(width, ocChunks, regsPerColumn, chunkWeightBytes, s.cpu,
                                       pointwise, pixels);
  int64_t regN = s.define("reg_n", range(1, std::min(width, s.cpu.registers - 2)), rt.cols.regN,
                          pixels ? "output pixels (across rows) per register tile"
                                 : "output columns per register tile");
  bool colsShifted = regN == rt.cols.regN ? rt.cols.shifted : width % regN != 0;
  // Several blocks per tile divide the chunks, except over pixels, where the last tile of blocks
  // may be shifted back (over rows a shifted tile of blocks would write the same outputs twice
  // from an epilogue that may read them).
  std::vector<int64_t> ocCandidates;
  for (int64_t t = 1; t <= std::min<int64_t>(ocChunks, 8); ++t)
    if (pixels || ocChunks % t == 0)
      ocCandidates.push_back(t);
  int64_t ocTiles =
      s.define("oc_tiles", ocCandidates, rt.ocTiles, "channel blocks per register tile");
  bool ocShifted = ocTiles == rt.ocTiles ? rt.ocShifted : ocChunks % ocTiles != 0;
  // Accumulators within the registers, one left for an operand.
  s.limit({"reg_n", "oc_tiles"}, (s.cpu.registers - 1) / regsPerColumn);
  Tile tile{regN, colsShifted};
  s.knob("oc_bn", ocBlock, "output channels per block, the vector lanes");
  // An 8-bit sum steps through its block four channels at a time (dot4, one vpdpbusd), a
  // bfloat16 one two at a time (dot2, one vdpbf16ps).
  bool quads = body->args[0]->kind == ExprKind::Call && body->args[0]->name == "dot4";
  bool pairs = body->args[0]->kind == ExprKind::Call && body->args[0]->name == "dot2";
  s.knob("ic_bn",
         body->reduceAxes[3].extent * (quads   ? 4
                                       : pairs ? 2
                                               : 1),
         quads   ? "input channels per block, four per step (dot4)"
         : pairs ? "input channels per block, two per step (dot2)"
                 : "input channels per block");
  s.knob("reg_n", regN,
         std::string(pixels ? "output pixels (across rows)" : "output columns") +
             " per register tile" + (tile.shifted ? "; the last tile shifted back" : ""));
  s.knob("oc_tiles", ocTiles,
         std::string(ocTiles == 2  ? "channel blocks per register tile: each input broadcast "
                                     "feeds both"
                     : ocTiles > 2 ? "channel blocks per register tile: each input broadcast "
                                     "feeds all"
                                   : "channel blocks per register tile") +
             (ocShifted ? "; the last tile of blocks shifted back" : ""));
  // Input (one image) and weight sizes decide the loop order.
  const Shape &dataShape = productOperandShape(s.stages[idx].body, 0);
  int64_t inputElems = 1; // (the batch may be a symbol: a generic kernel's)
  for (size_t d = 1; d < dataShape.size(); ++d)
    inputElems *= dataShape[d];
  int64_t weightElems = ocChunks * ocBlock * body->reduceAxes[0].extent *
                        body->reduceAxes[1].extent * body->reduceAxes[2].extent *
                        body->reduceAxes[3].extent;
  bool rowsOuter = s.define("rows_outer", {0, 1}, inputElems > weightElems ? 1 : 0,
                            "1: input rows outermost, 0: channel chunks outermost") != 0;
  // Kernel columns inside the channel loop keep the tile's accumulators, a weight vector per
  // column of the kernel and the inputs being broadcast live at once: only when they fit the
  // registers (squeezenet's 7x7 first layer, 11 columns on AVX2: 47 GFLOP/s spilling, 90 without).
  int64_t kernelW = body->reduceAxes[2].extent;
  bool kwInnerRule = rt.ocTiles == 1 && kernelW > 1 &&
                     (rt.cols.regN + kernelW) * regsPerColumn + 2 <= s.cpu.registers;
  // (Declared whenever the kernel has columns, so the space does not depend on oc_tiles' value.)
  bool kwInner =
      kernelW > 1 &&
      s.define("kw_inner", {0, 1}, kwInnerRule ? 1 : 0,
               "1: kernel columns unrolled inside the channel loop, with one block") != 0 &&
      ocTiles == 1;
  // Each step broadcasts reg_n inputs and loads oc_tiles weight vectors. AVX-512 reads the
  // broadcasts from memory in the FMAs, so the blocks go outside the columns as in topi;
  // without broadcast operands (AVX2) columns go outside, so that one broadcast is live at a
  // time (blocks outside kept all six of a 2 x 6 tile live with its 12 accumulators: 20
  // registers of 16, spilled, 43 GFLOP/s), except in a 1x1 tile with more blocks than columns,
  // which keeps its broadcasts live instead (multiBlockRoom).
  bool blocksOuter =
      s.define("blocks_outer", {0, 1},
               s.cpu.broadcastOperand || (pointwise && rt.ocTiles * regsPerColumn > rt.cols.regN)
                   ? 1
                   : 0,
               "1: a step's channel blocks outside its columns in the accumulation") != 0;
  s.knob("rows_outer", rowsOuter ? 1 : 0,
         rowsOuter ? "input larger than weights: each input row read once"
                   : "weights larger than input: each channel chunk's weights reused");

  ComputeRef cacheT = accumulateThroughCache(s, idx);
  Stage &out = s.stage(s.outputs[0]);
  Expr n = out.leaves[0].var, oc = out.leaves[1].var, oh = out.leaves[2].var,
       ow = out.leaves[3].var, ob = out.leaves[4].var;
  // Over pixels, the output's rows and columns are one axis that the tiles split.
  Expr cols = pixels ? s.fuse(out, oh, ow) : ow;
  Expr ocOuter = oc, ocInner;
  if (ocTiles > 1)
    std::tie(ocOuter, ocInner) =
        ocShifted ? s.splitShifted(out, oc, ocTiles) : s.split(out, oc, ocTiles);
  auto [owOuter, owInner] =
      tile.shifted ? s.splitShifted(out, cols, regN) : s.split(out, cols, regN);
  // Which operand stays in cache while the other streams: output-channel chunks outermost (as
  // topi) when the weights are the larger, so each chunk's weights serve every row; rows
  // outermost when the input is the larger, so each input row is read once for all chunks.
  // Over pixels, the tiles of pixels take the rows' place.
  Expr rowLoop = pixels ? owOuter : oh;
  Expr first = rowsOuter ? rowLoop : ocOuter, second = rowsOuter ? ocOuter : rowLoop;
  if (pixels)
    s.reorder(out, ocTiles > 1 ? std::vector<Expr>{first, second, ocInner, owInner, ob}
                               : std::vector<Expr>{first, second, owInner, ob});
  else if (ocTiles > 1)
    s.reorder(out, {first, second, owOuter, ocInner, owInner, ob});
  else if (rowsOuter)
    s.reorder(out, {oh, oc});
  Expr rows = s.fuse(out, s.fuse(out, n, first), second);
  s.parallel(out, rows);
  if (ocTiles > 1)
    s.unroll(out, ocInner);
  s.unroll(out, owInner);
  s.vectorize(out, ob);

  Stage &acc = accumulateAt(s, cacheT, out, pixels ? rows : owOuter);
  size_t r = convShape.size(); // the reduce axes follow the data axes
  Expr ic = acc.leaves[r].var, kh = acc.leaves[r + 1].var, kw = acc.leaves[r + 2].var,
       icb = acc.leaves[r + 3].var, cc = acc.leaves[1].var, cw = acc.leaves[r - 2].var,
       cb = acc.leaves[r - 1].var;
  // One channel block (a few channels: the tutorial's 13) gives each input broadcast a single
  // FMA per column; with the kernel's columns unrolled inside the channel loop, neighbouring
  // taps read the same input elements and LLVM loads each once for all the taps that use it.
  s.knob("kw_inner", kwInner ? 1 : 0,
         kwInner ? "kernel columns unrolled inside the channel loop: inputs shared by taps"
                 : "kernel columns outside the channel loop");
  if (kwInner) {
    s.reorder(acc, {ic, kh, icb, cc, cw, kw, cb});
    s.unroll(acc, kw);
  } else if (blocksOuter) {
    s.reorder(acc, {ic, kh, kw, icb, cc, cw, cb});
  } else {
    s.reorder(acc, {ic, kh, kw, icb, cw, cc, cb});
  }
  if (ocTiles > 1)
    s.unroll(acc, cc);
  s.unroll(acc, cw);
  s.vectorize(acc, cb);
  // A tile's output row reads the same input row at every column, so at a kernel row over the
  // top or bottom padding the whole tile's taps multiply zeros, and they can be skipped: one
  // test per kernel row (the columns' padded taps fall inside the tile and still run). On 7x7
  // maps that is 2 of 21 kernel rows, and oneDNN skips them all (its GFLOP/s, counted over
  // every tap, exceed the FMA peak there). The rule skips them only with input rows outermost,
  // where every row streams the weights anyway: with channel chunks outermost, a chunk's
  // weights first stream from memory at the top row, and skipping a kernel row there leaves
  // holes that the next row fetches apart. Measured on a Zen 5: resnet-18's 7x7 layers, whose
  // 9.4 MB of weights come from DRAM in the network, ran 7% slower skipping; alone and warm
  // the same layers ran 11% faster. The tuner decides per layer.
  if (!pixels)
    if (Expr inside = insideRows(acc, 2)) {
      bool skip = s.define("pad_rows", {0, 1}, rowsOuter ? 1 : 0,
                           "1: skip the kernel rows over the top and bottom padding") != 0;
      s.knob("pad_rows", skip ? 1 : 0,
             skip ? "kernel rows over the top and bottom padding skipped"
                  : "kernel rows over the padding computed (zeros)");
      if (skip)
        s.skipUpdatesOutside(acc, inside, "kernel rows over the padding add zeros");
    }
  return true;
}

} // namespace loupe::backend::x86
