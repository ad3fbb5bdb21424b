// Export: deploy graph JSON, a shared library linked from the object file, a C header, params.
#include "backend/Export.h"

#include "backend/BuiltLibrary.h"
#include "backend/DeployGraph.h"
#include "backend/DynamicBuild.h"
#include "backend/RuntimeSource.h"
#include "core/Error.h"
#include "core/File.h"
#include "core/Json.h"
#include "core/Npy.h"
#include "core/Text.h"

#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace loupe::backend {

namespace fs = std::filesystem;

namespace {

// A param as the deployed code reads it: bfloat16 (which .npy lacks) as uint16 of its bits, the
// type deploy.h declares it with, as ONNX's test data holds bfloat16.
Tensor asStored(Tensor t) {
  if (t.dtype != kBFloat16)
    return t;
  Tensor bits(t.shape, kUint16);
  for (size_t i = 0; i < t.data.size(); ++i)
    bits.data[i] = bfloat16Bits(static_cast<float>(t.data[i]));
  return bits;
}

void writeFile(const fs::path &p, const std::string &text) {
  writeFileAtomically(p.string(), text);
}

// The graph deploy.json holds: a generic network's shapes with -1 for a symbolic dimension (the
// graph runtime's JSON holds integers) and their expressions in `symbolic_shape`, one text per
// entry ("(batch, seq, 768)").
Graph deployJsonGraph(const Graph &g) {
  const GraphAttr *shapes = g.attr("shape");
  if (!shapes)
    return g;
  bool symbolic = false;
  std::vector<Shape> plain;
  std::vector<std::string> texts;
  for (const Shape &s : shapes->shapes) {
    Shape p = s;
    if (s.isSymbolic()) {
      symbolic = true;
      std::vector<int64_t> dims;
      for (size_t d = 0; d < s.size(); ++d)
        dims.push_back(s.dim(d).isConstant() ? s.dim(d).constant() : -1);
      p = Shape(std::move(dims));
    }
    plain.push_back(p);
    texts.push_back(shapeToTuple(s));
  }
  if (!symbolic)
    return g;
  Graph out = g;
  out.attrs["shape"] = GraphAttr::listShape(std::move(plain));
  out.attrs["symbolic_shape"] = GraphAttr::listStr(std::move(texts));
  return out;
}

// A compiler: the one environment variable `var` names, else `fallback`.
struct Compiler {
  const char *var;
  std::string path;
  Compiler(const char *v, const char *fallback) : var(v) {
    const char *env = std::getenv(v);
    path = env && *env ? env : fallback;
  }
};

// Runs `tool` with `args`, its output in `log`; a failure reports the tool's first line of
// complaint, and a tool that cannot start names the variable that chooses it.
void runTool(const Compiler &tool, std::vector<std::string> args, const fs::path &log,
             const std::string &what) {
  args.insert(args.begin(), tool.path);
  std::vector<char *> argv;
  for (std::string &w : args)
    argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, tool.path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    fail("export: cannot run the compiler '", tool.path, "' to ", what, " (", std::strerror(rc),
         "); set ", tool.var, " to one");
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream in(log);
    std::string first;
    std::getline(in, first);
    fail("export: ", what, " with '", tool.path, "' failed: ", first);
  }
}

// deploy.so: the kernels' object, the whole-network runner (deploy_graph.c), the params'
// bytes (params.S) and the REPL's own thread pool (backend/Runtime.cpp, compiled here from the
// text the build embedded), linked by the system C compiler.
void buildSharedLibrary(const fs::path &scratch, const DeploySource &src,
                        const std::vector<std::string> &objects, bool sharedKernels) {
  fs::create_directories(scratch / "src" / "backend");
  writeFile(scratch / "src" / "backend" / "Runtime.h", kRuntimeHeaderSource);
  writeFile(scratch / "src" / "Runtime.cpp", kRuntimeSource);
  writeFile(scratch / "src" / "deploy_graph.c", src.graphC);
  writeFile(scratch / "src" / "params.S", src.paramsS);
  writeFile(scratch / "src" / "params.bin", src.paramsBin);
  fs::path log = scratch / "build.log", s = scratch / "src";
  Compiler cc("CC", "cc"), cxx("CXX", "c++");
  runTool(cxx,
          {"-O2", "-fPIC", "-std=c++20", "-fvisibility=hidden", "-I", s.string(), "-c",
           (s / "Runtime.cpp").string(), "-o", (s / "runtime.o").string()},
          log, "compile the thread pool");
  runTool(cc,
          {"-O2", "-fPIC", "-I", scratch.string(), "-c", (s / "deploy_graph.c").string(), "-o",
           (s / "deploy_graph.o").string()},
          log, "compile the network's runner");
  runTool(
      cc,
      {"-c", "-Wa,-I," + s.string(), (s / "params.S").string(), "-o", (s / "params.o").string()},
      log, "assemble the params");
  std::vector<std::string> link = {"-shared", "-o", (scratch / "deploy.so").string()};
  for (const std::string &o : objects)
    link.push_back((s / o).string());
  // Variants that compiled one kernel alike (the same computation at the same sizes, so the
  // same name and code) each define it: the linker keeps one.
  if (sharedKernels)
    link.push_back("-Wl,--allow-multiple-definition");
  for (const char *rest : {"deploy_graph.o", "params.o", "runtime.o"})
    link.push_back((s / rest).string());
  for (const char *lib : {"-lstdc++", "-lm", "-pthread"})
    link.push_back(lib);
  runTool(cc, link, log, "link the shared library");
}

// The files of an export of `variants` (one, or a dynamic build's; never none), made in a
// scratch folder of `dir` and moved in when every step succeeded.
std::vector<std::string> writeExport(const std::vector<Graph> &variants, const std::string &dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    fail("export: cannot make directory ", dir, (ec ? ": " + ec.message() : std::string()));
  // Named per process: two exports into one directory at once must not share it.
  fs::path scratch = fs::path(dir) / (".loupe-export-" + std::to_string(::getpid()));
  fs::remove_all(scratch, ec);
  fs::create_directories(scratch / "params", ec);
  fs::create_directories(scratch / "src", ec);
  if (ec)
    fail("export: cannot write in ", dir, ": ", ec.message());
  std::vector<std::string> files;
  try {
    std::vector<std::string> dropped;
    // deploy.json, or with several variants deploy.0.json, deploy.1.json, … (the header says
    // which sizes each is).
    for (size_t v = 0; v < variants.size(); ++v) {
      std::string json =
          variants.size() == 1 ? "deploy.json" : "deploy." + std::to_string(v) + ".json";
      writeFile(scratch / json,
                saveJSON(withoutOpaqueAttrs(deployJsonGraph(variants[v]), dropped)));
      files.push_back(json);
    }
    DeploySource src = deploySource(variants);
    // Each variant's kernels as an object of its own; their declarations once each (variant 0's
    // header, then the lines the others add).
    std::vector<std::string> objects;
    std::set<std::string> kernels, declared;
    std::string header;
    bool sharedKernels = false;
    for (size_t v = 0; v < variants.size(); ++v) {
      auto lib = builtLibrary(variants[v]);
      objects.push_back("kernels." + std::to_string(v) + ".o");
      lib->code->writeObject((scratch / "src" / objects.back()).string());
      for (const auto &[name, f] : lib->lowered)
        sharedKernels |= !kernels.insert(name).second;
      std::string text = lib->code->cHeader();
      if (v == 0)
        header = text;
      for (const std::string &line : splitList(text, '\n'))
        if (declared.insert(line).second && v > 0 && !line.empty())
          header += line + "\n"; // a declaration no variant before made
    }
    writeFile(scratch / "deploy.h", "#ifndef LOUPE_DEPLOY_H\n#define LOUPE_DEPLOY_H\n" + header +
                                        "#include <stddef.h>\n" + src.header + "#endif\n");
    buildSharedLibrary(scratch, src, objects, sharedKernels);
    files.push_back("deploy.so");
    files.push_back("deploy.h");
    // The params every variant reads (they share one set of bytes where equal); a param of one
    // name that differs between variants keeps variant 0's file.
    std::map<std::string, StoredTensor> params;
    for (const Graph &v : variants)
      for (const auto &[name, t] : builtLibrary(v)->params)
        params.emplace(name, t);
    for (const auto &[name, t] : params) {
      // Param names come from the model file: kept inside params/ whatever they say.
      writeNpy((scratch / "params" / (npyFileStem(name) + ".npy")).string(), asStored(t.load()));
      files.push_back("params/" + npyFileStem(name) + ".npy");
    }
    if (!params.empty())
      fs::create_directories(fs::path(dir) / "params", ec);
    for (const std::string &f : files) {
      fs::rename(scratch / f, fs::path(dir) / f, ec);
      if (ec)
        fail("export: cannot move ", f, " into ", dir, ": ", ec.message());
    }
  } catch (...) {
    fs::remove_all(scratch, ec);
    throw;
  }
  fs::remove_all(scratch, ec);
  return files;
}

} // namespace

std::vector<std::string> exportBuild(const Graph &deploy, const std::string &dir,
                                     const std::vector<SymBindings> &sizes) {
  std::vector<Graph> variants;
  if (std::shared_ptr<const DynamicBuild> dyn = dynamicBuild(deploy)) {
    for (const SymBindings &b : sizes.empty() ? dyn->variants() : sizes)
      variants.push_back(dyn->specialize(b));
    // A generic build's kernels take any size: the network of them goes last (loupe_create
    // makes variant 0, which needs no sizes when one was built for some).
    if (dyn->generic())
      variants.push_back(*dyn->generic());
    if (variants.empty())
      fail("export: the dynamic build has no size built yet: :run a size, or :build … "
           "specialize SYMBOL=N,… to build those sizes");
  } else {
    if (!sizes.empty())
      fail("export: sizes pick a dynamic build's variants; this graph has none");
    if (!builtLibrary(deploy))
      fail("the current graph was not built; run :build first");
    variants.push_back(deploy);
  }
  return writeExport(variants, dir);
}

} // namespace loupe::backend
