"""The part of TVM the seed tutorials touch: targets, devices, arrays and the graph runtime.

    from loupe import tvm
    with tvm.target.create("llvm"):
        deploy_graph, lib, params = nnvm.compiler.build(graph, shape={"x": (1, 3)})
    m = tvm.contrib.graph_runtime.create(deploy_graph, lib, tvm.cpu(0))
"""

from . import contrib, nd, target
from .nd import cpu

__all__ = ["contrib", "cpu", "nd", "target"]
