// Target: the host's LLVM target machine, the O3 pipeline and the machine-code emitters.
#include "backend/llvm/Target.h"
#include "backend/llvm/HostTarget.h"

#include "core/Error.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <mutex>

namespace loupe::backend {

namespace {

void initLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

// Bumped when code generation changes in a way the generated IR does not show (the pass
// pipeline, target options), so kernels compiled by an older Loupe are not reused.
constexpr const char *kCodegenRevision = "codegen-1";

} // namespace

std::string llvmMessage(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return s;
}

llvm::orc::JITTargetMachineBuilder hostBuilder() {
  initLLVM();
  auto jtmb = check(llvm::orc::JITTargetMachineBuilder::detectHost(), "LLVM host detection");
  if (HostTarget t = codegenTarget(); t.cpu != jtmb.getCPU()) { // LOUPE_CODEGEN_CPU
    jtmb.setCPU(t.cpu);
    std::vector<std::string> plus;
    for (const std::string &f : t.features)
      plus.push_back("+" + f);
    jtmb.setFeatures("");
    jtmb.addFeatures(plus);
  }
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  jtmb.setRelocationModel(llvm::Reloc::PIC_); // the same code can go into a shared library
  return jtmb;
}

std::unique_ptr<llvm::TargetMachine> targetMachine(llvm::orc::JITTargetMachineBuilder jtmb) {
  return check(jtmb.createTargetMachine(), "LLVM target machine");
}

std::string targetDescription(const llvm::orc::JITTargetMachineBuilder &jtmb) {
  return jtmb.getTargetTriple().str() + " " + jtmb.getCPU() + " " + jtmb.getFeatures().getString() +
         " llvm-" LLVM_VERSION_STRING " loupe-" LOUPE_VERSION " " + kCodegenRevision;
}

std::unique_ptr<llvm::Module> hostModule(llvm::LLVMContext &ctx, const llvm::TargetMachine &tm) {
  auto m = std::make_unique<llvm::Module>("loupe", ctx);
  m->setDataLayout(tm.createDataLayout());
  m->setTargetTriple(tm.getTargetTriple().str());
  return m;
}

void verify(const llvm::Module &m) {
  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(m, &es))
    fail("LLVM verification failed: ", es.str());
}

void optimize(llvm::Module &m, llvm::TargetMachine &tm, bool fast) {
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = fast;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(m, mam);
}

std::string emit(llvm::Module &m, llvm::TargetMachine &tm, llvm::CodeGenFileType type) {
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, type))
    fail("LLVM cannot emit ",
         type == llvm::CodeGenFileType::ObjectFile ? "object files" : "assembly",
         " for this target");
  pm.run(m);
  return std::string(buf.begin(), buf.end());
}

} // namespace loupe::backend
