// registerAllPasses: one explicit call per pass file, in the order `:passes` lists them.
#include "passes/Pass.h"

#include <mutex>

namespace loupe {

void registerCorrectLayoutPass();
void registerInferShapePass();
void registerInferTypePass();
void registerSaveJSONPass();
void registerLoadJSONPass();
void registerPrintGraphIRPass();
void registerGraphFusePartitionPass();
void registerPlanMemoryPass();
void registerGraphFuseCompilePass();
void registerSimplifyInferencePass();
void registerFoldScaleAxisPass();
void registerAlterOpLayoutPass();
void registerGradientPass();
void registerFoldConstantPass();
void registerFoldShapeOfPass();
void registerEliminateCommonSubexprPass();
void registerFuseOpsPass();
void registerPrecomputePrunePass();
void registerOrderMutationPass();
void registerPlaceDevicePass();
void registerEliminateIdentityPass();
void registerSimplifyGeluPass();
void registerSimplifyLayerNormPass();
void registerMatMulToDensePass();
void registerSimplifyPowPass();
void registerFakeQuantizationToIntegerPass();
void registerQnnCanonicalizePass();
void registerQnnLegalizePass();
void registerToMixedPrecisionPass();

void registerAllPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllOps();
    registerCorrectLayoutPass();
    registerInferShapePass();
    registerInferTypePass();
    registerSaveJSONPass();
    registerLoadJSONPass();
    registerPrintGraphIRPass();
    registerGraphFusePartitionPass();
    registerPlanMemoryPass();
    registerGraphFuseCompilePass();
    registerSimplifyInferencePass();
    registerFoldScaleAxisPass();
    registerAlterOpLayoutPass();
    registerGradientPass();
    registerFoldConstantPass();
    registerFoldShapeOfPass();
    registerEliminateCommonSubexprPass();
    registerFuseOpsPass();
    registerPrecomputePrunePass();
    registerOrderMutationPass();
    registerPlaceDevicePass();
    registerEliminateIdentityPass();
    registerSimplifyGeluPass();
    registerSimplifyLayerNormPass();
    registerMatMulToDensePass();
    registerSimplifyPowPass();
    registerFakeQuantizationToIntegerPass();
    registerQnnCanonicalizePass();
    registerQnnLegalizePass();
    registerToMixedPrecisionPass();
  });
}

} // namespace loupe
