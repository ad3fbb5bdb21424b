// RelayText: the Relay text printer over a graph, following relay-spec §5 (TVM v0.14's
// RelayTextPrinter): names allocated top-down, temporaries bound deepest first, the last
// expression of a scope inline.
#include "core/RelayText.h"

#include "core/Attrs.h"
#include "core/DType.h"
#include "core/Error.h"
#include "core/Op.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace loupe {

namespace {

using Entry = IndexedGraph::Entry;

// A float literal as Relay prints one of `dtype`: 2f, 1.5f, 2f64, 2f16.
std::string floatLiteral(const std::string &text, const std::string &dtype) {
  double v = std::stod(text);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  std::string suffix = dtype == "float64" ? "f64" : dtype == "float16" ? "f16" : "f";
  return buf + suffix;
}

// A scalar constant's literal as Relay prints one: floats as floatLiteral, integers as written
// with Relay's suffix for other widths than int32 (3, 3i64), booleans as True/False.
std::string scalarLiteral(const std::string &text, const std::string &dtype) {
  if (dtype.rfind("float", 0) == 0)
    return floatLiteral(text, dtype);
  long long v = std::llround(std::stod(text));
  if (dtype == "bool")
    return v ? "True" : "False";
  return std::to_string(v) +
         (dtype == "int32" ? ""
                           : dtype.substr(0, 1) + dtype.substr(dtype.find_first_of("0123456789")));
}

// Items as Relay separates arguments, parameters, dimensions: "a, b, c".
std::string commaJoined(const std::vector<std::string> &items) {
  std::string s;
  for (const std::string &i : items)
    s += (s.empty() ? "" : ", ") + i;
  return s;
}

// A tuple attribute as Relay's array: [3, 3].
std::string relayArray(const std::vector<int64_t> &v) {
  std::vector<std::string> items;
  for (int64_t x : v)
    items.push_back(std::to_string(x));
  return "[" + commaJoined(items) + "]";
}

// The optional-info comment of a typed expression (nothing when the type is unknown).
std::string tyComment(const std::string &ty) { return ty.empty() ? "" : " /* ty=" + ty + " */"; }

// A line of a scope `depth` levels deep.
std::string indented(int depth, const std::string &text) {
  return std::string(2 * static_cast<size_t>(depth), ' ') + text;
}

class Printer {
public:
  explicit Printer(const Graph &g)
      : idx_(g.index()), shape_(g.attr("shape")), dtype_(g.attr("dtype")) {
    const GraphAttr *root = g.attr("group_root");
    group_.assign(idx_.numNodes(), -1);
    if (root && root->ints.size() == idx_.numNodes())
      for (uint32_t n = 0; n < idx_.numNodes(); ++n)
        if (isCall(n))
          group_[n] = static_cast<int>(root->ints[n]);
    for (uint32_t n = 0; n < idx_.numNodes(); ++n)
      if (group_[n] >= 0)
        members_[group_[n]].push_back(n);
  }

  std::string print() {
    // Names top-down: @main's parameters, then the body from its result.
    std::vector<std::string> params;
    for (uint32_t nid : idx_.argNodes) {
      const Node &v = *idx_.nodes[nid].node;
      varName_[nid] =
          unique(std::isalpha(static_cast<unsigned char>(v.name[0])) ? v.name : "v" + v.name);
      std::string declared = declaredText(v);
      params.push_back("%" + varName_[nid] + (declared.empty() ? "" : ": " + declared) +
                       tyComment(typeOf({nid, 0, 0})));
    }
    for (const Entry &h : idx_.heads)
      name(h);
    // Then the body, deepest expressions first.
    std::vector<std::string> lines;
    std::string result;
    bindScope(idx_.heads, lines, 1, nullptr, -1);
    if (idx_.heads.size() == 1) {
      result = print(idx_.heads[0], lines, 1, true);
    } else {
      std::vector<std::string> tuple;
      for (const Entry &h : idx_.heads)
        tuple.push_back(print(h, lines, 1, false));
      result = "(" + commaJoined(tuple) + ")";
    }
    std::ostringstream s;
    std::string ret = idx_.heads.size() == 1 ? typeOf(idx_.heads[0]) : "";
    s << "def @main(" << commaJoined(params) << ")" << (ret.empty() ? "" : " -> " + ret) << " {\n";
    for (const std::string &l : lines)
      s << l << "\n";
    s << "  " << result << "\n}\n";
    return s.str();
  }

private:
  bool isCall(uint32_t n) const {
    const Node &node = *idx_.nodes[n].node;
    return !node.isVariable() && node.op->name != "const";
  }

  // Relay's GetUniqueName: a taken name gets the next free counter value of its base.
  std::string unique(const std::string &base) {
    std::string name = base;
    while (used_.count(name))
      name = base + std::to_string(++counter_[base]);
    used_.insert(name);
    return name;
  }

  // An entry's inferred dtype ("" before InferType).
  std::string dtypeOf(const Entry &e) const {
    uint32_t id = idx_.entryId(e);
    if (!dtype_ || id >= dtype_->ints.size() || dtype_->ints[id] < 0)
      return "";
    return std::string(dtypeName(static_cast<int>(dtype_->ints[id])));
  }

  // An entry's inferred type ("" before InferShape and InferType).
  std::string typeOf(const Entry &e) const {
    uint32_t id = idx_.entryId(e);
    std::string dtype = dtypeOf(e);
    if (!shape_ || id >= shape_->shapes.size() || dtype.empty())
      return "";
    return tensorType(shape_->shapes[id], dtype);
  }

  static std::string tensorType(const Shape &s, const std::string &dtype) {
    if (s.empty())
      return dtype;
    std::vector<std::string> dims;
    for (size_t i = 0; i < s.size(); ++i)
      dims.push_back(s[i] < 0 ? "?" : s.dimText(i));
    return "Tensor[(" + commaJoined(dims) + "), " + dtype + "]";
  }

  // A variable's declared type, as @main's parameter list shows it.
  static std::string declaredText(const Node &v) {
    DeclaredType t = declaredType(v);
    return t.shape ? tensorType(*t.shape, t.dtype) : "";
  }

  // A group's parameters: the distinct entries its members read from outside it, in the order
  // the members (in id order) first read them.
  const std::vector<Entry> &paramsOf(int root) {
    auto it = params_.find(root);
    if (it != params_.end())
      return it->second;
    std::vector<Entry> ps;
    for (uint32_t m : members_.at(root))
      for (const Entry &in : idx_.nodes[m].inputs)
        if (group_[in.nodeId] != root) {
          bool seen = false;
          for (const Entry &p : ps)
            seen |= p.nodeId == in.nodeId && p.index == in.index;
          if (!seen)
            ps.push_back(in);
        }
    return params_[root] = ps;
  }

  // Allocates names top-down: a call's callee (a group's function literal: its parameters)
  // before its arguments.
  void name(const Entry &e) {
    uint32_t n = e.nodeId;
    if (!isCall(n) || !named_.insert(n).second)
      return;
    int root = group_[n];
    if (root < 0) {
      for (const Entry &in : idx_.nodes[n].inputs)
        name(in);
      return;
    }
    if (static_cast<uint32_t>(root) != n)
      fail("relay: ", idx_.nodes[n].node->name, " of the fused group of ",
           idx_.nodes[root].node->name, " is read outside its group");
    std::vector<std::string> &names = paramNames_[root];
    for (size_t i = 0; i < paramsOf(root).size(); ++i)
      names.push_back(unique("p" + std::to_string(i)));
    for (const Entry &in : paramsOf(root))
      name(in);
  }

  // What an entry prints as where it is used; calls are bound to temporaries on `lines`
  // (indented `depth` levels) unless `last`. Inside a function literal, `inner` maps the
  // group's parameter entries to their names.
  std::string print(const Entry &e, std::vector<std::string> &lines, int depth, bool last,
                    const std::map<uint32_t, std::string> *inner = nullptr, int group = -1) {
    uint32_t n = e.nodeId;
    const Node &node = *idx_.nodes[n].node;
    if (inner && group_[n] != group) {
      auto it = inner->find(idx_.entryId(e));
      if (it == inner->end())
        fail("relay: ", node.name, " is no parameter of its function");
      return "%" + it->second;
    }
    if (node.isVariable())
      return "%" + varName_.at(n);
    if (!isCall(n) && node.parsed.shape("shape").isScalar()) {
      // A scalar constant is written out, as Relay's printer writes one: 3f /* ty=float32 */.
      std::string dtype = node.parsed.getStr("dtype");
      std::string value = node.parsed.getStr("data");
      value = value.empty() ? node.parsed.raw("value") : value.substr(1, value.size() - 2);
      return scalarLiteral(value, dtype) + tyComment(typeOf(e));
    }
    if (!isCall(n)) {
      auto [it, fresh] = meta_.emplace(n, static_cast<int>(meta_.size()));
      std::string ty = typeOf(e);
      return "meta[relay.Constant][" + std::to_string(it->second) + "]" + tyComment(ty);
    }
    std::map<uint32_t, int> &bound = inner ? innerTemps_[group] : outerTemps_;
    if (auto it = bound.find(n); it != bound.end())
      return "%" + std::to_string(it->second);
    std::string text;
    if (!inner && group_[n] >= 0) {
      // A call of the group's function: its arguments, then the function literal.
      std::vector<std::string> args;
      for (const Entry &p : paramsOf(group_[n]))
        args.push_back(print(p, lines, depth, false));
      auto bound = literals_.find(group_[n]);
      int fn = bound != literals_.end() ? bound->second : literal(group_[n], lines, depth);
      text = "%" + std::to_string(fn) + "(" + commaJoined(args) + ")";
    } else {
      std::vector<std::string> args;
      for (const Entry &in : idx_.nodes[n].inputs)
        args.push_back(print(in, lines, depth, false, inner, group));
      text = call(node, args, e, lines, depth);
    }
    text += tyComment(typeOf(e));
    if (last)
      return text;
    int t = bind(lines, depth, text);
    bound[n] = t;
    return "%" + std::to_string(t);
  }

  // Binds every expression of a scope but its results, in the order seed 003's prints show TVM's
  // printer binding them: by the longest path from the scope's results, deepest first, and in
  // post-order (arguments before the callee) among equals. So in `add(conv, multiply(add(c, c),
  // 2f))` the inner add, at depth 3, comes before the conv2d and the multiply, both at 2.
  // Items are calls (node ids) and, outside functions, primitive function literals (-1 - root).
  void bindScope(const std::vector<Entry> &results, std::vector<std::string> &lines, int depth,
                 const std::map<uint32_t, std::string> *inner, int group) {
    auto inScope = [&](uint32_t n) { return isCall(n) && (inner ? group_[n] == group : true); };
    std::map<int, std::vector<int>> kidsOf; // each item's children, found once
    auto children = [&](int item) -> const std::vector<int> & {
      auto [it, fresh] = kidsOf.try_emplace(item);
      std::vector<int> &out = it->second;
      if (!fresh || item < 0) // a literal's body is its own scope
        return out;
      uint32_t n = static_cast<uint32_t>(item);
      const std::vector<Entry> &ins =
          !inner && group_[n] >= 0 ? paramsOf(group_[n]) : idx_.nodes[n].inputs;
      for (const Entry &in : ins)
        if (inScope(in.nodeId))
          out.push_back(static_cast<int>(in.nodeId));
      if (!inner && group_[n] >= 0)
        out.push_back(-1 - group_[n]);
      return out;
    };
    std::vector<int> post;
    std::set<int> seen;
    std::vector<std::pair<int, size_t>> stack; // (item, next child) — graphs may be deep
    for (const Entry &r : results)
      if (inScope(r.nodeId) && seen.insert(static_cast<int>(r.nodeId)).second)
        stack.push_back({static_cast<int>(r.nodeId), 0});
    std::reverse(stack.begin(), stack.end());
    while (!stack.empty()) {
      auto &[item, next] = stack.back();
      const std::vector<int> &kids = children(item);
      if (next < kids.size()) {
        int kid = kids[next++];
        if (seen.insert(kid).second)
          stack.push_back({kid, 0});
        continue;
      }
      post.push_back(item);
      stack.pop_back();
    }
    std::map<int, int> longest; // item -> longest path from a result
    for (auto it = post.rbegin(); it != post.rend(); ++it)
      for (int kid : children(*it))
        longest[kid] = std::max(longest[kid], longest[*it] + 1);
    std::stable_sort(post.begin(), post.end(),
                     [&](int a, int b) { return longest[a] > longest[b]; });
    for (int item : post) {
      if (item < 0) {
        literals_[-1 - item] = literal(-1 - item, lines, depth);
        continue;
      }
      bool result = false;
      for (const Entry &r : results)
        result |= static_cast<int>(r.nodeId) == item;
      if (!result)
        print({static_cast<uint32_t>(item), 0, 0}, lines, depth, false, inner, group);
    }
  }

  // Binds `text` to the next temporary on `lines`; returns its number.
  int bind(std::vector<std::string> &lines, int depth, const std::string &text) {
    int t = temp_++;
    lines.push_back(indented(depth, "%" + std::to_string(t) + " = " + text + ";"));
    return t;
  }

  // Binds group `root`'s primitive function literal to a temporary; returns its number.
  int literal(int root, std::vector<std::string> &lines, int depth) {
    const std::vector<Entry> &ps = paramsOf(root);
    const std::vector<std::string> &names = paramNames_.at(root);
    std::map<uint32_t, std::string> inner;
    std::vector<std::string> params, types;
    for (size_t i = 0; i < ps.size(); ++i) {
      inner[idx_.entryId(ps[i])] = names[i];
      std::string ty = typeOf(ps[i]);
      params.push_back("%" + names[i] + (ty.empty() ? "" : ": " + ty) + tyComment(ty));
      types.push_back(ty);
    }
    params.push_back("Primitive=1");
    std::vector<std::string> body;
    Entry out{static_cast<uint32_t>(root), 0, 0};
    bindScope({out}, body, depth + 1, &inner, root);
    std::string result = print(out, body, depth + 1, true, &inner, root);
    std::string ret = typeOf(out);
    int t = temp_++;
    lines.push_back(indented(depth, "%" + std::to_string(t) + " = fn (" + commaJoined(params) +
                                        ")" + (ret.empty() ? "" : " -> " + ret) + " {"));
    lines.insert(lines.end(), body.begin(), body.end());
    lines.push_back(indented(depth + 1, result));
    lines.push_back(indented(
        depth,
        "}" + (ret.empty() ? "" : tyComment("fn (" + commaJoined(types) + ") -> " + ret)) + ";"));
    return t;
  }

  // One node's call in Relay's form (a bias adds a second call, bound before it).
  std::string call(const Node &node, const std::vector<std::string> &args, const Entry &e,
                   std::vector<std::string> &lines, int depth) {
    const std::string &op = node.op->name;
    if (auto it = relayScalarOps().find(op); it != relayScalarOps().end()) {
      // The scalar is a literal of the tensor's dtype (float32 before InferType).
      std::string dtype = dtypeOf(e);
      std::string scalar =
          floatLiteral(node.parsed.raw("scalar"), dtype.empty() ? "float32" : dtype);
      return it->second.first + "(" +
             (it->second.second ? scalar + ", " + args[0] : args[0] + ", " + scalar) + ")";
    }
    if (op == "conv2d" || op == "dense") {
      std::vector<std::string> parts(args.begin(), args.begin() + 2);
      if (op == "conv2d") {
        // In the order of Relay's Conv2DAttrs, each only when it is not the default (padding
        // always: Relay normalises it to four values).
        std::vector<int64_t> strides = node.parsed.getTuple("strides"),
                             pad = node.parsed.getTuple("padding"),
                             dilation = node.parsed.getTuple("dilation");
        if (pad.size() == 2)
          pad = {pad[0], pad[1], pad[0], pad[1]};
        if (strides != std::vector<int64_t>{1, 1})
          parts.push_back("strides=" + relayArray(strides));
        parts.push_back("padding=" + relayArray(pad));
        if (dilation != std::vector<int64_t>{1, 1})
          parts.push_back("dilation=" + relayArray(dilation));
        if (node.parsed.getInt("groups") != 1)
          parts.push_back("groups=" + std::to_string(node.parsed.getInt("groups")));
        parts.push_back("channels=" + std::to_string(node.parsed.getInt("channels")));
        parts.push_back("kernel_size=" + relayArray(node.parsed.getTuple("kernel_size")));
        if (node.parsed.getStr("layout") != "NCHW")
          parts.push_back("data_layout=\"" + node.parsed.getStr("layout") + "\"");
      } else {
        parts.push_back("units=" + std::to_string(node.parsed.getInt("units")));
      }
      std::string main =
          std::string(op == "conv2d" ? "nn.conv2d" : "nn.dense") + "(" + commaJoined(parts) + ")";
      if (args.size() < 3)
        return main;
      int t = bind(lines, depth, main + tyComment(typeOf(e)));
      return "nn.bias_add(%" + std::to_string(t) + ", " + args[2] +
             (op == "conv2d" && node.parsed.getStr("layout") == "NCHW" ? ", axis=1" : "") + ")";
    }
    auto it = relayOpNames().find(op);
    std::vector<std::string> parts = args;
    for (const auto &[k, v] : node.attrs)
      parts.push_back(k + "=" + v);
    return (it == relayOpNames().end() ? op : it->second) + "(" + commaJoined(parts) + ")";
  }

  const IndexedGraph &idx_;
  const GraphAttr *shape_, *dtype_;
  std::vector<int> group_;                       // a call's group root, or -1
  std::map<int, std::vector<uint32_t>> members_; // group root -> member ids in id order
  std::map<int, std::vector<Entry>> params_;     // group root -> parameter entries
  std::map<int, std::vector<std::string>> paramNames_;
  std::map<uint32_t, std::string> varName_; // @main's parameters
  std::set<std::string> used_;
  std::map<std::string, int> counter_;
  std::set<uint32_t> named_;
  std::map<uint32_t, int> outerTemps_;
  std::map<int, std::map<uint32_t, int>> innerTemps_;
  std::map<uint32_t, int> meta_; // constant node -> meta index, in order of first print
  std::map<int, int> literals_;  // group root -> the temporary its function literal is bound to
  int temp_ = 0;
};

} // namespace

std::string printRelay(const Graph &g) { return Printer(g).print(); }

DeclaredType declaredType(const Node &variable) {
  DeclaredType t;
  for (const auto &[k, val] : variable.attrs) {
    int code = -1;
    if (k == "shape")
      t.shape = parseShape(val);
    else if (k == "dtype" &&
             std::from_chars(val.data(), val.data() + val.size(), code).ec == std::errc() &&
             code >= 0 && code < kNumDTypes)
      t.dtype = std::string(dtypeName(code));
  }
  return t;
}

const std::map<std::string, std::string> &relayOpNames() {
  static const std::map<std::string, std::string> names = {
      {"broadcast_add", "add"},
      {"elemwise_add", "add"},
      {"broadcast_sub", "subtract"},
      {"elemwise_sub", "subtract"},
      {"broadcast_mul", "multiply"},
      {"elemwise_mul", "multiply"},
      {"broadcast_div", "divide"},
      {"elemwise_div", "divide"},
      {"relu", "nn.relu"},
      {"softmax", "nn.softmax"},
      {"log_softmax", "nn.log_softmax"},
      {"flatten", "nn.batch_flatten"},
      {"max_pool2d", "nn.max_pool2d"},
      {"avg_pool2d", "nn.avg_pool2d"},
      {"global_max_pool2d", "nn.global_max_pool2d"},
      {"global_avg_pool2d", "nn.global_avg_pool2d"},
      {"dropout", "nn.dropout"}};
  return names;
}

const std::map<std::string, std::pair<std::string, bool>> &relayScalarOps() {
  static const std::map<std::string, std::pair<std::string, bool>> ops = {
      {"__add_scalar__", {"add", false}},      {"__sub_scalar__", {"subtract", false}},
      {"__rsub_scalar__", {"subtract", true}}, {"__mul_scalar__", {"multiply", false}},
      {"__div_scalar__", {"divide", false}},   {"__rdiv_scalar__", {"divide", true}}};
  return ops;
}

} // namespace loupe
