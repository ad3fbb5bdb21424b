// CodeLines: listings parsed back into rows with their lines and nodes.
#include "view/CodeLines.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace loupe::gui {

namespace {

// "a, b, +2 more" → {a, b}.
std::vector<std::string> nodeList(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string n; std::getline(in, n, ',');) {
    size_t a = n.find_first_not_of(' ');
    if (a == std::string::npos)
      continue;
    n = n.substr(a);
    if (n[0] == '+' && n.find(" more") != std::string::npos)
      continue;
    out.push_back(n);
  }
  return out;
}

} // namespace

std::vector<CodeRow> loopRows(const std::string &listing) {
  std::vector<CodeRow> rows;
  std::istringstream in(listing);
  for (std::string l; std::getline(in, l);) {
    size_t a = l.find_first_not_of(' ');
    if (a == std::string::npos || !std::isdigit(static_cast<unsigned char>(l[a])))
      continue; // `lower function …` and `// runs the machine code of …`
    size_t end = l.find(' ', a);
    CodeRow r;
    r.line = std::stoi(l.substr(a, end - a));
    r.text = end == std::string::npos ? "" : l.substr(std::min(l.size(), end + 2));
    // A marked store ends in `  // nodes`; an attribute line starts with `//` and is not marked.
    if (size_t mark = r.text.rfind("  // ");
        mark != std::string::npos && r.text.find_first_not_of(' ') < mark) {
      r.nodes = nodeList(r.text.substr(mark + 5));
      r.text.resize(mark);
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<CodeRow> assemblyRows(const std::string &assembly) {
  std::vector<CodeRow> rows;
  std::istringstream in(assembly);
  int line = 0;
  std::vector<std::string> nodes;
  for (std::string l; std::getline(in, l);) {
    CodeRow r;
    r.text = l;
    size_t a = l.find_first_not_of(" \t");
    std::string t = a == std::string::npos ? "" : l.substr(a);
    bool label = !l.empty() && !std::isspace(static_cast<unsigned char>(l[0]));
    if (t.rfind("# line ", 0) == 0) {
      line = std::atoi(t.c_str() + 7);
      nodes.clear();
      // `… [a, b]`, or `… [a, b] (set-up and copies of this loop)` for code of the loop itself.
      std::string note = t;
      if (note.back() == ')' && note.rfind("] (") != std::string::npos)
        note.resize(note.rfind("] (") + 1);
      if (size_t open = note.rfind(" ["); open != std::string::npos && note.back() == ']')
        nodes = nodeList(note.substr(open + 2, note.size() - open - 3));
      r.comment = true;
    } else if (t.rfind("# no loop line", 0) == 0) {
      line = 0;
      nodes.clear();
      r.comment = true;
    } else if (label && l.back() == ':' && l[0] != '.') {
      line = 0; // a new function: nothing until its first comment
      nodes.clear();
    }
    if (r.comment || (!label && !t.empty() && t[0] != '.' && t[0] != '#')) {
      r.line = line;
      r.nodes = nodes;
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

bool rowOf(const CodeRow &r, const std::string &node) {
  return !node.empty() && std::find(r.nodes.begin(), r.nodes.end(), node) != r.nodes.end();
}

} // namespace loupe::gui
