// RunInputs: what :build, :run, :bisect and :profile share about tensors given on the command
// line — NAME=VALUE words, fills (random, zeros, ones, a number, a .npy or ONNX .pb file), a
// run's inputs and options, and the reference interpreter's run of a built graph.
#pragma once

#include "core/Interpreter.h"
#include "core/Tensor.h"
#include "core/TensorDiff.h"
#include "repl/Engine.h"

#include <cstddef>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace loupe {

/// `:run`'s usage line.
extern const char *const kRunUsage;
/// NAME=VALUE split at its first '='; anything else fails with `usage`.
std::pair<std::string, std::string> keyValue(const std::string &word, const std::string &usage);
/// A number given in place of a file (`s=2.5`, `x=-1`): every element that value.
std::optional<double> fillValue(const std::string &how);
/// True for the fills named in place of a file: random, zeros, ones, or a number.
bool namesValues(const std::string &how);
/// A tensor file given for `name`: a .npy, an ONNX .pb TensorProto, FILE.npz (its array named
/// `name`) or FILE.npz:KEY, or a .bin of raw little-endian bytes of `dtype` in C order (its
/// shape `shape`, which a .bin needs); anything else fails with a hint naming what is read.
Tensor readTensorFile(const std::string &how, const std::string &name = "",
                      const Shape *shape = nullptr, int dtype = kFloat32);
/// `t`'s values in dtype `dt`, each rounded to what that dtype holds (NumPy's astype).
Tensor converted(const Tensor &t, int dt);
/// A tensor of `shape` and `dt` filled as `how` says: random (uniform in [-1, 1) from `rng`),
/// zeros, ones, a number everywhere, or a .npy/.pb file whose shape must match (values rounded
/// to `dt`, with a note in `notes` when converted); `file` is that file when the caller has read
/// it already; `arrayName` is the array a .npz gives (readTensorFile).
Tensor fillTensor(const std::string &how, const Shape &shape, int dt, std::mt19937 &rng,
                  const std::string &what, const Tensor *file = nullptr,
                  std::vector<std::string> *notes = nullptr, const std::string &arrayName = "");
/// seed=N's value, a non-negative integer.
unsigned parseSeed(const std::string &v);
/// Values with 6 significant digits, at most `n` of them: "[0.5, 1, …]".
std::string someValues(const Tensor &t, size_t n);

/// The words of `:run`.
struct RunWords {
  std::map<std::string, std::string> how; ///< input name → random|zeros|ones|FILE
  unsigned seed = 0;
  std::string save, compare;       ///< folders or files, empty when not asked
  double rtol = 1e-5, atol = 1e-8; ///< compare='s tolerance, NumPy's allclose defaults
  bool toleranceGiven = false;     ///< rtol= or atol= was written
  size_t top = 0;                  ///< 0: no top values
  bool check = true;               ///< compare with the reference interpreter
  /// Input files already read (a dynamic build's, read once for their sizes), by input name.
  std::map<std::string, Tensor> read;
};
/// `:run`'s words parsed (NAME=how, seed=, save=, compare=, top=, check=).
RunWords parseRunWords(const std::string &rest);
/// The inputs of a run of built graph `g`: every variable as the words say, else random — except
/// the built library's params the words leave, which the runtime binds itself. A file converted
/// to the input's dtype adds a note to `notes`.
std::map<std::string, Tensor> runInputs(const Engine &e, const Graph &g, const RunWords &w,
                                        std::vector<std::string> *notes = nullptr);
/// The reference interpreter's run of built graph `g` on `in` (telling `observe` each node's
/// outputs); the variables `in` leaves are the built library's params, loaded per reader.
std::vector<Tensor> referenceRun(const Graph &g, const std::map<std::string, Tensor> &in,
                                 const NodeObserver &observe = NodeObserver());

} // namespace loupe
