// Checksum: backend/Checksum.h's BLAKE3 digest, by LLVM's BLAKE3.
#include "backend/Checksum.h"

#include <llvm/Support/BLAKE3.h>

namespace loupe::backend {

struct Checksum::State {
  llvm::BLAKE3 hasher;
};

Checksum::Checksum() : state_(std::make_unique<State>()) {}
Checksum::~Checksum() = default;

void Checksum::update(const void *data, size_t n) {
  state_->hasher.update(llvm::ArrayRef<uint8_t>(static_cast<const uint8_t *>(data), n));
}

std::array<uint8_t, 32> Checksum::final() { return state_->hasher.final(); }

} // namespace loupe::backend
