"""Python values written as the graph language reads them, for loupe.nnvm's generated
statements: numbers, strings, tuples, lists, booleans and symbols (by their hidden names)."""

import math
import numbers

from ._loupe import Error


def text(value, what):
    """`value` as graph-language text; `what` names it in the error for a value that has none."""
    name = getattr(value, "_var", None)
    if name is not None:
        return name
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        if not math.isfinite(float(value)):
            raise Error(f"{what}: {value} is not a finite number")
        return repr(float(value))
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return '"' + escaped + '"'
    if isinstance(value, tuple):
        items = [text(v, what) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(text(v, what) for v in value) + "]"
    raise Error(f"{what}: a value of type {type(value).__name__} cannot be given to the graph")
