// PrecomputeCache: a fast content hash of the precompute graph and its inputs, the tensors'
// blob format, and the lookup-or-evaluate around the reference interpreter.
#include "backend/PrecomputeCache.h"

#include "core/Buffers.h"
#include "core/DType.h"
#include "core/Interpreter.h"
#include "core/Json.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace loupe::backend {

namespace {

// Bumped when the interpreter's numbers for some op change, so that old entries are not used.
constexpr const char *kRevision = "precompute-2"; // 2: inputs hashed in their own dtype

// A 128-bit hash over 64-bit words in four independent lanes (so the multiplies overlap):
// hashing resnet-50's 25.6 M weights takes milliseconds, not the interpreter's second.
struct Hasher {
  uint64_t lane[4] = {0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull,
                      0x082efa98ec4e6c89ull};
  static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v;
    h *= 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
  }
  void words(const uint64_t *w, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
      for (int k = 0; k < 4; ++k)
        lane[k] = mix(lane[k], w[i + k]);
    for (; i < n; ++i)
      lane[i % 4] = mix(lane[i % 4], w[i]);
  }
  // Bytes at any alignment, as words copied a chunk at a time (the last padded with zeros).
  void bytes(const void *p, size_t n) {
    uint64_t chunk[512];
    for (size_t at = 0; at < n; at += sizeof chunk) {
      size_t take = std::min(sizeof chunk, n - at);
      if (take % 8)
        chunk[take / 8] = 0;
      std::memcpy(chunk, static_cast<const char *>(p) + at, take);
      words(chunk, (take + 7) / 8);
    }
  }
  void text(const std::string &s) {
    uint64_t n = s.size();
    words(&n, 1);
    bytes(s.data(), s.size());
  }
  std::string hex() const {
    uint64_t a = mix(mix(lane[0], lane[1]), 0x5bd1e995ull), b = mix(mix(lane[2], lane[3]), a);
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a),
                  static_cast<unsigned long long>(b));
    return buf;
  }
};

template <typename T> void put(std::string &out, T v) {
  out.append(reinterpret_cast<const char *>(&v), sizeof v);
}

} // namespace

std::string precomputeKey(const Graph &pre, const StoredTensors &params) {
  Hasher h;
  h.text(kRevision);
  h.text(saveJSON(pre));
  const IndexedGraph &idx = pre.index();
  for (uint32_t nid : idx.argNodes) {
    const std::string &name = idx.nodes[nid].node->name;
    h.text(name);
    auto it = params.find(name);
    if (it == params.end())
      continue;
    const StoredTensor &t = it->second;
    std::vector<uint64_t> head = {static_cast<uint64_t>(t.dtype()), t.shape().size(), t.numBytes()};
    for (int64_t d : t.shape())
      head.push_back(static_cast<uint64_t>(d));
    h.words(head.data(), head.size());
    h.bytes(t.bytes(), t.numBytes());
  }
  return h.hex();
}

std::vector<KernelCache::Piece> encodePieces(const std::vector<StoredTensor> &ts,
                                             std::vector<std::string> &heads) {
  heads.assign(ts.size() + 1, "");
  heads[0].append("LPC1", 4);
  put<uint32_t>(heads[0], static_cast<uint32_t>(ts.size()));
  for (size_t i = 0; i < ts.size(); ++i) {
    std::string &h = heads[i + 1];
    put<int32_t>(h, ts[i].dtype());
    put<uint32_t>(h, static_cast<uint32_t>(ts[i].shape().size()));
    for (int64_t d : ts[i].shape())
      put<int64_t>(h, d);
  }
  std::vector<KernelCache::Piece> pieces = {{heads[0].data(), heads[0].size()}};
  for (size_t i = 0; i < ts.size(); ++i) {
    pieces.push_back({heads[i + 1].data(), heads[i + 1].size()});
    pieces.push_back({ts[i].bytes(), ts[i].numBytes()});
  }
  return pieces;
}

std::string encodeTensors(const std::vector<StoredTensor> &ts) {
  std::vector<std::string> heads;
  std::string out;
  for (const auto &[data, n] : encodePieces(ts, heads))
    out.append(static_cast<const char *>(data), n);
  return out;
}

std::optional<std::vector<StoredTensor>> decodeTensors(const KernelCache::PayloadReader &source,
                                                       size_t count, uint64_t size) {
  uint64_t left = size; // a damaged shape must not make a tensor larger than the entry
  auto read = [&](void *dst, size_t n) {
    if (n > left || !source(dst, n))
      return false;
    left -= n;
    return true;
  };
  char magic[4];
  uint32_t n = 0;
  if (!read(magic, 4) || std::memcmp(magic, "LPC1", 4) != 0 || !read(&n, 4) || n != count)
    return std::nullopt;
  std::vector<StoredTensor> out;
  for (uint32_t i = 0; i < n; ++i) {
    int32_t dtype = 0;
    uint32_t rank = 0;
    if (!read(&dtype, 4) || !read(&rank, 4) || rank > 32 || dtype < 0 || dtype >= kNumDTypes)
      return std::nullopt;
    Shape shape = rank == 0 ? Shape::scalar() : Shape(rank); // rank 0: a scalar, not unknown
    for (int64_t &d : shape)
      if (!read(&d, 8) || d < 0)
        return std::nullopt;
    uint64_t elements = 1, most = left / static_cast<uint64_t>(dtypeBytes(dtype));
    for (int64_t d : shape) {
      if (d != 0 && elements > most / static_cast<uint64_t>(d))
        return std::nullopt; // more than the entry holds (and no overflow on the way)
      elements *= static_cast<uint64_t>(d);
    }
    std::optional<StoredTensor> t = StoredTensor::filled(shape, dtype, read);
    if (!t)
      return std::nullopt;
    out.push_back(std::move(*t));
  }
  return out;
}

std::optional<std::vector<StoredTensor>> decodeTensors(const std::string &blob, size_t count) {
  size_t at = 0;
  auto read = [&](void *dst, size_t n) {
    if (blob.size() - at < n)
      return false;
    std::memcpy(dst, blob.data() + at, n);
    at += n;
    return true;
  };
  std::optional<std::vector<StoredTensor>> out = decodeTensors(read, count, blob.size());
  if (at != blob.size())
    return std::nullopt;
  return out;
}

StoredTensors evaluatePrecompute(const Graph &pre, const StoredTensors &params,
                                 const KernelCache *cache) {
  std::string key;
  const std::vector<std::string> &names = pre.attr("output_names")->strs;
  auto named = [&](std::vector<StoredTensor> values) {
    StoredTensors out;
    for (size_t i = 0; i < names.size(); ++i)
      out[names[i]] = std::move(values[i]);
    return out;
  };
  if (cache) {
    key = "precompute-" + precomputeKey(pre, params);
    // Read straight into the stored tensors' own bytes (never the whole entry at once).
    std::optional<std::vector<StoredTensor>> ts;
    if (cache->load(key, [&](const KernelCache::PayloadReader &read, uint64_t size) {
          ts = decodeTensors(read, names.size(), size);
          return ts.has_value();
        }))
      return named(std::move(*ts));
  }
  // Each input loaded when reached, each output stored in its own dtype as soon as it is made:
  // a network's weights are never all held as doubles.
  std::vector<StoredTensor> stored(names.size());
  InterpretOptions options;
  options.sink = [&](size_t k, Tensor value) { stored.at(k) = StoredTensor(value); };
  options.askPerReader = true;
  interpretFrom(
      pre,
      [&](const std::string &name) {
        auto it = params.find(name);
        return it == params.end() ? std::nullopt : std::optional<Tensor>(it->second.load());
      },
      options);
  if (cache) { // a full disk only costs the next build time
    std::vector<std::string> heads;
    cache->store(key, encodePieces(stored, heads));
  }
  return named(std::move(stored));
}

} // namespace loupe::backend
