// Quantize: a float graph made a QDQ graph in the workbench, as Relay's relay.quantize did
// (annotate, calibrate, realize) — every conv2d and dense between quantize/dequantize pairs whose
// scales come from running the graph on calibration inputs — so that FakeQuantizationToInteger
// turns it into integer ops and :layerwise shows what each layer lost.
#pragma once

#include "core/Graph.h"
#include "core/Interpreter.h"
#include "passes/Calibration.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace loupe {

/// How `quantizeGraph` places and scales the quantizations.
struct QuantizeOptions {
  bool perChannel = true;     ///< weights per output channel (else one scale per weight)
  std::set<std::string> skip; ///< conv2d and dense nodes kept float, by name
  bool skipFirstLast = false; ///< the first and the last of them kept float too
  CalibrationMethod method = CalibrationMethod::MinMax; ///< how activations' ranges are picked
  double percentile = 99.99; ///< the magnitudes Percentile keeps, in percent
};

/// What quantizeGraph did, for the command to say.
struct QuantizeReport {
  std::vector<std::string> quantized; ///< the conv2d and dense nodes now between Q/DQ pairs
  std::vector<std::string> kept;      ///< the ones kept float (skipped, or weight not a param)
};

/// `g` with each conv2d and dense whose weight is a bound param (in `params`) made a QDQ
/// region: its data through qnn.quantize → qnn.dequantize (uint8, asymmetric, the scale from the
/// range the calibration saw — min/max, or clipped by `options.method` — stretched to hold 0),
/// its weight through an
/// int8 symmetric pair (max |w| / 127, per output channel or per tensor), and its output — or
/// the relu or clip that is its only reader — through a uint8 pair calibrated as its data. The
/// calibration runs `g` by the reference interpreter once per sample (the variables not in
/// `params`, by name). Scales and zero points are const nodes. Throws Error naming a skipped
/// node the graph does not have, or a graph with no conv2d or dense to quantize.
Graph quantizeGraph(const Graph &g, const ValueSource &params,
                    const std::vector<std::map<std::string, Tensor>> &samples,
                    const QuantizeOptions &options, QuantizeReport *report = nullptr);

} // namespace loupe
