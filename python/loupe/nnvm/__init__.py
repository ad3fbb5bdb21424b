"""NNVM's Python API over Loupe's engine, as the seed tutorials use it:

    from loupe import nnvm
    import loupe.nnvm.symbol as sym
    import loupe.nnvm.compiler

`nnvm.symbol` (also `nnvm.sym`) writes graphs, `nnvm.graph` makes Graph values and applies
passes, `nnvm.compiler` builds them (`build`, `build_config`, `graph_util`).
"""

from . import compiler, graph, symbol

sym = symbol

__all__ = ["compiler", "graph", "symbol", "sym"]
