// SourceLines: instructions traced back to the listing lines and nodes they were made for.
#include "backend/llvm/SourceLines.h"

#include <llvm/IR/AssemblyAnnotationWriter.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instruction.h>
#include <llvm/Support/FormattedStream.h>
#include <llvm/Support/raw_ostream.h>

#include <cctype>
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

AnnotatedAssembly annotateAssembly(const std::string &assembly, const LoweredListing &l) {
  AnnotatedAssembly out;
  std::vector<std::string> kept;
  std::istringstream in(assembly);
  std::string line;
  bool debugSection = false;
  unsigned current = 0, noted = ~0u;
  while (std::getline(in, line)) {
    std::string t = trimmed(line);
    if (startsWith(t, ".section") || startsWith(t, ".text") || startsWith(t, ".data")) {
      debugSection = t.find(".debug_") != std::string::npos;
      if (debugSection)
        continue;
    }
    if (debugSection || startsWith(t, ".file") || startsWith(t, ".cfi_sections"))
      continue;
    if (startsWith(t, ".loc")) {
      std::istringstream fields(t.substr(4));
      unsigned file = 0, at = 0;
      fields >> file >> at;
      current = at;
      if (at != noted && at != 0)
        kept.push_back("\t# " + listingNote(l, at));
      noted = at;
      continue;
    }
    bool label = !line.empty() && !std::isspace(static_cast<unsigned char>(line[0]));
    if (label && startsWith(line, ".Lfunc_begin")) { // a new function: say its first line again
      noted = ~0u;
      current = 0;
    }
    if (!label && !t.empty() && t[0] != '.' && t[0] != '#')
      out.instructionLines.push_back(current);
    kept.push_back(line);
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
