"""nnvm.compiler.graph_util: gradients and shape and type inference as NNVM's helpers did them."""

from ... import _loupe
from ..._text import text
from .. import _workspace
from ..graph import Graph, create
from ..symbol import Symbol

__all__ = ["gradients", "get_gradient_graph", "infer_shape", "infer_dtype"]


def _no_grad_ys(grad_ys):
    if grad_ys is not None:
        raise _loupe.Error("gradients: grad_ys is not supported; the head gradients are "
                           "ones_like(y), as NNVM's default")


def get_gradient_graph(ys, xs, grad_ys=None):
    """The graph of the gradients of `ys` (a symbol or list) with respect to `xs`, the heads'
    gradients ones_like(y) (named ones_like0, … as NNVM's were)."""
    _no_grad_ys(grad_ys)
    xs = xs if isinstance(xs, list) else [xs]
    handle = _workspace.call(_workspace.session().gradient_graph, text(ys, "gradients"),
                             text(xs, "gradients"))
    return Graph(handle)


def gradients(ys, xs, grad_ys=None):
    """The gradients of `ys` with respect to each of `xs`, a list of symbols."""
    _no_grad_ys(grad_ys)
    xs = xs if isinstance(xs, list) else [xs]
    ys = ys if isinstance(ys, list) else [ys]
    grads = _workspace.assign(f"gradients({text(ys, 'gradients')}, {text(xs, 'gradients')})")
    return [Symbol(_workspace.assign(f"{grads}[{i}]")) for i in range(len(xs))]


def _infer(graph, what, given, inputs_key, type_name, value_of, pass_name, result_key):
    """NNVM's infer_shape and infer_dtype: the inputs' values (`value_of(name)`, for every
    input) set as `inputs_key`, the pass applied, and `result_key`'s values of the inputs and
    the outputs."""
    graph = graph if isinstance(graph, Graph) else create(graph)
    names = graph.index.input_names
    for name in given:
        if name not in names:
            raise _loupe.Error(f"{what}: the graph has no input '{name}'")
    graph._set_json_attr(inputs_key, [value_of(n) for n in names], type_name)
    graph = graph.apply(pass_name)
    values, index = graph.json_attr(result_key), graph.index
    return ([values[index.entry_id(x)] for x in index.input_names],
            [values[index.entry_id(x)] for x in index.output_entries])


def infer_shape(graph, **shape):
    """(input shapes, output shapes) of a Graph or symbol given some inputs' shapes by name."""
    return _infer(graph, "infer_shape", shape, "shape_inputs", "list_shape",
                  lambda n: list(shape.get(n, ())), "InferShape", "shape")


def _dtype_code(value, name):
    if isinstance(value, int):
        return value
    code = _loupe.dtype_code(str(value))
    if code is None:
        raise _loupe.Error(f"infer_dtype: input '{name}' has dtype {value!r}, which is no dtype")
    return code


def infer_dtype(graph, **dtype):
    """(input dtypes, output dtypes) as type codes, given some inputs' dtypes by name (codes or
    names such as "float32")."""
    return _infer(graph, "infer_dtype", dtype, "dtype_inputs", "list_int",
                  lambda n: _dtype_code(dtype[n], n) if n in dtype else -1, "InferType", "dtype")
