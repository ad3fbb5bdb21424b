// Signal: the ONNX converters of spectral operators — DFT as a matrix product of the signal with
// a constant matrix of the transform's cosines and sines.
#include "frontend/onnx/Converters.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/Shape.h"

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

namespace loupe::frontend {

namespace {

// The DFT as a dense layer's weight: row (k, r) — output frequency k, r = 0 for its real part
// and 1 for its imaginary part — over columns (t, c), input sample t and component c (one, real,
// or two, real and imaginary). Y[k] = Σ_t X[t]·e^(∓2πi·kt/N) (scaled by 1/N when inverse):
// Re Y = Σ Re X·cos θ ± Im X·sin θ and Im Y = Σ Im X·cos θ ∓ Re X·sin θ with θ = 2πkt/N; samples
// past N (dft_length shorter than the signal) have zero columns, which truncates the signal, and
// samples past the signal are absent, which pads it with zeros.
Tensor dftMatrix(int64_t samples, int64_t components, int64_t n, int64_t frequencies,
                 bool inverse) {
  Tensor w({2 * frequencies, samples * components}, kFloat32);
  double sign = inverse ? 1 : -1, scale = inverse ? 1.0 / static_cast<double>(n) : 1;
  for (int64_t k = 0; k < frequencies; ++k)
    for (int64_t t = 0; t < std::min(samples, n); ++t) {
      // kt mod N keeps the angle small, so that cos and sin stay exact for large k·t.
      double theta =
          2 * std::numbers::pi * static_cast<double>((k * t) % n) / static_cast<double>(n);
      double c = std::cos(theta) * scale, s = sign * std::sin(theta) * scale;
      auto at = [&](int64_t row, int64_t comp) -> double & {
        return w.data[static_cast<size_t>(row * samples * components + t * components + comp)];
      };
      at(2 * k, 0) = c;     // Re X → Re Y
      at(2 * k + 1, 0) = s; // Re X → Im Y
      if (components == 2) {
        at(2 * k, 1) = -s;    // Im X → Re Y
        at(2 * k + 1, 1) = c; // Im X → Im Y
      }
    }
  return w;
}

// DFT (opset 17; opset 20's axis input when a constant): the signal axis and the components
// moved last, flattened, multiplied by dftMatrix, and moved back.
std::vector<NodeEntry> dft(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"axis", "inverse", "onesided"});
  bool inverse = im.attrInt(n, "inverse", 0) != 0, onesided = im.attrInt(n, "onesided", 0) != 0;
  Shape s = shapeNow(im, n, 0, 3);
  int64_t rank = static_cast<int64_t>(s.size());
  if (rank < 3 || (s.back() != 1 && s.back() != 2))
    fail(im.where(n), ": the signal must be [batch, …, 1 or 2] (real or complex), got shape ",
         shapeToList(s));
  int64_t given = n.input_size() > 2 && !n.input(2).empty()
                      ? integral(im, n, scalarInput(im, n, 2, "axis"), "axis", -rank, rank - 1)
                      : im.attrInt(n, "axis", 1);
  int64_t axis = axisOf(im, n, given, rank);
  if (axis < 1 || axis > rank - 2)
    fail(im.where(n), ": axis ", given, " must name a signal axis, 1 to ", rank - 2);
  int64_t components = s.back(), samples = s[static_cast<size_t>(axis)], length = samples;
  if (n.input_size() > 1 && !n.input(1).empty())
    length = integral(im, n, scalarInput(im, n, 1, "dft_length"), "dft_length", 1, 1 << 16);
  if (onesided && components == 2)
    fail(im.where(n), ": onesided needs a real signal (its last axis of 1)");
  int64_t frequencies = onesided ? length / 2 + 1 : length;

  // Move the signal axis before the components: (rest…, samples, components).
  std::vector<int64_t> perm;
  for (int64_t a = 0; a < rank - 1; ++a)
    if (a != axis)
      perm.push_back(a);
  perm.push_back(axis);
  perm.push_back(rank - 1);
  Shape moved;
  for (int64_t a : perm)
    moved.push_back(s[static_cast<size_t>(a)]);
  NodeEntry x = im.op(n, "transpose", {{"axes", tupleText(perm)}}, {im.input(n, 0)}, "_moved");
  x = im.op(n, "reshape", {{"shape", tupleText({-1, samples * components})}}, {x}, "_rows");
  NodeEntry w =
      im.constantParam(n, "_matrix", dftMatrix(samples, components, length, frequencies, inverse));
  NodeEntry y = im.op(n, "dense", {{"units", std::to_string(2 * frequencies)}, {"use_bias", "0"}},
                      {x, w}, "_dense");
  Shape out = moved;
  out[out.size() - 2] = frequencies;
  out.back() = 2;
  y = im.op(n, "reshape", {{"shape", shapeToTuple(out)}}, {y}, "_spectra");
  std::vector<int64_t> back(static_cast<size_t>(rank));
  for (size_t i = 0; i < perm.size(); ++i)
    back[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return {im.op(n, "transpose", {{"axes", tupleText(back)}}, {y})};
}

} // namespace

ConverterList signalConverters() { return {{"DFT", dft}}; }

} // namespace loupe::frontend
