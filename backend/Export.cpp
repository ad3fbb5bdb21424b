// Export: deploy graph JSON, a shared library linked from the object file, a C header, params.
#include "backend/Export.h"

#include "backend/BuiltLibrary.h"
#include "backend/DeployGraph.h"
#include "backend/RuntimeSource.h"
#include "core/Error.h"
#include "core/File.h"
#include "core/Json.h"
#include "core/Npy.h"

#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
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
void buildSharedLibrary(const fs::path &scratch, const DeploySource &src) {
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
  runTool(cc,
          {"-shared", "-o", (scratch / "deploy.so").string(), (scratch / "deploy.o").string(),
           (s / "deploy_graph.o").string(), (s / "params.o").string(), (s / "runtime.o").string(),
           "-lstdc++", "-lm", "-pthread"},
          log, "link the shared library");
}

} // namespace

std::vector<std::string> exportBuild(const Graph &deploy, const std::string &dir) {
  auto lib = builtLibrary(deploy);
  if (!lib)
    fail("the current graph was not built; run :build first");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    fail("export: cannot make directory ", dir, (ec ? ": " + ec.message() : std::string()));
  // Named per process: two exports into one directory at once must not share it.
  fs::path scratch = fs::path(dir) / (".loupe-export-" + std::to_string(::getpid()));
  fs::remove_all(scratch, ec);
  fs::create_directories(scratch / "params", ec);
  if (ec)
    fail("export: cannot write in ", dir, ": ", ec.message());
  std::vector<std::string> files;
  try {
    std::vector<std::string> dropped;
    writeFile(scratch / "deploy.json", saveJSON(withoutOpaqueAttrs(deploy, dropped)));
    DeploySource src = deploySource(deploy);
    writeFile(scratch / "deploy.h", "#ifndef LOUPE_DEPLOY_H\n#define LOUPE_DEPLOY_H\n" +
                                        lib->code->cHeader() + "#include <stddef.h>\n" +
                                        src.header + "#endif\n");
    lib->code->writeObject((scratch / "deploy.o").string());
    buildSharedLibrary(scratch, src);
    files = {"deploy.json", "deploy.so", "deploy.h"};
    for (const auto &[name, t] : lib->params) {
      // Param names come from the model file: kept inside params/ whatever they say.
      writeNpy((scratch / "params" / (npyFileStem(name) + ".npy")).string(), asStored(t.load()));
      files.push_back("params/" + npyFileStem(name) + ".npy");
    }
    if (!lib->params.empty())
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

} // namespace loupe::backend
