// OnnxConformance: ONNX's own backend test data (Debian's libonnx-testdata) through the
// workbench — import each model, build it at opt_level 0, 2 and 3, run every test data set and
// compare with the expected outputs at ONNX's tolerances (rtol 1e-3, atol 1e-7). Models with an
// operator or feature the importer refuses are skipped, grouped by reason. Any failure of a
// model that imports is a bug: the exit status is 1.
//
// The workbench's shapes are static, so an input that decides a shape or an axis (Reshape's
// shape, Resize's scales, ReduceSum's axes, …) must be a constant, and so must a scalar
// (rank 0) that such an input is computed from, or that an op taking no scalars reads; ONNX's
// tests feed those as graph inputs. A model refused for that is
// imported again with every input after the first frozen to its value in the test data (as an
// initializer — when every data set holds the same value), or, when that is refused too, with
// every input frozen (Range's start, limit and delta), and counted apart. Symbolic input
// dimensions (an export's dynamic axes) take their sizes from the first data set's inputs.
//
// usage: loupe_onnx_conformance DATA_DIR [FILTER] [--list] [--shard K/N]   (DATA_DIR holds node/,
// pytorch-converted/ or blocks/, the transformer and MobileNetV3 blocks of
// tests/onnx/make_blocks.py)
#include "backend/Build.h"
#include "backend/GraphExecutor.h"
#include "core/DType.h"
#include "core/Error.h"
#include "core/File.h"
#include "frontend/onnx/OnnxImport.h"
#include "passes/Pass.h"

#include <cstdio>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <regex>

using namespace loupe;
namespace fs = std::filesystem;

namespace {

// A skip reason without the model's own path, so equal reasons group.
std::string reasonOf(const std::string &message) {
  static const std::regex node(R"(^.*?: node .*? \((\w+)\): )");
  std::smatch m;
  if (std::regex_search(message, m, node))
    return m[1].str() + ": " + m.suffix().str();
  size_t colon = message.find(": ");
  return colon == std::string::npos ? message : message.substr(colon + 2);
}

// Compares at ONNX's tolerances; returns "" or what differs.
std::string compare(const Tensor &got, const Tensor &want) {
  if (got.shape != want.shape)
    return "shape " + shapeToList(got.shape) + " but expected " + shapeToList(want.shape);
  for (size_t i = 0; i < want.data.size(); ++i) {
    double g = got.data[i], w = want.data[i];
    if ((std::isnan(w) && std::isnan(g)) || g == w) // an infinity is as far from itself as NaN
      continue;
    if (!(std::fabs(g - w) <= 1e-7 + 1e-3 * std::fabs(w)))
      return "element " + std::to_string(i) + " is " + std::to_string(g) + ", expected " +
             std::to_string(w);
  }
  return "";
}

// Test data that predates what ONNX decided and Loupe does, skipped with the reason: until ONNX
// 1.14 its tests truncated float32 to bfloat16; its helpers, ONNX Runtime and the hardware
// round to nearest even (onnx/onnx#3876), and so does Loupe.
std::optional<std::string> outdated(const std::string &model) {
  for (const char *name : {"test_cast_FLOAT_to_BFLOAT16", "test_castlike_FLOAT_to_BFLOAT16",
                           "test_castlike_FLOAT_to_BFLOAT16_expanded"})
    if (model == name)
      return "the test data truncates float32 to bfloat16 (ONNX before 1.14); Cast rounds to "
             "nearest even";
  return std::nullopt;
}

// ONNX's test data holds a bfloat16 tensor as uint16 of its bits (NumPy has no bfloat16): read
// as the bfloat16 values those bits are when the model's side of it is bfloat16.
Tensor asBFloat16(Tensor t, int wantedType) {
  if (wantedType != kBFloat16 || t.dtype != kUint16)
    return t;
  for (double &v : t.data) {
    auto bits = static_cast<uint16_t>(v);
    v = loadElement(&bits, kBFloat16);
  }
  t.dtype = kBFloat16;
  return t;
}

// The test data sets of a model's folder.
std::vector<fs::path> dataSets(const fs::path &dir) {
  std::vector<fs::path> sets;
  for (const auto &set : fs::directory_iterator(dir))
    if (set.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(set.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

// The model's test data inputs from input `first` on made initializers of `m` holding their
// values, serialised, or "" when a data set differs from the first in one of them.
std::string frozen(onnx::ModelProto m, const fs::path &dir, const std::vector<std::string> &inputs,
                   size_t first) {
  std::vector<fs::path> sets = dataSets(dir);
  if (sets.empty())
    return "";
  for (size_t k = first; k < inputs.size(); ++k) {
    std::string file = "input_" + std::to_string(k) + ".pb", value = readFile(sets[0] / file);
    for (size_t i = 1; i < sets.size(); ++i)
      if (readFile(sets[i] / file) != value)
        return "";
    onnx::TensorProto *t = m.mutable_graph()->add_initializer();
    if (!t->ParseFromString(value))
      return "";
    t->set_name(inputs[k]);
  }
  return m.SerializeAsString();
}

// Sizes for the symbolic dimensions of the model's inputs, from the shapes of the first test
// data set's inputs (an export's dynamic axes, sized as the data has them).
frontend::DimSizes dimsFromData(const onnx::ModelProto &m, const fs::path &dir,
                                const std::vector<std::string> &inputs) {
  frontend::DimSizes dims;
  std::vector<fs::path> sets = dataSets(dir);
  if (sets.empty())
    return dims;
  for (const auto &in : m.graph().input()) {
    auto k = std::find(inputs.begin(), inputs.end(), in.name());
    const auto &dimsOf = in.type().tensor_type().shape().dim();
    bool symbolic = std::any_of(dimsOf.begin(), dimsOf.end(), [](const auto &d) {
      return !d.has_dim_value() && !d.dim_param().empty();
    });
    if (k == inputs.end() || !symbolic)
      continue;
    Shape s = frontend::readTensorProto(
                  (sets[0] / ("input_" + std::to_string(k - inputs.begin()) + ".pb")).string())
                  .shape;
    for (int d = 0; d < dimsOf.size() && d < static_cast<int>(s.size()); ++d)
      if (!dimsOf[d].has_dim_value() && !dimsOf[d].dim_param().empty())
        dims[dimsOf[d].dim_param()] = s[d];
  }
  return dims;
}

// The graph inputs that are not initializers, in order (the test data's input_<k>.pb).
std::vector<std::string> graphInputs(const onnx::ModelProto &m) {
  std::set<std::string> init;
  for (const auto &t : m.graph().initializer())
    init.insert(t.name());
  std::vector<std::string> names;
  for (const auto &i : m.graph().input())
    if (!init.count(i.name()))
      names.push_back(i.name());
  return names;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::cerr << "usage: loupe_onnx_conformance DATA_DIR [FILTER] [--list] [--shard K/N]\n";
    return 2;
  }
  registerAllPasses();
  // --list: the skipped models under each reason, not only their count. --shard K/N: every N-th
  // model of the sorted list from the K-th (0-based), so that ctest -j spreads the run.
  bool list = false;
  std::string filter;
  int shard = 0, shards = 1;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--list")
      list = true;
    else if (a == "--shard" && i + 1 < argc) {
      if (std::sscanf(argv[++i], "%d/%d", &shard, &shards) != 2 || shards < 1 || shard < 0 ||
          shard >= shards) {
        std::cerr << "--shard wants K/N with 0 <= K < N, got " << argv[i] << "\n";
        return 2;
      }
    } else
      filter = a;
  }
  std::vector<fs::path> models;
  for (const char *group : {"node", "pytorch-converted", "blocks", "exports"}) {
    fs::path dir = fs::path(argv[1]) / group;
    if (!fs::is_directory(dir))
      continue;
    for (const auto &d : fs::directory_iterator(dir))
      if (fs::exists(d.path() / "model.onnx") &&
          d.path().filename().string().find(filter) != std::string::npos)
        models.push_back(d.path());
  }
  std::sort(models.begin(), models.end());
  std::vector<fs::path> mine;
  for (size_t i = static_cast<size_t>(shard); i < models.size(); i += static_cast<size_t>(shards))
    mine.push_back(models[i]);
  models.swap(mine);
  if (models.empty()) {
    std::cerr << "no models under " << argv[1] << "\n";
    return 2;
  }
  int passed = 0, failed = 0, skipped = 0, frozenPassed = 0;
  std::map<std::string, std::vector<std::string>> skips;
  for (const fs::path &dir : models) {
    std::string name = dir.parent_path().filename().string() + "/" + dir.filename().string();
    if (std::optional<std::string> why = outdated(dir.filename().string())) {
      ++skipped;
      skips[*why].push_back(name);
      continue;
    }
    frontend::OnnxModel m;
    std::string path = (dir / "model.onnx").string(), modelBytes = readFile(path);
    onnx::ModelProto proto;
    proto.ParseFromString(modelBytes); // importOnnxBytes says what is wrong with one that fails
    std::vector<std::string> inputs = graphInputs(proto);
    bool wasFrozen = false;
    frontend::DimSizes dims;
    try {
      dims = dimsFromData(proto, dir, inputs);
      m = frontend::importOnnxBytes(modelBytes, path, dims);
    } catch (const Error &e) {
      std::string reason = reasonOf(e.what());
      bool retry = reason.find("must be a constant") != std::string::npos ||
                   reason.find("is a scalar (rank 0)") != std::string::npos ||
                   reason.find("is a scalar (shape ())") != std::string::npos;
      // The inputs after the first frozen; failing that, every input (Range's start, limit and
      // delta, a window's size: the whole output is then computed at import).
      // When frozen inputs get further, the skip names what stopped them there.
      for (size_t first : {size_t{1}, size_t{0}}) {
        std::string bytes = retry && !wasFrozen ? frozen(proto, dir, inputs, first) : "";
        if (bytes.empty())
          continue;
        try {
          m = frontend::importOnnxBytes(bytes, path, dims);
          wasFrozen = true;
        } catch (const Error &frozenError) {
          std::string further = reasonOf(frozenError.what());
          if (further.find("must be a constant") == std::string::npos)
            reason = further + " (its inputs frozen)";
        }
      }
      if (!wasFrozen) {
        ++skipped;
        skips[reason].push_back(name);
        continue;
      }
    }
    std::string problem;
    for (int opt : {0, 2, 3}) {
      try {
        backend::BuildOptions o;
        o.optLevel = opt;
        o.sharedParams = &m.params;
        o.dtypes = m.inputDTypes;
        Graph deploy = backend::build(m.graph, o, PassContext{});
        // At opt_level 2 PrecomputePrune may have replaced params by precomputed ones.
        const std::map<std::string, Tensor> params = loadAll(backend::builtLibrary(deploy)->params);
        for (const fs::path &set : dataSets(dir)) {
          std::map<std::string, Tensor> in = params;
          for (size_t k = 0; k < inputs.size(); ++k)
            if (std::find(m.inputs.begin(), m.inputs.end(), inputs[k]) != m.inputs.end()) {
              auto declared = m.inputDTypes.find(inputs[k]);
              in[inputs[k]] =
                  asBFloat16(frontend::readTensorProto(
                                 (set / ("input_" + std::to_string(k) + ".pb")).string()),
                             declared == m.inputDTypes.end() ? kUnknownType : declared->second);
            }
          backend::RunResult r = backend::runDeployGraph(deploy, in);
          for (size_t k = 0; k < r.outputs.size() && problem.empty(); ++k) {
            Tensor &got = r.outputs[k];
            Tensor want = asBFloat16(
                frontend::readTensorProto((set / ("output_" + std::to_string(k) + ".pb")).string()),
                got.dtype);
            // An output ONNX declares rank 0 that reduces every axis is the one element of a
            // (1,) here, as NNVM reduces.
            if (std::count(m.scalarOutputs.begin(), m.scalarOutputs.end(), k))
              got.shape = Shape::scalar();
            std::string diff = compare(got, want);
            if (!diff.empty())
              problem = "opt_level " + std::to_string(opt) + ", " + set.filename().string() +
                        ", output " + std::to_string(k) + ": " + diff;
          }
        }
      } catch (const Error &e) {
        problem = "opt_level " + std::to_string(opt) + ": " + e.what();
      }
      if (!problem.empty())
        break;
    }
    if (problem.empty()) {
      ++passed;
      frozenPassed += wasFrozen;
    } else {
      ++failed;
      std::cout << "FAIL " << name << ": " << problem << "\n";
    }
  }
  std::cout << "\nskipped, by reason:\n";
  std::vector<std::pair<std::string, std::vector<std::string>>> byCount(skips.begin(), skips.end());
  std::sort(byCount.begin(), byCount.end(),
            [](const auto &a, const auto &b) { return a.second.size() > b.second.size(); });
  for (const auto &[reason, names] : byCount) {
    std::cout << "  " << names.size() << "  " << reason << "\n";
    if (list)
      for (const std::string &n : names)
        std::cout << "        " << n << "\n";
  }
  std::cout << "\n"
            << frozenPassed << " of those that passed did so with their shape inputs frozen\n";
  std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped\n";
  return failed ? 1 : 0;
}
