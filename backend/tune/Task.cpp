// Task: tuning tasks from a built graph, keyed by what their functions compute.
#include "backend/tune/Task.h"

#include "backend/BuiltLibrary.h"
#include "backend/tune/Records.h"
#include "core/Error.h"
#include "core/Json.h"
#include "core/Shape.h"
#include "core/loop/Compute.h"

#include <nlohmann/json.hpp>

#include <map>

namespace loupe::backend {

std::string taskKey(const LoweredFunction &f) {
  std::string text = f.fast ? "fast\n" : "seed\n";
  const TargetCpu &cpu = f.schedule->cpu;
  text += "cpu " + std::to_string(cpu.vectorBytes) + " " + std::to_string(cpu.registers) + " " +
          std::to_string(cpu.l2Bytes) + " " + (cpu.broadcastOperand ? "b" : "r") + "\n";
  for (const loop::ComputeRef &t : loop::topoOrder(f.outputs)) {
    text += (t->placeholder ? "P " : "C ") + t->name + " " + t->tag + " " + shapeToTuple(t->shape) +
            " " + std::to_string(t->dtype);
    if (!t->placeholder)
      text += " " + loop::printExpr(t->body);
    text += "\n";
  }
  for (const loop::ComputeRef &o : f.outputs)
    text += "out " + o->name + "\n";
  return hex16(text);
}

std::string taskFamily(const std::string &scope, const std::string &node,
                       const ConfigSpace &space) {
  std::string text = "family\n" + scope + "\n" + node + "\n";
  for (const Knob &k : space.knobs)
    text += k.name + "\n";
  return hex16(text);
}

std::vector<Task> extractTasks(const Graph &built) {
  auto lib = builtLibrary(built);
  const GraphAttr *m = built.attr("module");
  if (!lib || !m || !m->opaque)
    fail("the current graph was not built; run :build opt_level=3 first");
  auto module = std::static_pointer_cast<const FusedModule>(m->opaque);
  // A dynamic build's variant says its sizes and its build's fingerprint (DynamicBuild).
  const GraphAttr *sizes = built.attr("variant"), *scope = built.attr("variant_scope");
  std::vector<Task> tasks;
  std::map<std::string, size_t> byKey;
  for (const auto &n : built.index().nodes) {
    if (n.node->isVariable() || n.node->op->name != "tvm_op")
      continue;
    const std::string &name = n.node->parsed.getStr("func_name");
    const LoweredFunction &f = lib->lowered.at(name);
    if (!f.fast || f.schedule->space.knobs.empty())
      continue;
    std::string key = taskKey(f);
    auto [it, fresh] = byKey.emplace(key, tasks.size());
    if (fresh) {
      Task t;
      t.key = key;
      t.name = name;
      t.function = module->functions.at(name);
      t.space = f.schedule->space;
      t.rule = t.space.defaultConfig();
      t.flops = countFlops(*f.schedule);
      if (sizes && scope) {
        t.family = taskFamily(scope->str, n.node->name, t.space);
        t.sizes = sizes->str;
      }
      tasks.push_back(std::move(t));
    }
    ++tasks[it->second].calls;
  }
  return tasks;
}

std::string functionToJson(const FusedFunction &f) {
  nlohmann::json j = {
      {"name", f.name},          {"args", f.argNames}, {"flatten_data", f.flattenData},
      {"opt_level", f.optLevel}, {"target", f.target}, {"body", saveJSON(f.body)}};
  return j.dump();
}

FusedFunction functionFromJson(const std::string &text, const std::string &source) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("body") || !j["body"].is_string() ||
      !j.contains("name") || !j.contains("args"))
    fail(source, ": not a fused function");
  FusedFunction f;
  try {
    f.name = j.at("name").get<std::string>();
    f.argNames = j.at("args").get<std::vector<std::string>>();
    f.flattenData = j.value("flatten_data", false);
    f.optLevel = j.value("opt_level", 2);
    f.target = j.value("target", std::string("llvm"));
  } catch (const nlohmann::json::exception &e) {
    fail(source, ": ", e.what());
  }
  f.body = loadJSON(j.at("body").get<std::string>(), source);
  return f;
}

std::string taskLoops(const Task &t, const Config &best) {
  if (!t.function)
    return "";
  TunedPoint point{best, "the best record"};
  return printLowered(lowerFunction(*t.function, best.empty() ? nullptr : &point));
}

} // namespace loupe::backend
