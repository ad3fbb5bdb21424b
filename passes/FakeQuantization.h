// FakeQuantization: what FakeQuantizationToInteger makes of one edge of a QDQ region — for `:why`
// on an edge from a dequantize into an op, or from an op (or its relu/clip) into a quantize — and
// the arithmetic its requantizes use.
#pragma once

#include "core/Graph.h"
#include "passes/Pass.h"

#include <cstdint>
#include <string>

namespace loupe {

/// FakeQuantizationToInteger's verdict on the region the edge producer → consumer belongs to (a
/// qnn.dequantize read by an op, or an op, or the relu/clip over it, read by a qnn.quantize): that
/// it computes on the integers, or the remark that says which op keeps it float. Empty when the
/// edge is no region's. `ctx` gives the params (the pass reads constant scales); `g` must have its
/// shapes and dtypes.
std::string fakeQuantizationEdge(const Graph &g, const PassContext &ctx, uint32_t producer,
                                 uint32_t consumer);

/// The compute_dtype FakeQuantizationToInteger gives the requantizes and sums it makes: `ctx`'s
/// "requantize" option (`:set requantize`), float32 when unset (the QDQ file's float ops
/// rounded as ONNX Runtime rounds them) or int64 (TVM's fixed point). Throws Error naming the
/// option for any other value.
std::string requantizeComputeDtype(const PassContext &ctx);

} // namespace loupe
