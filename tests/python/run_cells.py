"""Runs a Python file's `# In[N]` cells in order as a notebook does: each cell's statements, then
its last expression, if any, shown with pprint (as IPython pretty-prints it). Used by the seed
tests, each file in a fresh process so that NNVM's process-wide name counters start at zero.

    python3 run_cells.py FILE.py"""

import ast
import pprint
import re
import sys


def cells(source):
    """The file's cells: the text after each `# In[N]` line."""
    parts = re.split(r"^# In\[\d+\]\n", source, flags=re.M)
    return parts[1:]


def run(source):
    scope = {"__name__": "__main__"}
    for cell in cells(source):
        tree = ast.parse(cell)
        last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        if last is not None:
            tree.body.pop()
        exec(compile(tree, "<cell>", "exec"), scope)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), scope)
            if value is not None:
                print(pprint.pformat(value, width=79))


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        run(f.read())
