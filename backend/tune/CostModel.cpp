// CostModel: XGBoost's C API (Debian's libxgboost) over knob-value features.
#include "backend/tune/CostModel.h"

#include "core/Error.h"

#include <xgboost/c_api.h>

#include <cmath>

namespace loupe::backend {

namespace {

void check(int rc, const char *what) {
  if (rc != 0)
    fail("cost model: ", what, ": ", XGBGetLastError());
}

// A DMatrix of the rows, freed with it.
struct Matrix {
  DMatrixHandle h = nullptr;
  Matrix(const std::vector<std::vector<float>> &rows) {
    size_t cols = rows.empty() ? 0 : rows[0].size();
    std::vector<float> flat;
    for (const auto &r : rows)
      flat.insert(flat.end(), r.begin(), r.end());
    check(XGDMatrixCreateFromMat(flat.data(), rows.size(), cols, NAN, &h), "matrix");
  }
  ~Matrix() {
    if (h)
      XGDMatrixFree(h);
  }
};

} // namespace

std::vector<float> featuresOf(const ConfigSpace &space, const Config &c) {
  std::vector<float> f;
  for (const Knob &k : space.knobs) {
    auto it = c.find(k.name);
    double v = static_cast<double>(it == c.end() ? k.rule : it->second);
    f.push_back(static_cast<float>(v));
    f.push_back(static_cast<float>(std::log2(std::max(v, 0.5))));
  }
  for (const ProductLimit &l : space.limits) {
    double p = 1;
    for (const std::string &k : l.knobs) {
      auto it = c.find(k);
      p *= static_cast<double>(it == c.end() ? 1 : it->second);
    }
    f.push_back(static_cast<float>(p));
  }
  return f;
}

struct CostModel::Impl {
  BoosterHandle booster = nullptr;
  ~Impl() {
    if (booster)
      XGBoosterFree(booster);
  }
};

CostModel::CostModel() : impl_(std::make_unique<Impl>()) {}
CostModel::~CostModel() = default;
CostModel::CostModel(CostModel &&) noexcept = default;
CostModel &CostModel::operator=(CostModel &&) noexcept = default;

bool CostModel::trained() const { return impl_->booster != nullptr; }

void CostModel::fit(const std::vector<std::vector<float>> &features,
                    const std::vector<float> &scores) {
  if (features.empty())
    return;
  Matrix train(features);
  check(XGDMatrixSetFloatInfo(train.h, "label", scores.data(), scores.size()), "labels");
  BoosterHandle b = nullptr;
  check(XGBoosterCreate(&train.h, 1, &b), "booster");
  auto param = [&](const char *k, const char *v) {
    int rc = XGBoosterSetParam(b, k, v);
    if (rc != 0) {
      XGBoosterFree(b);
      check(rc, k);
    }
  };
  // AutoTVM's settings for its XGBTuner, on one thread (the measurements are what take time).
  param("objective", "reg:squarederror");
  param("max_depth", "6");
  param("eta", "0.3");
  param("subsample", "1.0");
  param("min_child_weight", "1");
  param("nthread", "1");
  param("verbosity", "0");
  for (int round = 0; round < 40; ++round) {
    int rc = XGBoosterUpdateOneIter(b, round, train.h);
    if (rc != 0) {
      XGBoosterFree(b);
      check(rc, "training");
    }
  }
  if (impl_->booster)
    XGBoosterFree(impl_->booster);
  impl_->booster = b;
}

std::vector<float> CostModel::predict(const std::vector<std::vector<float>> &features) const {
  if (!impl_->booster || features.empty())
    return std::vector<float>(features.size(), 0.0f);
  Matrix m(features);
  bst_ulong n = 0;
  const float *out = nullptr;
  check(XGBoosterPredict(impl_->booster, m.h, 0, 0, 0, &n, &out), "prediction");
  return std::vector<float>(out, out + n);
}

} // namespace loupe::backend
