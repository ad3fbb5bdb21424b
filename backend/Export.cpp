// Export: deploy graph JSON, a shared library linked from the object file, a C header, params.
#include "backend/Export.h"

#include "backend/BuiltLibrary.h"
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

// Runs `cc -shared -o so obj -lm`; a failure reports the compiler's first line of complaint.
void linkShared(const fs::path &obj, const fs::path &so, const fs::path &log) {
  const char *env = std::getenv("CC");
  std::string cc = env && *env ? env : "cc";
  std::vector<std::string> words = {cc, "-shared", "-o", so.string(), obj.string(), "-lm"};
  std::vector<char *> argv;
  for (std::string &w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, cc.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    fail("export: cannot run the C compiler '", cc, "' to link the shared library (",
         std::strerror(rc), "); set CC to one");
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream in(log);
    std::string first;
    std::getline(in, first);
    fail("export: linking the shared library with '", cc, "' failed: ", first);
  }
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
    lib->code->writeObject((scratch / "deploy.o").string());
    linkShared(scratch / "deploy.o", scratch / "deploy.so", scratch / "link.log");
    writeFile(scratch / "deploy.h", lib->code->cHeader());
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
