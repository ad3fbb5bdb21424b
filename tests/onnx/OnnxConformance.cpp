// OnnxConformance: ONNX's own backend test data (Debian's libonnx-testdata) through the
// workbench — import each model, build it at opt_level 0, 2 and 3, run every test data set and
// compare with the expected outputs at ONNX's tolerances (rtol 1e-3, atol 1e-7). Models with an
// operator or feature the importer refuses are skipped, grouped by reason. Any failure of a
// model that imports is a bug: the exit status is 1.
//
// usage: loupe_onnx_conformance DATA_DIR [FILTER]   (DATA_DIR holds node/, pytorch-converted/)
#include "backend/Build.h"
#include "backend/GraphExecutor.h"
#include "core/DType.h"
#include "core/Error.h"
#include "frontend/OnnxImport.h"
#include "passes/Pass.h"

#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
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
    if (std::isnan(w) && std::isnan(g))
      continue;
    if (!(std::fabs(g - w) <= 1e-7 + 1e-3 * std::fabs(w)))
      return "element " + std::to_string(i) + " is " + std::to_string(g) + ", expected " +
             std::to_string(w);
  }
  return "";
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::cerr << "usage: loupe_onnx_conformance DATA_DIR [FILTER]\n";
    return 2;
  }
  registerAllPasses();
  std::string filter = argc > 2 ? argv[2] : "";
  std::vector<fs::path> models;
  for (const char *group : {"node", "pytorch-converted"}) {
    fs::path dir = fs::path(argv[1]) / group;
    if (!fs::is_directory(dir))
      continue;
    for (const auto &d : fs::directory_iterator(dir))
      if (fs::exists(d.path() / "model.onnx") &&
          d.path().filename().string().find(filter) != std::string::npos)
        models.push_back(d.path());
  }
  std::sort(models.begin(), models.end());
  if (models.empty()) {
    std::cerr << "no models under " << argv[1] << "\n";
    return 2;
  }
  int passed = 0, failed = 0, skipped = 0;
  std::map<std::string, std::vector<std::string>> skips;
  for (const fs::path &dir : models) {
    std::string name = dir.parent_path().filename().string() + "/" + dir.filename().string();
    frontend::OnnxModel m;
    try {
      m = frontend::importOnnx((dir / "model.onnx").string());
    } catch (const Error &e) {
      ++skipped;
      skips[reasonOf(e.what())].push_back(name);
      continue;
    }
    std::string problem;
    for (int opt : {0, 2, 3}) {
      try {
        backend::BuildOptions o;
        o.optLevel = opt;
        o.params = m.params;
        o.dtypes = m.inputDTypes;
        Graph deploy = backend::build(m.graph, o, PassContext{});
        // At opt_level 2 PrecomputePrune may have replaced params by precomputed ones.
        const std::map<std::string, Tensor> &params = backend::builtLibrary(deploy)->params;
        for (const auto &set : fs::directory_iterator(dir)) {
          if (set.path().filename().string().rfind("test_data_set_", 0) != 0)
            continue;
          std::map<std::string, Tensor> in = params;
          for (size_t k = 0; k < m.inputs.size(); ++k)
            in[m.inputs[k]] = frontend::readTensorProto(
                (set.path() / ("input_" + std::to_string(k) + ".pb")).string());
          backend::RunResult r = backend::runDeployGraph(deploy, in);
          for (size_t k = 0; k < r.outputs.size() && problem.empty(); ++k) {
            Tensor want = frontend::readTensorProto(
                (set.path() / ("output_" + std::to_string(k) + ".pb")).string());
            std::string diff = compare(r.outputs[k], want);
            if (!diff.empty())
              problem = "opt_level " + std::to_string(opt) + ", " + set.path().filename().string() +
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
    } else {
      ++failed;
      std::cout << "FAIL " << name << ": " << problem << "\n";
    }
  }
  std::cout << "\nskipped, by reason:\n";
  std::vector<std::pair<std::string, std::vector<std::string>>> byCount(skips.begin(), skips.end());
  std::sort(byCount.begin(), byCount.end(),
            [](const auto &a, const auto &b) { return a.second.size() > b.second.size(); });
  for (const auto &[reason, names] : byCount)
    std::cout << "  " << names.size() << "  " << reason << "\n";
  std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped\n";
  return failed ? 1 : 0;
}
