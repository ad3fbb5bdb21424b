// BenchUtil: the benchmark programs' shared helpers (see BenchUtil.h).
#include "BenchUtil.h"

#include "backend/Build.h"
#include "backend/BuiltLibrary.h"
#include "backend/Runtime.h"
#include "core/Attrs.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <stdexcept>

namespace loupe::bench {

std::string ConvShape::name() const {
  std::ostringstream s;
  s << c << "x" << h << "x" << w << "_k" << k << "_" << kh << "x" << kw << "_s" << sh << "_p" << ph;
  if (groups > 1)
    s << "_dw";
  return s.str();
}

std::string gTuning = "off";

void initialize(int &argc, char **argv) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--tuning=", 0) == 0)
      gTuning = arg.substr(9);
    else
      argv[kept++] = argv[i];
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
}

Engine &run(Engine &e, const std::string &program) {
  e.setTuning(gTuning);
  std::istringstream in(program);
  std::string line;
  while (std::getline(in, line)) {
    std::ostringstream o, err;
    if (!e.execute(line, o, err))
      throw std::runtime_error(line + ": " + err.str());
  }
  return e;
}

std::vector<ConvShape> convShapes(const std::string &model) {
  Engine e;
  run(e, ":model " + model + "\n:apply InferShape");
  const Graph &g = e.current()->graph;
  const IndexedGraph &idx = g.index();
  const auto &shapes = g.attr("shape")->shapes;
  std::vector<ConvShape> out;
  for (const auto &n : idx.nodes) {
    if (n.node->isVariable() || n.node->op->name != "conv2d")
      continue;
    const Attrs &a = n.node->parsed;
    const Shape &in = shapes[idx.entryId(n.inputs[0])];
    int64_t groups = a.getInt("groups");
    if (groups != 1 && (groups != in[1] || groups != a.getInt("channels")))
      continue;
    const auto &k = a.getTuple("kernel_size"), &s = a.getTuple("strides"),
               &p = a.getTuple("padding");
    out.push_back(
        {in[1], in[2], in[3], a.getInt("channels"), k[0], k[1], s[0], s[1], p[0], p[1], groups});
  }
  return out;
}

void fillRandom(std::initializer_list<dnnl::memory *> memories, std::mt19937 &rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  for (dnnl::memory *m : memories) {
    auto *p = static_cast<float *>(m->get_data_handle());
    for (size_t i = 0; i < m->get_desc().get_size() / sizeof(float); ++i)
      p[i] = u(rng);
  }
}

double timeDnnl(benchmark::State &state, const dnnl::primitive &prim, dnnl::stream &strm,
                const std::unordered_map<int, dnnl::memory> &args) {
  prim.execute(strm, args);
  strm.wait();
  double total = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    prim.execute(strm, args);
    strm.wait();
    total +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  return total;
}

void bindInputs(backend::GraphRuntime &rt, const Graph &g) {
  auto lib = backend::builtLibrary(g);
  std::mt19937 rng(0);
  std::uniform_real_distribution<double> u(-1, 1);
  const IndexedGraph &idx = g.index();
  const auto &shapes = g.attr("shape")->shapes;
  const auto &dtypes = g.attr("dtype")->ints;
  for (uint32_t nid : idx.argNodes) {
    const std::string &name = idx.nodes[nid].node->name;
    if (lib->params.count(name))
      continue; // bound by the runtime
    uint32_t eid = idx.entryId(nid, 0);
    Tensor t(shapes[eid], static_cast<int>(dtypes[eid]));
    for (double &v : t.data)
      v = u(rng);
    rt.setInput(name, t);
  }
}

double timeKernels(benchmark::State &state, backend::GraphRuntime &rt,
                   const std::vector<std::string> &kernels) {
  rt.run();
  double ms = 0;
  for (auto _ : state)
    for (const auto &[fn, t] : rt.run())
      if (kernels.empty() || std::any_of(kernels.begin(), kernels.end(), [&](const auto &k) {
            return fn.find(k) != std::string::npos;
          }))
        ms += t;
  return ms;
}

double timeProgram(benchmark::State &state, const std::string &program,
                   const std::vector<std::string> &kernels) {
  Engine e;
  run(e, program);
  const Graph &g = e.current()->graph;
  backend::GraphRuntime rt(g);
  bindInputs(rt, g);
  return timeKernels(state, rt, kernels);
}

double timeXnnpack(benchmark::State &state, xnn_operator_t op,
                   const std::function<xnn_status(pthreadpool_t)> &setup) {
  int threads = backend::numThreads();
  pthreadpool_t pool = threads > 1 ? pthreadpool_create(static_cast<size_t>(threads)) : nullptr;
  double total = -1;
  if (setup(pool) != xnn_status_success) {
    state.SkipWithError("the XNNPACK operator's setup failed");
  } else {
    xnn_run_operator(op, pool);
    total = 0;
    for (auto _ : state) {
      auto t0 = std::chrono::steady_clock::now();
      xnn_run_operator(op, pool);
      total +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
  }
  xnn_delete_operator(op);
  if (pool)
    pthreadpool_destroy(pool);
  return total;
}

} // namespace loupe::bench
