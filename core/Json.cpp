// Json: a dmlc-style writer for exact output, nlohmann/json for reading.
#include "core/Json.h"

#include "core/Error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace loupe {

namespace {

/// dmlc::JSONWriter's layout rules: each container is multi-line or single-line; items of a
/// multi-line container start on a new line indented two spaces per open container; a closing
/// bracket gets its own line only when its container was multi-line and non-empty and the
/// enclosing container is multi-line too (or there is none).
class Writer {
public:
  std::string out;

  void beginArray(bool multi) { begin('[', multi); }
  void endArray() { end(']'); }
  void beginObject(bool multi) { begin('{', multi); }
  void endObject() { end('}'); }
  void item() {
    if (count_.back()++ != 0)
      out += ", ";
    separator();
  }
  void key(const std::string &k) {
    if (count_.back()++ > 0)
      out += ", ";
    separator();
    string(k);
    out += ": ";
  }
  void string(const std::string &s) {
    out += '"';
    for (char c : s) {
      switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
      }
    }
    out += '"';
  }
  void number(int64_t v) { out += std::to_string(v); }

  void intArray(const std::vector<int64_t> &v) {
    beginArray(v.size() > 10);
    for (int64_t x : v) {
      item();
      number(x);
    }
    endArray();
  }
  void stringArray(const std::vector<std::string> &v) {
    beginArray(true); // dmlc: arrays of non-POD items are always multi-line
    for (const auto &x : v) {
      item();
      string(x);
    }
    endArray();
  }

private:
  std::vector<bool> multi_;
  std::vector<size_t> count_;

  void separator() {
    if (multi_.empty() || multi_.back())
      out += "\n" + std::string(multi_.size() * 2, ' ');
  }
  void begin(char c, bool multi) {
    out += c;
    multi_.push_back(multi);
    count_.push_back(0);
  }
  void end(char c) {
    bool newline = multi_.back();
    size_t n = count_.back();
    multi_.pop_back();
    count_.pop_back();
    if (newline && n != 0)
      separator();
    out += c;
  }
};

void writeEntries(Writer &w, const std::vector<IndexedGraph::Entry> &es) {
  w.beginArray(es.size() > 10);
  for (const auto &e : es) {
    w.item();
    w.beginArray(false);
    for (uint32_t v : {e.nodeId, e.index, e.version}) {
      w.item();
      w.number(v);
    }
    w.endArray();
  }
  w.endArray();
}

void writeAttrValue(Writer &w, const std::string &key, const GraphAttr &a) {
  w.beginArray(false);
  w.item();
  w.string(a.typeName());
  w.item();
  switch (a.type) {
  case GraphAttr::Type::ListInt:
    w.intArray(a.ints);
    break;
  case GraphAttr::Type::ListShape:
    w.beginArray(true);
    for (const auto &s : a.shapes) {
      w.item();
      w.intArray(s);
    }
    w.endArray();
    break;
  case GraphAttr::Type::ListStr:
  case GraphAttr::Type::ListLayout:
    w.stringArray(a.strs);
    break;
  case GraphAttr::Type::Str:
    w.string(a.str);
    break;
  case GraphAttr::Type::SizeT:
  case GraphAttr::Type::Int:
    w.number(a.num);
    break;
  case GraphAttr::Type::DictStrInt:
    w.beginObject(a.dict.size() > 1);
    for (const auto &[k, v] : a.dict) {
      w.key(k);
      w.number(v);
    }
    w.endObject();
    break;
  case GraphAttr::Type::Opaque:
    fail("SaveJSON: graph attribute '", key, "' (", a.str, ") cannot be saved as JSON");
  }
  w.endArray();
}

} // namespace

std::string saveJSON(const Graph &g) {
  const IndexedGraph &idx = g.index();
  Writer w;
  w.beginObject(true);
  w.key("nodes");
  w.beginArray(true);
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const auto &in = idx.nodes[nid];
    const Node &n = *in.node;
    w.item();
    w.beginObject(true);
    w.key("op");
    w.string(n.isVariable() ? "null" : n.op->name);
    w.key("name");
    w.string(n.name);
    if (!n.attrs.empty()) {
      auto sorted = n.attrs;
      std::stable_sort(sorted.begin(), sorted.end(),
                       [](const auto &a, const auto &b) { return a.first < b.first; });
      w.key("attrs");
      w.beginObject(sorted.size() > 1);
      for (const auto &[k, v] : sorted) {
        w.key(k);
        w.string(v);
      }
      w.endObject();
    }
    w.key("inputs");
    writeEntries(w, in.inputs);
    if (!in.controlDeps.empty()) {
      w.key("control_deps");
      std::vector<int64_t> cd(in.controlDeps.begin(), in.controlDeps.end());
      w.intArray(cd);
    }
    w.endObject();
  }
  w.endArray();
  w.key("arg_nodes");
  w.intArray(std::vector<int64_t>(idx.argNodes.begin(), idx.argNodes.end()));
  w.key("node_row_ptr");
  w.intArray(std::vector<int64_t>(idx.rowPtr.begin(), idx.rowPtr.end()));
  w.key("heads");
  writeEntries(w, idx.heads);
  if (!g.attrs.empty()) {
    w.key("attrs");
    w.beginObject(g.attrs.size() > 1);
    for (const auto &k : orderedAttrKeys(g.attrs)) {
      w.key(k);
      writeAttrValue(w, k, g.attrs.at(k));
    }
    w.endObject();
  }
  w.endObject();
  return w.out;
}

namespace {

// Objects keep the order of the file: NNVM read a node's attributes into its map in that order
// (dmlc's JSON reader), which decides the order PrintGraphIR shows them in.
using json = nlohmann::ordered_json;

std::string where(const std::string &text, size_t byte) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return cat(line, ":", col);
}

const json &need(const json &obj, const char *key, const std::string &ctx) {
  if (!obj.is_object() || !obj.contains(key))
    fail(ctx, ": missing key '", key, "'");
  return obj.at(key);
}

uint32_t toU32(const json &v, const std::string &ctx) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > UINT32_MAX)
    fail(ctx, ": expected a non-negative integer, got ", v.dump());
  return static_cast<uint32_t>(v.get<int64_t>());
}

IndexedGraph::Entry toEntry(const json &v, const std::string &ctx) {
  if (!v.is_array() || v.size() < 2 || v.size() > 3)
    fail(ctx, ": an entry must be [node_id, index, version], got ", v.dump());
  return {toU32(v[0], ctx), toU32(v[1], ctx), v.size() == 3 ? toU32(v[2], ctx) : 0};
}

std::vector<int64_t> toInts(const json &v, const std::string &ctx) {
  if (!v.is_array())
    fail(ctx, ": expected a list of integers");
  std::vector<int64_t> out;
  for (const auto &x : v) {
    if (!x.is_number_integer())
      fail(ctx, ": expected a list of integers, got ", x.dump());
    out.push_back(x.get<int64_t>());
  }
  return out;
}

std::vector<std::string> toStrs(const json &v, const std::string &ctx) {
  if (!v.is_array())
    fail(ctx, ": expected a list of strings");
  std::vector<std::string> out;
  for (const auto &x : v) {
    if (!x.is_string())
      fail(ctx, ": expected a list of strings, got ", x.dump());
    out.push_back(x.get<std::string>());
  }
  return out;
}

GraphAttr decodeAttr(const std::string &key, const json &v, const std::string &src) {
  std::string ctx = cat(src, ": graph attribute '", key, "'");
  if (!v.is_array() || v.size() != 2 || !v[0].is_string())
    fail(ctx, ": expected [type_name, value]");
  std::string type = v[0].get<std::string>();
  const json &val = v[1];
  if (type == "list_int")
    return GraphAttr::listInt(toInts(val, ctx));
  if (type == "list_shape") {
    if (!val.is_array())
      fail(ctx, ": expected a list of shapes");
    std::vector<Shape> shapes;
    for (const auto &s : val)
      shapes.push_back(toInts(s, ctx));
    return GraphAttr::listShape(std::move(shapes));
  }
  if (type == "list_str")
    return GraphAttr::listStr(toStrs(val, ctx));
  if (type == "list_layout")
    return GraphAttr::listLayout(toStrs(val, ctx));
  if (type == "str") {
    if (!val.is_string())
      fail(ctx, ": expected a string");
    return GraphAttr::string(val.get<std::string>());
  }
  if (type == "size_t" || type == "int") {
    if (!val.is_number_integer())
      fail(ctx, ": expected an integer");
    return type == "int" ? GraphAttr::integer(val.get<int64_t>())
                         : GraphAttr::sizeT(val.get<int64_t>());
  }
  if (type == "dict_str_int") {
    if (!val.is_object())
      fail(ctx, ": expected an object");
    GraphAttr a;
    a.type = GraphAttr::Type::DictStrInt;
    for (const auto &[k, x] : val.items()) {
      if (!x.is_number_integer())
        fail(ctx, ": expected integer values");
      a.dict[k] = x.get<int64_t>();
    }
    return a;
  }
  fail(ctx, ": unknown type '", type, "'");
}

AttrDict toDict(const json &v, const std::string &ctx) {
  if (!v.is_object())
    fail(ctx, ": 'attrs' must be an object of strings");
  AttrDict d;
  for (const auto &[k, x] : v.items()) {
    if (!x.is_string())
      fail(ctx, ": attribute '", k, "' must be a string, got ", x.dump());
    d.emplace_back(k, x.get<std::string>());
  }
  return d;
}

// loadJSON's work; the JSON library's own exceptions escape it.
Graph loadJSONChecked(const std::string &text, const std::string &source) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    fail(source, ": empty file, expected NNVM graph JSON");
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error &e) {
    // nlohmann reports the byte after the offending one; point at the character itself.
    size_t byte = e.byte > 0 ? e.byte - 1 : 0;
    std::string msg = e.what();
    auto p = msg.find("syntax error");
    if (p == std::string::npos)
      p = msg.find("] ") == std::string::npos ? 0 : msg.find("] ") + 2;
    fail(source, ":", where(text, byte), ": malformed JSON: ", msg.substr(p));
  }
  if (!j.is_object())
    fail(source, ": expected a JSON object with 'nodes', 'arg_nodes' and 'heads'");
  const json &jnodes = need(j, "nodes", source);
  need(j, "arg_nodes", source);
  const json &jheads = need(j, "heads", source);
  if (!jnodes.is_array())
    fail(source, ": 'nodes' must be a list");

  std::vector<NodePtr> nodes;
  for (size_t i = 0; i < jnodes.size(); ++i) {
    const json &jn = jnodes[i];
    std::string ctx = cat(source, ": node ", i);
    const json &jop = need(jn, "op", ctx);
    const json &jname = need(jn, "name", ctx);
    if (!jop.is_string() || !jname.is_string())
      fail(ctx, ": 'op' and 'name' must be strings");
    std::string opName = jop.get<std::string>(), name = jname.get<std::string>();
    ctx = cat(source, ": node ", i, " ('", name, "')");
    AttrDict attrs;
    for (const char *k : {"attrs", "attr", "param"})
      if (jn.contains(k))
        for (auto &kv : toDict(jn.at(k), ctx))
          setAttr(attrs, kv.first, kv.second);
    std::vector<NodeEntry> inputs;
    const json &jin = need(jn, "inputs", ctx);
    if (!jin.is_array())
      fail(ctx, ": 'inputs' must be a list");
    for (const auto &e : jin) {
      auto en = toEntry(e, ctx);
      if (en.nodeId >= i)
        fail(ctx, ": input refers to node ", en.nodeId, ", which does not come before it");
      if (en.index >= nodes[en.nodeId]->numOutputs())
        fail(ctx, ": input refers to output ", en.index, " of node ", en.nodeId, ", which has ",
             nodes[en.nodeId]->numOutputs());
      inputs.push_back({nodes[en.nodeId], en.index, en.version});
    }
    std::vector<NodePtr> deps;
    if (jn.contains("control_deps"))
      for (int64_t d : toInts(jn.at("control_deps"), ctx)) {
        if (d < 0 || static_cast<size_t>(d) >= i)
          fail(ctx, ": control dependency ", d, " does not come before it");
        deps.push_back(nodes[d]);
      }
    if (opName == "null") {
      if (!inputs.empty())
        fail(ctx, ": a variable cannot have inputs");
      nodes.push_back(makeVariable(name, std::move(attrs)));
      continue;
    }
    const OpDef *op = OpRegistry::get().find(opName);
    if (!op)
      fail(ctx, ": unknown op '", opName, "'", didYouMean(opName, OpRegistry::get().names()));
    try {
      nodes.push_back(makeOpNode(*op, name, std::move(attrs), std::move(inputs), std::move(deps),
                                 /*strict=*/false));
    } catch (const Error &e) {
      fail(source, ": ", e.what());
    }
  }
  for (const auto &a : j.at("arg_nodes")) {
    uint32_t id = toU32(a, source + ": arg_nodes");
    if (id >= nodes.size() || !nodes[id]->isVariable())
      fail(source, ": arg_nodes lists ", id, ", which is not a variable");
  }
  std::vector<NodeEntry> heads;
  if (!jheads.is_array())
    fail(source, ": 'heads' must be a list");
  for (const auto &h : jheads) {
    auto e = toEntry(h, source + ": heads");
    if (e.nodeId >= nodes.size() || e.index >= nodes[e.nodeId]->numOutputs())
      fail(source, ": heads refer to a missing node output ", h.dump());
    heads.push_back({nodes[e.nodeId], e.index, e.version});
  }
  GraphAttrs attrs;
  if (j.contains("attrs")) {
    if (!j.at("attrs").is_object())
      fail(source, ": 'attrs' must be an object");
    for (const auto &[k, v] : j.at("attrs").items())
      attrs[k] = decodeAttr(k, v, source);
  }
  Graph g(std::move(heads), std::move(attrs));
  for (const auto &[k, v] : g.attrs) {
    try {
      validateGraphAttr(g, k);
    } catch (const Error &e) {
      fail(source, ": ", e.what());
    }
  }
  return g;
}

} // namespace

Graph loadJSON(const std::string &text, const std::string &source) {
  try {
    return loadJSONChecked(text, source);
  } catch (const json::exception &e) {
    // What loadJSONChecked's checks do not catch (a number too large for its type, found by
    // fuzzing):
    // nlohmann's own message, without its "[json.exception.…]" prefix.
    std::string msg = e.what();
    size_t p = msg.find("] ");
    msg = p == std::string::npos ? msg : msg.substr(p + 2);
    if (msg.size() > 120) // it quotes the offending text, which may be long
      msg = msg.substr(0, 120) + "…";
    fail(source, ": malformed graph JSON: ", msg);
  }
}

} // namespace loupe
