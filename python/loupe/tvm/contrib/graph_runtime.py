"""tvm.contrib.graph_runtime: runs a built deploy graph's kernels on NumPy inputs.

    m = graph_runtime.create(deploy_graph, lib, tvm.cpu(0))
    m.set_input("x", x)
    m.set_input(**params)
    m.run()
    out = m.get_output(0).asnumpy()
"""

from ... import _loupe
from ...nnvm import _workspace
from ..nd import NDArray, values_of

__all__ = ["GraphModule", "create"]


def create(graph, libmod, ctx=None):
    """A runtime for a deploy graph (a Graph from nnvm.compiler.build) and its module."""
    from ...nnvm.compiler.build_module import Module
    from ...nnvm.graph import Graph

    if not isinstance(graph, Graph) or not isinstance(libmod, Module):
        raise _loupe.Error("graph_runtime.create takes the deploy graph and lib that "
                           "nnvm.compiler.build returned")
    return GraphModule(_workspace.call(_loupe._Runtime, graph._g, libmod._m))


class GraphModule:
    """A deploy graph ready to run (NNVM's GraphModule)."""

    def __init__(self, runtime):
        self._rt = runtime

    def set_input(self, key=None, value=None, **params):
        """Sets an input by name, and any given as keywords (a params dict: `**params`)."""
        items = list(params.items())
        if key is not None:
            items.insert(0, (key, value))
        for name, v in items:
            _workspace.call(self._rt.set_input, name, values_of(v))

    def run(self, **inputs):
        """Runs every kernel (after setting `inputs` by name)."""
        if inputs:
            self.set_input(**inputs)
        _workspace.call(self._rt.run)

    def get_output(self, index, out=None):
        """Output `index` of the last run as an NDArray (copied into `out` when given)."""
        value = _workspace.call(self._rt.output, index)
        return out.copyfrom(value) if out is not None else NDArray(value)

    def get_num_outputs(self):
        """How many outputs the graph has."""
        return self._rt.num_outputs()
