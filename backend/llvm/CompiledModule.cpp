// CompiledModule: a build's functions generated (each in an LLVM context of its own, hashed so
// that equal kernels compile once), compiled in parallel or loaded from the kernel cache, linked
// by ORC's LLJIT, and printed or written out as IR, assembly and objects.
#include "backend/Codegen.h"
#include "backend/Runtime.h"
#include "backend/llvm/FunctionCodegen.h"
#include "backend/llvm/SourceLines.h"
#include "backend/llvm/Target.h"
#include "core/DType.h"
#include "core/Error.h"
#include "core/Interrupt.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Support/BLAKE3.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace loupe::backend {

using namespace loop;

namespace {

// The name a function is generated under for hashing: the key must not depend on its name.
constexpr const char *kPlaceholder = "loupe_kernel";

// The symbol a kernel is compiled under: its key, so the same code serves any function of any
// build (and its cached object file links under the same name).
std::string kernelSymbol(const std::string &key) { return "loupe_" + key; }

std::string hexDigest(llvm::ArrayRef<uint8_t> bytes) {
  static const char *digits = "0123456789abcdef";
  std::string h;
  for (uint8_t b : bytes) {
    h += digits[b >> 4];
    h += digits[b & 15];
  }
  return h;
}

// One function generated in a context of its own, under the placeholder name, and the key
// that identifies its machine code: a hash of that IR and the target.
struct Kernel {
  std::unique_ptr<llvm::LLVMContext> ctx;
  std::unique_ptr<llvm::Module> module;
  std::string key;
};

Kernel generate(const LoweredFunction &f, const llvm::orc::JITTargetMachineBuilder &jtmb,
                const llvm::TargetMachine &tm) {
  Kernel k;
  k.ctx = std::make_unique<llvm::LLVMContext>();
  k.module = hostModule(*k.ctx, tm);
  generateFunction(*k.module, f, kPlaceholder);
  verify(*k.module);
  std::string text;
  llvm::raw_string_ostream os(text);
  k.module->print(os, nullptr);
  os << targetDescription(jtmb) << (f.fast ? " fast" : "");
  llvm::BLAKE3 hasher;
  hasher.update(os.str());
  k.key = hexDigest(hasher.final<16>());
  return k;
}

// The kernel's object code, its functions named after its key (`loupe_<key>`, …) so that the
// same code can be shared by any function and any build.
std::string compileKernel(Kernel &k, bool fast, const llvm::orc::JITTargetMachineBuilder &jtmb) {
  std::string symbol = kernelSymbol(k.key);
  for (llvm::Function &f : *k.module)
    if (f.getName().starts_with(kPlaceholder))
      f.setName(symbol + f.getName().substr(std::strlen(kPlaceholder)).str());
  auto tm = targetMachine(jtmb);
  optimize(*k.module, *tm, fast);
  return emit(*k.module, *tm, llvm::CodeGenFileType::ObjectFile);
}

// Runs task(i) for i in [0, n) on `threads` threads (the caller is one of them), handing out
// indices in order; the first exception by index is rethrown once all have stopped.
void parallelTasks(size_t n, int threads, const std::function<void(size_t)> &task) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    for (size_t i; !failed && (i = next++) < n;) {
      try {
        checkInterrupt(); // Ctrl-C stops a compile between kernels
        task(i);
      } catch (...) {
        errors[i] = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min<int>(threads, static_cast<int>(n)); ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
  for (const std::exception_ptr &e : errors)
    if (e)
      std::rethrow_exception(e);
}

} // namespace

struct CompiledModule::Impl {
  std::vector<LoweredFunction> fns; ///< kept to generate IR and assembly on demand
  std::map<std::string, std::string> sharedWith;
  CompileStats stats;
  llvm::orc::JITTargetMachineBuilder jtmb = hostBuilder();
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::map<std::string, void (*)(void **)> packed;
  std::string header; ///< C declarations of the functions

  // Optimised modules for printing, made on first use: one per function name ("" for all).
  struct Printable {
    std::unique_ptr<llvm::LLVMContext> ctx;
    std::unique_ptr<llvm::Module> module;
    LoweredListing listing; ///< one function's listing, which its debug locations point at
    std::string assembly;   ///< its host assembly, once emitted
  };
  std::mutex printMutex;
  std::map<std::string, Printable> printable;

  const LoweredFunction &function(const std::string &name) const {
    for (const LoweredFunction &f : fns)
      if (f.name == name)
        return f;
    fail("the compiled module has no function '", name, "'");
  }

  // `name`'s functions (every function for ""), generated under their own names and optimised;
  // one function carries debug locations pointing at its listing's lines (listLowered).
  Printable &printed(const std::string &name) {
    std::lock_guard<std::mutex> lock(printMutex);
    Printable &p = printable[name];
    if (!p.module) {
      auto tm = targetMachine(jtmb);
      auto ctx = std::make_unique<llvm::LLVMContext>();
      auto m = hostModule(*ctx, *tm);
      LoweredListing listing;
      if (name.empty())
        for (const LoweredFunction &f : fns)
          generateFunction(*m, f, f.name);
      else {
        listing = listLowered(function(name));
        generateFunction(*m, function(name), name, &listing.lineOf);
      }
      verify(*m);
      // A build's functions are all fast or all not (the opt level decides).
      bool fast = std::any_of(fns.begin(), fns.end(), [&](const LoweredFunction &f) {
        return f.fast && (name.empty() || f.name == name);
      });
      optimize(*m, *tm, fast);
      p = {std::move(ctx), std::move(m), std::move(listing), ""};
    }
    return p;
  }

  llvm::Module &optimizedModule(const std::string &name) { return *printed(name).module; }

  // The host assembly of `optimizedModule(name)`, emitted once; of one function without its
  // packed wrapper.
  const std::string &hostAssembly(const std::string &name) {
    Printable &p = printed(name);
    std::lock_guard<std::mutex> lock(printMutex);
    if (p.assembly.empty()) {
      std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*p.module);
      if (!name.empty())
        if (llvm::Function *w = copy->getFunction(name + "_packed")) {
          w->deleteBody(); // a declaration must not be internal
          w->setLinkage(llvm::GlobalValue::ExternalLinkage);
        }
      auto tm = targetMachine(jtmb);
      p.assembly = emit(*copy, *tm, llvm::CodeGenFileType::AssemblyFile);
    }
    return p.assembly;
  }
};

CompiledModule::CompiledModule() : impl_(std::make_unique<Impl>()) {}
CompiledModule::~CompiledModule() = default;

std::unique_ptr<CompiledModule> CompiledModule::compile(const std::vector<LoweredFunction> &fns,
                                                        const CompileOptions &options) {
  std::unique_ptr<CompiledModule> cm(new CompiledModule());
  Impl &impl = *cm->impl_;
  impl.fns = fns;
  const llvm::orc::JITTargetMachineBuilder &jtmb = impl.jtmb;
  int threads = options.threads > 0 ? options.threads : numThreads();

  // Generate every function (in parallel: each in its own context) and find the distinct ones.
  // (Generation reads only the target's data layout and triple: one target machine serves all.)
  std::vector<Kernel> kernels(fns.size());
  const std::unique_ptr<llvm::TargetMachine> host = targetMachine(jtmb);
  parallelTasks(fns.size(), threads, [&](size_t i) { kernels[i] = generate(fns[i], jtmb, *host); });
  std::map<std::string, size_t> firstWithKey;
  std::vector<size_t> distinct;
  for (size_t i = 0; i < fns.size(); ++i) {
    auto [it, isNew] = firstWithKey.emplace(kernels[i].key, i);
    if (isNew) {
      distinct.push_back(i);
    } else {
      impl.sharedWith[fns[i].name] = fns[it->second].name;
      kernels[i].module.reset(); // only the key is needed: the first one's code serves
      kernels[i].ctx.reset();
    }
  }
  impl.stats.functions = fns.size();
  impl.stats.distinct = distinct.size();

  // Compile the distinct kernels in parallel, in order of first use.
  std::vector<std::string> objects(distinct.size());
  std::mutex progressMutex;
  impl.stats.cacheUsed = options.cache != nullptr;
  parallelTasks(distinct.size(), threads, [&](size_t u) {
    Kernel &k = kernels[distinct[u]];
    std::optional<std::string> cached;
    if (options.cache)
      cached = options.cache->load(k.key);
    bool stored = false;
    if (cached) {
      objects[u] = std::move(*cached);
    } else {
      objects[u] = compileKernel(k, fns[distinct[u]].fast, jtmb);
      stored = options.cache && options.cache->store(k.key, objects[u]);
    }
    k.module.reset();
    k.ctx.reset();
    std::lock_guard<std::mutex> lock(progressMutex);
    impl.stats.cacheHits += cached.has_value();
    impl.stats.cacheStored += stored;
    ++impl.stats.done;
    if (options.progress)
      options.progress(impl.stats);
  });

  if (options.cache)
    options.cache->trim();

  impl.jit = check(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create(), "LLJIT");
  auto &dylib = impl.jit->getMainJITDylib();
  dylib.addGenerator(check(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                               impl.jit->getDataLayout().getGlobalPrefix()),
                           "process symbols"));
  llvm::orc::SymbolMap runtime;
  runtime[impl.jit->mangleAndIntern("loupe_parallel_for")] = {
      llvm::orc::ExecutorAddr::fromPtr(&loupe_parallel_for), llvm::JITSymbolFlags::Exported};
  if (auto e = dylib.define(llvm::orc::absoluteSymbols(std::move(runtime))))
    fail("LLJIT: ", llvmMessage(std::move(e)));
  for (size_t u = 0; u < distinct.size(); ++u)
    if (auto e = impl.jit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(
            objects[u], kernelSymbol(kernels[distinct[u]].key))))
      fail("LLJIT: ", llvmMessage(std::move(e)));
  for (size_t i = 0; i < fns.size(); ++i) {
    const LoweredFunction &f = fns[i];
    std::string decl = "void " + f.name + "(";
    auto ctype = [](int dt) -> std::string {
      switch (dt) {
      case kFloat32:
        return "float";
      case kFloat64:
        return "double";
      case kFloat16:
        return "_Float16";
      case kBFloat16: // C has no portable bfloat16 (GCC 13's __bf16 is not arithmetic): its bits
        return "uint16_t";
      case kBoolean:
        return "bool";
      default: // int8 … uint64: the C type is the dtype's name with _t
        return std::string(dtypeName(dt)) + "_t";
      }
    };
    bool first = true;
    for (const ComputeRef &p : f.inputs) {
      decl += (first ? "" : ", ") + ctype(p->dtype) + " *" + p->name;
      first = false;
    }
    for (size_t k = 0; k < f.outputs.size(); ++k) {
      decl += (first ? "" : ", ") + ctype(f.outputs[k]->dtype) + " *" + f.outputBuffers[k];
      first = false;
    }
    impl.header += decl + ");\nvoid " + f.name + "_packed(void **args);\n";
    auto addr = check(impl.jit->lookup(kernelSymbol(kernels[i].key) + "_packed"), "LLJIT lookup");
    impl.packed[f.name] = addr.toPtr<void (*)(void **)>();
  }
  return cm;
}

std::string CompiledModule::sharedWith(const std::string &name) const {
  auto it = impl_->sharedWith.find(name);
  return it == impl_->sharedWith.end() ? "" : it->second;
}

const CompileStats &CompiledModule::stats() const { return impl_->stats; }

void (*CompiledModule::packed(const std::string &name) const)(void **) {
  auto it = impl_->packed.find(name);
  if (it == impl_->packed.end())
    fail("the compiled module has no function '", name, "'");
  return it->second;
}

void CompiledModule::call(const std::string &name, const std::vector<void *> &args) const {
  std::vector<void *> a = args;
  packed(name)(a.data());
}

std::vector<std::string> CompiledModule::functions() const {
  std::vector<std::string> v;
  for (const auto &[name, f] : impl_->packed)
    v.push_back(name);
  return v;
}

// A note for a function that runs another's code, as the first line of its IR and assembly.
std::string CompiledModule::sharedNote(const std::string &name, const char *comment) const {
  std::string owner = sharedWith(name);
  return owner.empty() ? ""
                       : std::string(comment) + " " + name + " runs the machine code of " + owner +
                             " (the same loops, compiled once)\n";
}

std::string CompiledModule::llvmIR(const std::string &name) const {
  const llvm::Module &m = impl_->optimizedModule(name);
  if (name.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    m.print(os, nullptr);
    return os.str();
  }
  return sharedNote(name, ";") + annotatedIR(m, impl_->printed(name).listing);
}

std::string CompiledModule::assembly(const std::string &name) const {
  if (name.empty()) {
    // Every function as `:asm FUNC` shows it, each run of instructions under the loop line and
    // nodes it was made for (the module printed whole would carry no such comments).
    std::string out = "# " + std::to_string(impl_->fns.size()) +
                      " functions, each commented as :asm FUNC comments it\n";
    for (const LoweredFunction &f : impl_->fns)
      out += "\n# ---- " + f.name + "\n" + assembly(f.name);
    return out;
  }
  const std::string &text = impl_->hostAssembly(name);
  AnnotatedAssembly a = annotateAssembly(text, impl_->printed(name).listing);
  auto share = [](size_t part, size_t whole) {
    return std::to_string(part) + " of " + std::to_string(whole) + " (" +
           std::to_string(whole ? (100 * part + whole / 2) / whole : 100) + "%)";
  };
  return sharedNote(name, "#") + "# instructions from a loop line that computes nodes: " +
         share(a.traced, a.instructionLines.size()) + "; inside the machine code's loops " +
         share(a.loopTraced, a.loopInstructions) + ", " + std::to_string(a.byLoop) +
         " of them by the loop they run in\n" + a.text;
}

std::string CompiledModule::moduleAssembly() const { return impl_->hostAssembly(""); }

std::vector<unsigned> CompiledModule::instructionLines(const std::string &name) const {
  return annotateAssembly(impl_->hostAssembly(name), impl_->printed(name).listing).instructionLines;
}

std::string CompiledModule::cHeader() const {
  return "// Functions of a Loupe build: inputs first, then outputs, as flat arrays.\n"
         "#include <stdint.h>\n\n" +
         impl_->header;
}

void CompiledModule::writeObject(const std::string &path) const {
  std::unique_ptr<llvm::Module> copy = llvm::CloneModule(impl_->optimizedModule(""));
  addSerialParallelFor(*copy);
  auto tm = targetMachine(impl_->jtmb);
  std::string object = emit(*copy, *tm, llvm::CodeGenFileType::ObjectFile);
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    fail("cannot write ", path, ": ", ec.message());
  os << object;
}

} // namespace loupe::backend
