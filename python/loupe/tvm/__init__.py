"""The part of TVM the seed tutorials touch: targets, devices, arrays, the graph runtime, and
Relay's pass infrastructure (IRModule, transform, instrument).

    from loupe import tvm
    with tvm.target.create("llvm"):
        deploy_graph, lib, params = nnvm.compiler.build(graph, shape={"x": (1, 3)})
    m = tvm.contrib.graph_runtime.create(deploy_graph, lib, tvm.cpu(0))
"""

from . import contrib, instrument, nd, target, transform
from .ir import IRModule
from .nd import cpu

from .._loupe import Error

__all__ = ["Error", "IRModule", "contrib", "cpu", "instrument", "nd", "relay", "target", "transform"]


def __getattr__(name):
    # tvm.relay, as seed 003 writes tvm.relay.ExprMutator (imported late: relay imports tvm).
    if name == "relay":
        from .. import relay

        return relay
    raise AttributeError(f"module 'tvm' has no attribute '{name}'")
