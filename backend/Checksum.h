// Checksum: an incremental 256-bit BLAKE3 digest (LLVM's implementation, kept behind this
// LLVM-free interface: only backend/llvm/ includes LLVM's headers).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace loupe::backend {

/// BLAKE3 over bytes given in pieces; `final` gives the digest of everything given so far.
class Checksum {
public:
  Checksum();
  ~Checksum();
  Checksum(const Checksum &) = delete;
  Checksum &operator=(const Checksum &) = delete;
  /// Adds `n` bytes at `data`.
  void update(const void *data, size_t n);
  /// The 32-byte digest.
  std::array<uint8_t, 32> final();

private:
  struct State;
  std::unique_ptr<State> state_;
};

} // namespace loupe::backend
