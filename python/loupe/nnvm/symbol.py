"""nnvm.symbol: variables, every NNVM op as a function, Python's operators, Group.

    import loupe.nnvm.symbol as sym
    x = sym.Variable("x")
    z = sym.conv2d(data=x, channels=3, kernel_size=(5, 5))
    z = z + sym.relu(z)

Nodes are named as NNVM named them (conv2d0, conv2d0_weight, __add_symbol__0, …), by counters
shared by the whole process; attributes are kept in the order they were written in, which
`graph.ir()` prints as NNVM's hash map iterated them (as the seeds show).
"""

from .. import _loupe
from .._text import text
from . import _workspace

__all__ = ["Symbol", "Variable", "Group"]


class Symbol:
    """A symbol: one or more outputs of the graph being written."""

    __slots__ = ("_var",)

    def __init__(self, var):
        self._var = var  # its hidden name in the workbench

    def __repr__(self):
        return _workspace.run(self._var).strip()

    def _binary(self, op, other, reflected=False):
        a, b = text(self, op), text(other, op)
        return Symbol(_workspace.assign(f"{b} {op} {a}" if reflected else f"{a} {op} {b}"))

    def __add__(self, other):
        return self._binary("+", other)

    def __radd__(self, other):
        return self._binary("+", other, True)

    def __sub__(self, other):
        return self._binary("-", other)

    def __rsub__(self, other):
        return self._binary("-", other, True)

    def __mul__(self, other):
        return self._binary("*", other)

    def __rmul__(self, other):
        return self._binary("*", other, True)

    def __truediv__(self, other):
        return self._binary("/", other)

    def __rtruediv__(self, other):
        return self._binary("/", other, True)

    def __pow__(self, other):
        return self._binary("**", other)

    def __neg__(self):
        return self._binary("*", -1.0)

    def __getitem__(self, index):
        if not isinstance(index, int):
            raise _loupe.Error(f"a symbol's outputs are indexed by integers, got {index!r}")
        return Symbol(_workspace.assign(f"{self._var}[{index}]"))


def _call(name, args, kwargs):
    words = [text(a, name) for a in args]
    words += [f"{k}={text(v, name)}" for k, v in kwargs.items()]
    return f"{name}({', '.join(words)})"


def Variable(name, **kwargs):
    """A graph input; keyword attributes (shape, dtype, …) are stored on it as NNVM did."""
    return Symbol(_workspace.assign(_call("Variable", [name], kwargs)))


def Group(symbols):
    """One symbol with the outputs of all of `symbols`."""
    return Symbol(_workspace.assign(_call("Group", [list(symbols)], {})))


def _op(name):
    def make(*args, **kwargs):
        return Symbol(_workspace.assign(_call(name, args, kwargs)))

    make.__name__ = name
    make.__qualname__ = name
    make.__doc__ = f"The NNVM op {name} (`:ops {name}` in the REPL describes it)."
    return make


_OPS = frozenset(_loupe.op_names())


def __getattr__(name):
    # Every registered op is a function of this module, as in NNVM.
    if name in _OPS:
        fn = _op(name)
        globals()[name] = fn
        return fn
    raise AttributeError(f"module 'nnvm.symbol' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | _OPS)
