"""tvm.IRModule: a module of one function, @main, held as the workbench's graph; it prints in
Relay's text form (`def @main(%x: Tensor[…]) { … }`, FuseOps' groups as primitive functions)."""

from .. import _loupe
from .._loupe import Error

__all__ = ["IRModule"]


class IRModule:
    """A Relay module: `main` and nothing else (the graph form has one function)."""

    def __init__(self, functions=None):
        self._graph = None
        for name, func in (functions or {}).items():
            self[name] = func

    @staticmethod
    def from_expr(expr):
        """The module whose @main is `expr` (a function; another expression becomes one over
        its free variables)."""
        from ..relay.expr import Function, _free_vars, to_graph

        if not isinstance(expr, Function):
            expr = Function(_free_vars(expr), expr)
        return IRModule._of(to_graph(expr))

    @staticmethod
    def _of(graph):
        mod = IRModule()
        mod._graph = graph
        return mod

    def _main_graph(self):
        if self._graph is None:
            raise Error("IRModule: the module has no @main")
        return self._graph

    def __getitem__(self, name):
        from ..relay.expr import from_graph

        if getattr(name, "name_hint", name) != "main":
            raise Error(f"IRModule: no function {name!r}; the graph form holds only @main")
        return from_graph(self._main_graph())

    def __setitem__(self, name, func):
        from ..relay.expr import to_graph

        if getattr(name, "name_hint", name) != "main":
            raise Error(f"IRModule: cannot add {name!r}; the graph form holds only @main")
        self._graph = to_graph(func)

    def __contains__(self, name):
        return getattr(name, "name_hint", name) == "main" and self._graph is not None

    def astext(self, show_meta_data=False):
        """The module in Relay's text form."""
        return _loupe.relay_text(self._main_graph())

    def __str__(self):
        return self.astext()

    def __repr__(self):
        return self.astext()

    def _repr_svg_(self):
        return _loupe._Graph.svg(self._main_graph())
