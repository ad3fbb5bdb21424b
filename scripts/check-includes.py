#!/usr/bin/env python3
"""check-includes: fails on an #include that breaks ARCHITECTURE.md's floors.

Each folder may include its own floor and the floors below it, never one above; nothing outside
repl/ includes repl/commands/ (the command handlers are the REPL's own); LLVM's headers only in
backend/llvm/; the plugins (examples/plugins, tests/plugins) only passes/Pass.h and core.
Prints one line per broken include (file:line: what and why) and exits 1 if there is any.
Run by scripts/test.sh (and ctest, label quick). Usage: check-includes.py [ROOT] (the source tree;
the project's by default).
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)

BELOW_REPL = ["core", "passes", "backend", "frontend", "repl"]
# folder -> the folders its files may include (their own included)
FLOORS = {
    "core": ["core"],
    "passes": ["core", "passes"],
    "backend": ["core", "passes", "backend"],
    "frontend": ["core", "passes", "frontend"],
    "repl": BELOW_REPL,
    "view": BELOW_REPL + ["view"],
    "report": BELOW_REPL + ["view", "report"],
    "gui/app": BELOW_REPL + ["view", "report", "gui/app"],
    "python": BELOW_REPL + ["view", "report", "python"],
    "cli": BELOW_REPL + ["view", "report", "cli"],
}
# Known exceptions (file, include), each with the reason it stands; none today.
EXCEPTIONS = set()
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def floor_of(rel):
    """The floor a path (of a file, or an include) is in: the longest FLOORS key it starts with."""
    best = None
    for f in FLOORS:
        if rel == f or rel.startswith(f + "/"):
            if best is None or len(f) > len(best):
                best = f
    return best


def check(path, rel, problems):
    floor = floor_of(rel)
    plugin = rel.startswith("examples/plugins/") or rel.startswith("tests/plugins/")
    for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        quote, inc = m.groups()
        where = f"{rel}:{n}"
        if inc.startswith("llvm/") or inc.startswith("llvm-c/"):
            if not rel.startswith("backend/llvm/") and not rel.startswith("tests/"):
                problems.append(f"{where}: includes LLVM's {inc}, which only backend/llvm/ may")
            continue
        if quote == "<" or "/" not in inc:
            continue  # a library's header, or one beside the file
        target = floor_of(inc)
        if target is None:
            continue  # not a floor of the house (a test utility, a generated header)
        if (rel, inc) in EXCEPTIONS:
            continue
        if inc.startswith("repl/commands/") and not rel.startswith("repl/"):
            problems.append(f"{where}: includes {inc}; only repl/ may use the command handlers")
            continue
        if plugin:
            if not (inc == "passes/Pass.h" or target == "core"):
                problems.append(f"{where}: a plugin includes {inc}; plugins may include only "
                                "passes/Pass.h and core")
            continue
        if floor is None:
            continue  # tests/ and scripts may include everything
        if target not in FLOORS[floor]:
            problems.append(f"{where}: {floor} includes {inc} ({target}), a floor above it")


def main():
    problems = []
    for path in sorted(ROOT.rglob("*")):
        if path.suffix not in (".cpp", ".h", ".cc", ".hpp"):
            continue
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("build") or "/." in "/" + rel or rel.startswith("tests/data/"):
            continue  # build trees, hidden folders, and test fixtures (this script's own)
        check(path, rel, problems)
    for p in problems:
        print(p)
    if problems:
        print(f"check-includes: {len(problems)} include(s) break the floors (ARCHITECTURE.md)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
