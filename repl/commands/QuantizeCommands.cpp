// QuantizeCommands: `:quantize` — a float graph's conv2d and dense between calibrated
// quantize/dequantize pairs, as a new step — and `:layerwise A B|DIR` — two history steps run on
// the same inputs, or one step against another runtime's tensors, compared node by node (SQNR,
// largest errors), worst first: where a quantized graph loses accuracy.
#include "core/Error.h"
#include "core/Text.h"
#include "repl/Workbench.h"
#include "repl/commands/CommandHelpers.h"
#include "repl/commands/Commands.h"
#include "repl/commands/RunInputs.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace loupe {

// :quantize's arguments, for :help and its errors.
constexpr const char *kQuantizeUsage =
    "[calibrate=random|FILE.npy|DIR] [NAME=FILE.npy …] [samples=N] "
    "[method=minmax|percentile|entropy] [percentile=P] [per_channel=on|off] "
    "[skip=NODE,…|first_last] [seed=N]";

/// The quantize topic's command handlers (quantizing and comparing layer by layer): a member of
/// Commands, so they reach the engine as Commands does.
struct Commands::QuantizeTopic {
  static void layerwise(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void quantize(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
};

namespace {

double numberWord(const std::string &key, const std::string &v) {
  char *end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || !std::isfinite(x))
    fail(key, " must be a number, got '", v, "'");
  return x;
}

} // namespace

void Commands::QuantizeTopic::layerwise(Engine &e, const Args &, const std::string &rest,
                                        std::ostream &out) {
  const char *usage = ":layerwise A B|DIR [NAME=random|zeros|ones|NUMBER|FILE.npy …] [seed=N] "
                      "[top=K] [sqnr=DB]";
  Args words = splitKeepingTuples(rest);
  if (words.size() < 2 || words[0].find('=') != std::string::npos ||
      words[1].find('=') != std::string::npos)
    fail("usage: ", usage);
  if (e.history().empty())
    fail("no steps yet");
  // The second word is a step, or a folder of another runtime's tensors (a word that is not a
  // number and names a folder).
  bool folder = !words[1].empty() && !std::all_of(words[1].begin(), words[1].end(), ::isdigit) &&
                std::filesystem::is_directory(words[1]);
  if (!folder && !std::all_of(words[1].begin(), words[1].end(), ::isdigit))
    fail("layerwise: '", words[1], "' is neither a step nor a folder");
  size_t a = stepArgument(e, words[0]), b = folder ? a : stepArgument(e, words[1]);
  std::map<std::string, std::string> how;
  unsigned seed = 0;
  size_t top = 0;
  std::optional<double> threshold;
  for (size_t i = 2; i < words.size(); ++i) {
    auto [key, value] = keyValue(words[i], std::string("usage: ") + usage);
    if (key == "seed")
      seed = parseSeed(value);
    else if (key == "top") {
      double k = numberWord("top", value);
      if (k < 1 || k != std::floor(k))
        fail("top must be a positive integer, got '", value, "'");
      top = static_cast<size_t>(k);
    } else if (key == "sqnr")
      threshold = numberWord("sqnr", value);
    else
      how[key] = value;
  }
  if (folder && seed)
    fail("layerwise: seed= makes random inputs; against ", words[1],
         " the inputs are its files (or NAME=FILE.npy)");
  LayerwiseView v = folder ? Workbench(e).layerwiseAgainst(a, words[1], how)
                           : Workbench(e).layerwise(a, b, how, seed);
  for (const std::string &n : v.notes)
    out << n << "\n";
  if (v.comparisons.empty()) {
    if (folder)
      out << words[1] << " has no tensor for a value of step " << a << " (NAME.npy of the same "
          << "shape)\n";
    else
      out << "steps " << a << " and " << b << " share no value (no node of the same name and "
          << "shape)\n";
    return;
  }
  std::vector<const LayerComparison *> worst = worstFirst(v.comparisons);
  size_t shown = top ? std::min(top, worst.size()) : worst.size();
  size_t nameWidth = 4, opWidth = 2;
  for (size_t i = 0; i < shown; ++i) {
    nameWidth = std::max(nameWidth, valueName(*worst[i]).size());
    opWidth = std::max(opWidth, worst[i]->op.size());
  }
  out << "step " << b << " against " << v.against << ": " << plural(v.comparisons.size(), "value")
      << " compared, worst SQNR first\n";
  // pad() keeps two spaces after a cell: the widths are the longest cells plus those.
  nameWidth += 2;
  opWidth += 2;
  out << pad("node", nameWidth) << pad("op", opWidth) << pad("SQNR dB", 9) << pad("max abs", 9)
      << "max rel\n";
  for (size_t i = 0; i < shown; ++i) {
    const LayerComparison &c = *worst[i];
    out << pad(valueName(c), nameWidth) << pad(c.op, opWidth) << pad(decibels(c.sqnr), 9)
        << pad(sci(c.maxAbs), 9) << sci(c.maxRel) << (c.dequantized ? "  (dequantized)" : "")
        << "\n";
  }
  if (shown < worst.size())
    out << "… " << plural(worst.size() - shown, "more value") << "\n";
  size_t differing = 0;
  if (std::optional<double> median = medianSqnr(v.comparisons, &differing))
    out << "median SQNR " << decibels(*median) << " dB over the " << plural(differing, "value")
        << (differing == 1 ? " that differs\n" : " that differ\n");
  else
    out << "every value is the same in both\n";
  if (threshold) {
    auto first = std::find_if(v.comparisons.begin(), v.comparisons.end(),
                              [&](const LayerComparison &c) { return c.sqnr < *threshold; });
    if (first == v.comparisons.end())
      out << "no value under " << decibels(*threshold) << " dB\n";
    else
      out << "first under " << decibels(*threshold) << " dB in graph order: " << first->name << " ("
          << first->op << ", " << decibels(first->sqnr) << " dB)\n";
  }
}

void Commands::QuantizeTopic::quantize(Engine &e, const Args &, const std::string &rest,
                                       std::ostream &out) {
  QuantizeOptions options;
  std::map<std::string, std::string> how;
  std::vector<std::map<std::string, std::string>> perSample; // a calibration folder's files
  std::string calibrate = "random";
  size_t samples = 1;
  bool samplesGiven = false, percentileGiven = false;
  unsigned seed = 0;
  for (const std::string &w : splitKeepingTuples(rest)) {
    auto [key, value] = keyValue(w, std::string("usage: :quantize ") + kQuantizeUsage);
    if (key == "calibrate")
      calibrate = value;
    else if (key == "samples") {
      double n = numberWord("samples", value);
      if (n < 1 || n > 1000 || n != std::floor(n))
        fail("samples must be an integer from 1 to 1000, got '", value, "'");
      samples = static_cast<size_t>(n);
      samplesGiven = true;
    } else if (key == "method") {
      options.method = parseCalibrationMethod(value);
    } else if (key == "percentile") {
      double p = numberWord("percentile", value);
      if (!(p > 50 && p <= 100))
        fail("percentile must be above 50 and at most 100, got '", value, "'");
      options.percentile = p;
      percentileGiven = true;
    } else if (key == "per_channel") {
      if (value != "on" && value != "off")
        fail("per_channel must be on or off, got '", value, "'");
      options.perChannel = value == "on";
    } else if (key == "skip") {
      for (const std::string &n : splitList(value, ','))
        if (n == "first_last")
          options.skipFirstLast = true;
        else if (!n.empty())
          options.skip.insert(n);
    } else if (key == "seed")
      seed = parseSeed(value);
    else
      how[key] = value;
  }
  if (percentileGiven && options.method != CalibrationMethod::Percentile)
    fail("percentile= is for method=percentile");
  const Graph &g = e.requireGraph();
  if (calibrate != "random") {
    // A file calibrates the graph's one data input.
    std::vector<std::string> data;
    const IndexedGraph &idx = g.index();
    for (uint32_t nid : idx.argNodes)
      if (!e.modelParams().count(idx.nodes[nid].node->name))
        data.push_back(idx.nodes[nid].node->name);
    if (data.size() != 1)
      fail("calibrate=FILE needs a graph with one data input (this one has ",
           plural(data.size(), "data input"), "); give NAME=FILE.npy for each");
    if (std::filesystem::is_directory(calibrate)) {
      // A folder: each .npy or .npz file in it (by name) one sample of that input.
      for (const auto &f : std::filesystem::directory_iterator(calibrate))
        if (f.is_regular_file() &&
            (f.path().extension() == ".npy" || f.path().extension() == ".npz"))
          perSample.push_back({{data[0], f.path().string()}});
      std::sort(perSample.begin(), perSample.end());
      if (perSample.empty())
        fail("calibrate=", calibrate, ": the folder has no .npy or .npz file");
      if (samplesGiven && samples > perSample.size())
        fail("calibrate=", calibrate, " holds ", plural(perSample.size(), "sample"), ", not ",
             samples);
      if (!samplesGiven)
        samples = perSample.size();
      perSample.resize(samples);
    } else {
      how[data[0]] = calibrate;
      if (samplesGiven && samples > 1)
        fail("calibrate=FILE is one sample; samples= is for calibrate=random or a folder");
    }
  }
  std::vector<std::string> notes;
  QuantizeReport report;
  auto start = std::chrono::steady_clock::now();
  Graph q = Workbench(e).quantize(options, how, perSample, samples, seed, &report, &notes);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (const std::string &n : notes)
    out << n << "\n";
  std::string label = "quantize";
  for (const std::string &w : splitKeepingTuples(rest))
    label += " " + w;
  e.pushStep(q, label, ms, false);
  out << "quantized " << plural(report.quantized.size(), "layer") << " (int8 weights"
      << (options.perChannel ? " per channel" : "") << ", uint8 activations calibrated on "
      << plural(samples, "sample");
  if (options.method == CalibrationMethod::Percentile)
    out << ", magnitudes clipped at their " << options.percentile << "th percentile";
  else if (options.method == CalibrationMethod::Entropy)
    out << ", clipped where the KL divergence is least";
  out << ")";
  if (!report.kept.empty())
    out << "; kept float: " << joinNames(report.kept);
  out << "\n";
}

std::vector<Commands::Listed> Commands::quantizeCommands() {
  using T = QuantizeTopic;
  return {
      {"compare",
       {"layerwise",
        "A B|DIR [NAME=random|zeros|ones|NUMBER|FILE.npy …] [seed=N] [top=K] [sqnr=DB]",
        "runs two history steps' graphs on the same inputs (the bound params, the others random "
        "or given) and compares every value both compute under one node name: SQNR in dB, the "
        "largest absolute and relative errors, worst first (a quantize's steps in real units); "
        "sqnr= names the first value under it in graph order. Against DIR, step A is compared "
        "with the tensors another runtime wrote there (NAME.npy, its inputs among them); the "
        "viewer colours the compared step's nodes by SQNR",
        T::layerwise}},
      {"layerwise",
       {"quantize", kQuantizeUsage,
        "a new step with every conv2d and dense whose weight is a bound param between "
        "quantize/dequantize pairs: int8 weights (symmetric, per output channel unless "
        "per_channel=off), uint8 data and outputs calibrated on N runs of the reference "
        "interpreter (random inputs, a file, or each .npy/.npz of a folder; method: min/max, the "
        "magnitudes' P-th percentile (default 99.99), or the "
        "threshold of least KL divergence); :apply FakeQuantizationToInteger then makes it "
        "integer, :layerwise shows what each layer lost",
        T::quantize}},
  };
}

} // namespace loupe
