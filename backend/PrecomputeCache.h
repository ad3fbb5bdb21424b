// PrecomputeCache: the params PrecomputePrune's cut-off graph evaluates to, kept in the kernel
// cache under a hash of that graph and the values it reads, so that a rebuild in a new process
// loads them instead of running the reference interpreter over every weight again.
#pragma once

#include "backend/KernelCache.h"
#include "core/Buffers.h"
#include "core/Graph.h"
#include "core/Tensor.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace loupe::backend {

/// The cache key of evaluating `pre` (the precompute graph, shapes and dtypes inferred) on
/// `params`: 32 hex digits hashing its JSON, and the name, dtype, shape and every value of each
/// input it reads.
std::string precomputeKey(const Graph &pre, const StoredTensors &params);

/// The tensors as one blob (each one's dtype, shape and elements at its dtype's width).
std::string encodeTensors(const std::vector<StoredTensor> &ts);
/// That blob as pieces to be written one after another: small headers (held in `heads`) and
/// each tensor's bytes where they are.
std::vector<KernelCache::Piece> encodePieces(const std::vector<StoredTensor> &ts,
                                             std::vector<std::string> &heads);
/// decodeTensors() read a piece at a time from `read` (a cache entry's reader) of `size` bytes.
std::optional<std::vector<StoredTensor>> decodeTensors(const KernelCache::PayloadReader &read,
                                                       size_t count, uint64_t size);

/// The tensors of a blob encodeTensors wrote; nothing when it is not one or does not hold
/// exactly `count` tensors.
std::optional<std::vector<StoredTensor>> decodeTensors(const std::string &blob, size_t count);

/// The evaluated outputs of `pre` on `params`, by output name, in their own dtype: from `cache`
/// when an entry for them is there, else computed by the reference interpreter (and stored,
/// when a cache is given).
StoredTensors evaluatePrecompute(const Graph &pre, const StoredTensors &params,
                                 const KernelCache *cache);

} // namespace loupe::backend
