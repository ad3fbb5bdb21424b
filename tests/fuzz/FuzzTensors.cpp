// FuzzTensors: tensor files on arbitrary bytes — a .npy array, a .npz archive and an ONNX
// TensorProto (`.pb`), the formats :run and :build read inputs and params from. Bad input must be
// an Error; anything else — a crash, a sanitizer report, another exception — is a bug.
#include "core/Error.h"
#include "core/Npy.h"
#include "core/Npz.h"
#include "frontend/onnx/OnnxImport.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  // Every input goes to both parsers: a .npy seed mutates into TensorProto bytes and back.
  try {
    (void)loupe::parseNpy(bytes, "<fuzz>");
  } catch (const loupe::Error &) {
  }
  try {
    (void)loupe::parseNpz(bytes, "<fuzz>");
  } catch (const loupe::Error &) {
  }
  try {
    (void)loupe::frontend::parseTensorProto(bytes, "<fuzz>");
  } catch (const loupe::Error &) {
  }
  return 0;
}
