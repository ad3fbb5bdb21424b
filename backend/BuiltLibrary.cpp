// BuiltLibrary: a deploy graph's built library, found through its module attribute.
#include "backend/BuiltLibrary.h"

#include "core/FusedModule.h"

namespace loupe::backend {

std::shared_ptr<const BuiltLibrary> builtLibrary(const Graph &g) {
  const GraphAttr *m = g.attr("module");
  if (!m || !m->opaque)
    return nullptr;
  auto module = std::static_pointer_cast<const FusedModule>(m->opaque);
  return std::static_pointer_cast<const BuiltLibrary>(module->compiled);
}

} // namespace loupe::backend
