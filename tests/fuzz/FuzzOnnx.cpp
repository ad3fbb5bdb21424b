// FuzzOnnx: the ONNX importer on arbitrary bytes (a protobuf that may not parse, or parses into
// a model with any nodes, attributes and initializers), then shape and type inference over the
// imported graph. Bad input must be an Error naming what is wrong; anything else is a bug.
#include "core/Error.h"
#include "frontend/onnx/OnnxImport.h"
#include "passes/Pass.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static bool registered = [] {
    loupe::registerAllPasses();
    return true;
  }();
  (void)registered;
  std::string bytes(reinterpret_cast<const char *>(data), size);
  try {
    loupe::frontend::OnnxModel m = loupe::frontend::importOnnxBytes(bytes, "<fuzz>");
    (void)loupe::applyPasses(m.graph, {"InferShape", "InferType"});
  } catch (const loupe::Error &) {
  }
  return 0;
}
