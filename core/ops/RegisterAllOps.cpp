// registerAllOps: one explicit call per op family (no static initialisers).
#include "core/ops/OpHelpers.h"

#include <mutex>

namespace loupe {

void registerAllOps() {
  static std::once_flag once;
  std::call_once(once, [] {
    ops::registerElemwiseOps();
    ops::registerBroadcastOps();
    ops::registerLogicOps();
    ops::registerUnaryMathOps();
    ops::registerActivationOps();
    ops::registerNormOps();
    ops::registerIndexOps();
    ops::registerScanOps();
    ops::registerReduceOps();
    ops::registerNnOps();
    ops::registerBatchNormOps();
    ops::registerPadOps();
    ops::registerConvOps();
    ops::registerConv3dOps();
    ops::registerPoolOps();
    ops::registerImageOps();
    ops::registerTransformOps();
    ops::registerInitOps();
    ops::registerInternalOps();
    ops::registerQnnOps(); // after conv2d and dense, whose attributes the integer ones take
  });
}

} // namespace loupe
