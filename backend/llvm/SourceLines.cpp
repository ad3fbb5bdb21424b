// SourceLines: instructions traced back to the listing lines and nodes they were made for.
#include "backend/llvm/SourceLines.h"

#include <llvm/IR/AssemblyAnnotationWriter.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instruction.h>
#include <llvm/Support/FormattedStream.h>
#include <llvm/Support/raw_ostream.h>

#include <cctype>
#include <map>
#include <set>
#include <sstream>

namespace loupe::backend {

namespace {

constexpr size_t kNoteText = 64; // characters of a listing line a comment repeats

// Writes `; line N: …` before the first instruction of each run from one listing line; a new
// block repeats it, so each block says where it starts.
class LineComments : public llvm::AssemblyAnnotationWriter {
public:
  explicit LineComments(const LoweredListing &l) : l_(l) {}
  void emitBasicBlockStartAnnot(const llvm::BasicBlock *, llvm::formatted_raw_ostream &) override {
    last_ = ~0u;
  }
  void emitInstructionAnnot(const llvm::Instruction *i, llvm::formatted_raw_ostream &os) override {
    const llvm::DebugLoc &loc = i->getDebugLoc();
    if (!loc || loc.getLine() == last_)
      return;
    last_ = loc.getLine();
    if (last_ != 0)
      os << "  ; " << listingNote(l_, last_) << "\n";
  }

private:
  const LoweredListing &l_;
  unsigned last_ = ~0u;
};

// `text` without the debug attachments the printer writes (`, !dbg !12`, ` !dbg !5`).
std::string withoutDebugRefs(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t start = i;
    if (text[i] == ',' && text.compare(i, 7, ", !dbg ") == 0)
      i += 7;
    else if (text[i] == ' ' && text.compare(i, 6, " !dbg ") == 0)
      i += 6;
    if (i != start && i < text.size() && text[i] == '!') {
      size_t j = i + 1;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])))
        ++j;
      if (j > i + 1) {
        i = j;
        continue;
      }
    }
    i = start;
    out += text[i++];
  }
  return out;
}

std::string trimmed(const std::string &s) {
  size_t a = s.find_first_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a);
}

bool startsWith(const std::string &s, const char *prefix) { return s.rfind(prefix, 0) == 0; }

} // namespace

std::string listingNote(const LoweredListing &l, unsigned line) {
  if (line == 0 || line > l.lines.size())
    return "line " + std::to_string(line);
  std::string text = trimmed(l.lines[line - 1]);
  if (text.size() > kNoteText)
    text = text.substr(0, kNoteText - 3) + "...";
  std::string note = "line " + std::to_string(line) + ": " + text;
  const std::vector<std::string> &nodes = l.nodes[line - 1];
  if (!nodes.empty()) {
    note += " [";
    for (size_t i = 0; i < nodes.size() && i < 3; ++i)
      note += (i ? ", " : "") + nodes[i];
    if (nodes.size() > 3)
      note += ", +" + std::to_string(nodes.size() - 3) + " more";
    note += "]";
  }
  return note;
}

std::string annotatedIR(const llvm::Module &m, const LoweredListing &l) {
  std::string text;
  llvm::raw_string_ostream os(text);
  LineComments comments(l);
  for (const llvm::Function &f : m)
    if (!f.isDeclaration() && !f.getName().ends_with("_packed"))
      f.print(os, &comments);
  return withoutDebugRefs(os.str());
}

namespace {

// One line of assembly as annotateAssembly reads it.
struct AsmItem {
  std::string text;
  bool instruction = false;
  unsigned line = 0;          ///< instructions: the listing line of the last `.loc` (0: none)
  bool inLoop = false;        ///< the line is the loop it runs in, not a statement of its own
  bool inMachineLoop = false; ///< between a backward jump's target and the jump
  int function = -1;          ///< which function's body it is in
};

// The deepest statement containing both lines (0: the top).
unsigned commonStatement(const LoweredListing &l, unsigned a, unsigned b) {
  std::set<unsigned> up;
  for (unsigned x = a; x != 0; x = static_cast<unsigned>(l.parent[x - 1]))
    up.insert(x);
  for (unsigned x = b; x != 0; x = static_cast<unsigned>(l.parent[x - 1]))
    if (up.count(x))
      return x;
  return 0;
}

// Code generation gives code made for no single statement (constants and counters set up before
// a loop, copies between registers) line 0. Such an instruction inside a loop of the machine
// code (a backward jump's target to the jump) runs in the statement containing every line that
// loop's other instructions come from: it gets that line, marked as the loop's.
void lineByMachineLoops(std::vector<AsmItem> &items, const LoweredListing &l) {
  std::map<std::pair<int, std::string>, size_t> labelAt;
  for (size_t i = 0; i < items.size(); ++i)
    if (!items[i].instruction && !items[i].text.empty() && items[i].text.back() == ':' &&
        !std::isspace(static_cast<unsigned char>(items[i].text[0])))
      labelAt[{items[i].function, items[i].text.substr(0, items[i].text.size() - 1)}] = i;
  std::vector<std::pair<size_t, size_t>> loops; // [first, last] item of each machine loop
  for (size_t i = 0; i < items.size(); ++i) {
    const AsmItem &it = items[i];
    std::string t = trimmed(it.text);
    if (!it.instruction || t[0] != 'j')
      continue;
    size_t sp = t.find_first_of(" \t");
    if (sp == std::string::npos)
      continue;
    auto target = labelAt.find({it.function, trimmed(t.substr(sp))});
    if (target != labelAt.end() && target->second < i)
      loops.push_back({target->second, i});
  }
  for (const auto &r : loops)
    for (size_t k = r.first; k <= r.second; ++k)
      items[k].inMachineLoop = true;
  for (size_t i = 0; i < items.size(); ++i) {
    AsmItem &it = items[i];
    if (!it.instruction || it.line != 0)
      continue;
    const std::pair<size_t, size_t> *inner = nullptr;
    for (const auto &r : loops)
      if (r.first < i && i <= r.second &&
          (!inner || r.second - r.first < inner->second - inner->first))
        inner = &r;
    if (!inner)
      continue;
    unsigned common = 0;
    bool first = true;
    for (size_t k = inner->first; k <= inner->second; ++k)
      if (items[k].instruction && items[k].line != 0 && !items[k].inLoop) {
        common = first ? items[k].line : commonStatement(l, common, items[k].line);
        first = false;
      }
    if (common != 0) {
      it.line = common;
      it.inLoop = true;
    }
  }
}

} // namespace

AnnotatedAssembly annotateAssembly(const std::string &assembly, const LoweredListing &l) {
  std::vector<AsmItem> items;
  std::istringstream in(assembly);
  std::string text;
  bool debugSection = false;
  unsigned current = 0;
  int function = -1;
  while (std::getline(in, text)) {
    std::string t = trimmed(text);
    if (startsWith(t, ".section") || startsWith(t, ".text") || startsWith(t, ".data")) {
      debugSection = t.find(".debug_") != std::string::npos;
      if (debugSection)
        continue;
    }
    if (debugSection || startsWith(t, ".file") || startsWith(t, ".cfi_sections"))
      continue;
    if (startsWith(t, ".loc")) {
      std::istringstream fields(t.substr(4));
      unsigned file = 0;
      fields >> file >> current;
      continue;
    }
    bool label = !text.empty() && !std::isspace(static_cast<unsigned char>(text[0]));
    if (label && text.back() == ':' && text[0] != '.') { // a function begins
      ++function;
      current = 0;
    }
    AsmItem item;
    item.text = text;
    item.function = function;
    item.instruction = !label && !t.empty() && t[0] != '.' && t[0] != '#';
    item.line = item.instruction ? current : 0;
    items.push_back(std::move(item));
  }
  lineByMachineLoops(items, l);

  AnnotatedAssembly out;
  std::vector<std::string> kept;
  unsigned noted = 0;
  int notedFunction = -2;
  for (const AsmItem &it : items) {
    if (it.instruction) {
      if (it.function != notedFunction || it.line != noted) {
        if (it.line != 0)
          kept.push_back("\t# " + listingNote(l, it.line) +
                         (it.inLoop ? " (set-up and copies of this loop)" : ""));
        else if (it.function == notedFunction)
          kept.push_back("\t# no loop line (made by LLVM for no single statement)");
        noted = it.line;
        notedFunction = it.function;
      }
      out.instructionLines.push_back(it.line);
      bool traced = it.line > 0 && it.line <= l.nodes.size() && !l.nodes[it.line - 1].empty();
      out.traced += traced;
      out.loopInstructions += it.inMachineLoop;
      out.loopTraced += it.inMachineLoop && traced;
      out.byLoop += it.inLoop;
    }
    kept.push_back(it.text);
  }
  // Labels only the debug sections referred to (.Ltmp3:, .Lfunc_begin0:) go with them.
  std::string body;
  for (const std::string &k : kept)
    if (k.empty() || std::isspace(static_cast<unsigned char>(k[0])) || k[0] == '#')
      body += k + "\n";
  for (const std::string &k : kept) {
    bool debugLabel = (startsWith(k, ".Ltmp") || startsWith(k, ".Lfunc_begin")) && k.back() == ':';
    if (debugLabel && body.find(k.substr(0, k.size() - 1)) == std::string::npos)
      continue;
    out.text += k + "\n";
  }
  return out;
}

} // namespace loupe::backend
