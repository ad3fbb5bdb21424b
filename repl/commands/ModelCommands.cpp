// ModelCommands: `:model` — a network of the zoo as the current graph, its params for :build.
#include "core/Error.h"
#include "repl/commands/CommandHelpers.h"
#include "repl/Engine.h"
#include "repl/models/Zoo.h"

#include <chrono>
#include <sstream>

namespace loupe {

namespace {

const char *kModelUsage =
    ":model NAME [batch=N] [shape=(C, H, W)] [classes=N] [dtype=TYPE] [seed=N]";

} // namespace

void Engine::registerModelCommands() {
  commands_.push_back(
      {"model", "[NAME [batch=N] [shape=(C, H, W)] [classes=N] [dtype=TYPE] [seed=N]]",
       "a network of the built-in zoo as a new graph, with params :build binds; no NAME lists "
       "them",
       [](Engine &e, const Args &, const std::string &rest, std::ostream &out) {
         Args a = splitKeepingTuples(rest);
         if (a.empty()) {
           for (const models::Network &n : models::zoo())
             out << pad(n.name, 16) << n.summary << "\n";
           return;
         }
         const models::Network *net = models::findNetwork(a[0]);
         if (!net) {
           std::vector<std::string> names;
           for (const models::Network &n : models::zoo())
             names.push_back(n.name);
           fail("unknown model '", a[0], "'", didYouMean(a[0], names),
                "; models: ", joinNames(names));
         }
         models::Options o;
         o.sample = net->sample;
         o.classes = net->classes;
         unsigned seed = 0;
         for (size_t i = 1; i < a.size(); ++i) {
           size_t eq = a[i].find('=');
           if (eq == std::string::npos)
             fail("expected KEY=VALUE, got '", a[i], "'; usage: ", kModelUsage);
           std::string k = a[i].substr(0, eq), v = a[i].substr(eq + 1);
           if (k == "batch") {
             o.batch = integerAtLeast(k, v, 1);
           } else if (k == "classes") {
             if (!net->classes)
               fail(net->name, " is not a classifier; it has no classes option");
             o.classes = integerAtLeast(k, v, 1);
           } else if (k == "seed") {
             seed = static_cast<unsigned>(integerAtLeast(k, v, 0));
           } else if (k == "dtype") {
             auto dt = dtypeFromName(v);
             if (!dt || (*dt != 0 && *dt != 1))
               fail("dtype must be float32 or float64, got '", v, "'");
             o.dtype = *dt;
           } else if (k == "shape") {
             Shape s = parseIntTuple(v);
             if (s.size() != net->sample.size())
               fail(net->name, " takes a ", net->sample.size(), "-value sample shape such as ",
                    shapeToTuple(net->sample), ", got ", v);
             for (int64_t d : s)
               if (d <= 0)
                 fail("shape must have positive dimensions, got ", v);
             o.sample = s;
           } else {
             fail("unknown option '", k, "'; usage: ", kModelUsage);
           }
         }
         auto t0 = std::chrono::steady_clock::now();
         // The network is built in an engine of its own: its symbols and name counters stay
         // out of the user's session.
         Engine sub;
         std::string program = net->program(o) + ":graph out";
         std::istringstream lines(program);
         std::string line;
         while (std::getline(lines, line)) {
           std::ostringstream sink, err;
           if (!sub.execute(line, sink, err))
             fail("model ", net->name, ": ", err.str().substr(0, err.str().find('\n')));
         }
         Graph g = sub.current()->graph;
         Graph inferred = applyPasses(g, {"InferShape"});
         std::map<std::string, Tensor> params = models::initParams(inferred, o.dtype, seed);
         int64_t values = 0;
         for (const auto &[n, t] : params)
           values += static_cast<int64_t>(t.data.size());
         double ms =
             std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                 .count();
         std::string label = "model " + net->name + " batch=" + std::to_string(o.batch);
         e.pushStep(g, label, ms, true);
         e.modelParams_ = std::move(params);
         e.modelDTypes_.clear();
         out << "step " << e.cursor_ << ": " << label << " (" << graphSize(g.index()) << "; "
             << plural(e.modelParams_.size(), "param") << " holding " << values << " values)\n";
       }});
}

} // namespace loupe
