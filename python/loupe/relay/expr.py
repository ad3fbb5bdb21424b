"""Relay's expressions as seed 003 writes them — variables, constants, calls of ops, functions —
and their conversion to and from the workbench's graph, which the passes transform and the
printer prints in Relay's text form.

A Relay program here is a graph: every call is an NNVM op (add is broadcast_add, multiply by a
scalar is __mul_scalar__, nn.conv2d is conv2d; a scalar computed from scalars alone is a rank-0
tensor). What a graph cannot hold — tuples, a function that does not read one of its
parameters — raises loupe.Error naming it.
"""

import numbers

import numpy as np

from .. import _loupe
from .._loupe import Error

__all__ = ["Call", "Constant", "Expr", "Function", "Op", "TensorType", "Var", "const", "var"]


class TensorType:
    """A tensor's type: its shape and dtype (relay.TensorType((1, 64, 56, 56), "float32"))."""

    def __init__(self, shape, dtype="float32"):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = str(dtype)
        if _loupe.dtype_code(self.dtype) is None:
            raise Error(f"relay.TensorType: unknown dtype '{self.dtype}'")

    def __repr__(self):
        if not self.shape:
            return self.dtype
        return f"Tensor[({', '.join(str(d) for d in self.shape)}), {self.dtype}]"


class Expr:
    """A Relay expression. Expressions are compared by identity, as Relay's are."""

    def __str__(self):
        from ..tvm.ir import IRModule

        body = self if isinstance(self, Function) else Function(_free_vars(self), self)
        return str(IRModule.from_expr(body))


class Var(Expr):
    """A variable: a function's parameter (relay.var)."""

    def __init__(self, name_hint, type_annotation=None):
        self.name_hint = str(name_hint)
        self.type_annotation = type_annotation


class Constant(Expr):
    """A constant tensor; `data` is its NumPy array (rank 0 for a scalar such as const(2.0))."""

    def __init__(self, data):
        self.data = data


class Op:
    """A Relay op, by its Relay name (add, nn.conv2d)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


class Attrs(dict):
    """A call's attributes. A call read from a graph also keeps its NNVM op and attributes as
    the graph wrote them, so that a pass that rebuilds the call gets the same node back."""

    def __init__(self, values=None, nnvm=None):
        super().__init__(values or {})
        self.nnvm = nnvm  # (NNVM op, [(key, value)]) or None


class Call(Expr):
    """A call of an op with arguments and attributes (relay.Call)."""

    def __init__(self, op, args, attrs=None, type_args=None, span=None):
        self.op = op
        self.args = list(args)
        self.attrs = attrs if isinstance(attrs, Attrs) else Attrs(attrs)


class Function(Expr):
    """A function: parameters and a body (relay.Function)."""

    def __init__(self, params, body, ret_type=None, type_params=None, attrs=None):
        self.params = list(params)
        self.body = body
        self.ret_type = ret_type
        self.attrs = attrs


def var(name_hint, type_annotation=None, shape=None, dtype="float32"):
    """A variable of a type (a TensorType, or `shape` and `dtype`)."""
    if type_annotation is None and shape is not None:
        type_annotation = TensorType(shape, dtype)
    elif isinstance(type_annotation, str):
        type_annotation = TensorType((), type_annotation)
    return Var(name_hint, type_annotation)


def const(value, dtype=None):
    """A constant: a number (a rank-0 tensor; float32 for a float unless `dtype` says) or an
    array."""
    if isinstance(value, bool) or (
        isinstance(value, numbers.Number) and not isinstance(value, numbers.Real)
    ):
        raise Error(f"relay.const: {value!r} is not a real number")
    if isinstance(value, numbers.Real) and not isinstance(value, np.ndarray):
        if dtype is None:
            dtype = "int32" if isinstance(value, numbers.Integral) else "float32"
    data = np.array(value, dtype=dtype) if dtype is not None else np.asarray(value)
    if _loupe.dtype_code(str(data.dtype)) is None:
        raise Error(f"relay.const: NumPy dtype {data.dtype} has no Relay dtype")
    return Constant(data)


def _children(expr):
    if isinstance(expr, Call):
        return expr.args
    if isinstance(expr, Function):
        return [expr.body]
    return []


def _post_order(root):
    """Every expression under `root`, arguments before their users (no recursion: exported
    graphs can be deep)."""
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        expr, expanded = stack.pop()
        if expanded:
            order.append(expr)
            continue
        if id(expr) in seen:
            continue
        seen.add(id(expr))
        stack.append((expr, True))
        for child in reversed(_children(expr)):
            if id(child) not in seen:
                stack.append((child, False))
    return order


def _free_vars(expr):
    return [e for e in _post_order(expr) if isinstance(e, Var)]


# --- expressions to graphs -------------------------------------------------------------------

_NAMES, _SCALARS = _loupe.relay_tables()
# Relay's name of each NNVM op, reversed: the NNVM op a Relay call becomes (broadcast_add for
# add, not elemwise_add: Relay's ops broadcast).
_NNVM_OF = {}
for _nnvm, _relay in sorted(_NAMES.items()):
    if _relay not in _NNVM_OF or _nnvm.startswith("broadcast_"):
        _NNVM_OF[_relay] = _nnvm
# (Relay op, scalar first) -> NNVM scalar op; a commutative op takes its scalar either side.
# NNVM's scalar ops; add and multiply have no reflected ones, so multiply(3f, x) is a
# broadcast_mul of a rank-0 constant, printed as Relay prints it.
_SCALAR_OF = {(relay, first): nnvm for nnvm, (relay, first) in _SCALARS.items()}


def _is_scalar(expr):
    return isinstance(expr, Constant) and np.ndim(expr.data) == 0


def _shape_of(expr, what):
    if isinstance(expr, Var) and expr.type_annotation is not None:
        return expr.type_annotation.shape
    if isinstance(expr, Constant):
        return tuple(np.shape(expr.data))
    raise Error(f"{what}: the weight's shape must be known (a typed relay.var or a constant)")


def _conv2d_attrs(call):
    """nn.conv2d's Relay attributes as NNVM's conv2d has them."""
    a = dict(call.attrs)
    pad = tuple(a.get("padding", (0, 0)))
    if len(pad) == 4:
        if pad[:2] != pad[2:]:
            raise Error(f"relay.nn.conv2d: padding {list(pad)} is asymmetric, which NNVM's conv2d "
                        "cannot express")
        pad = pad[:2]
    elif len(pad) == 1:
        pad = (pad[0], pad[0])
    for key, default in (("kernel_layout", "OIHW"), ("out_layout", ""), ("out_dtype", "")):
        if a.get(key, default) not in (default, None):
            raise Error(f"relay.nn.conv2d: {key}={a[key]!r} has no graph form")
    wshape = _shape_of(call.args[1], "relay.nn.conv2d")
    channels = a.get("channels") or wshape[0]
    kernel = a.get("kernel_size") or wshape[2:]
    attrs = [
        ("channels", str(int(channels))),
        ("kernel_size", str(tuple(int(k) for k in kernel))),
        ("strides", str(tuple(int(s) for s in a.get("strides", (1, 1))))),
        ("padding", str(tuple(int(p) for p in pad))),
        ("dilation", str(tuple(int(d) for d in a.get("dilation", (1, 1))))),
        ("groups", str(int(a.get("groups", 1)))),
        ("layout", str(a.get("data_layout", "NCHW"))),
        ("use_bias", "False"),
    ]
    return "conv2d", attrs


def _graph_call(call):
    """A Relay call as (NNVM op, the arguments it reads, [(key, value)])."""
    if not isinstance(call.op, Op):
        raise Error("relay: calls of functions are not in the graph form (only FuseOps makes them)")
    name = call.op.name
    if call.attrs.nnvm is not None:
        return call.attrs.nnvm[0], call.args, list(call.attrs.nnvm[1])
    if name in ("add", "subtract", "multiply", "divide"):
        a, b = call.args
        if _is_scalar(a) != _is_scalar(b) and (name, _is_scalar(a)) in _SCALAR_OF:
            first = _is_scalar(a)
            scalar, tensor = (a, b) if first else (b, a)
            return _SCALAR_OF[(name, first)], [tensor], [("scalar", repr(float(scalar.data)))]
        return _NNVM_OF[name], call.args, []
    if name == "nn.conv2d":
        op, attrs = _conv2d_attrs(call)
        return op, call.args, attrs
    if name == "nn.dense":
        units = call.attrs.get("units") or _shape_of(call.args[1], "relay.nn.dense")[0]
        return "dense", call.args, [("units", str(int(units))), ("use_bias", "False")]
    op = _NNVM_OF.get(name, name)
    if op not in _loupe.op_names():
        raise Error(f"relay: the op {name} has no NNVM counterpart in Loupe")
    return op, call.args, [(k, _attr_text(v)) for k, v in call.attrs.items() if v is not None]


def _attr_text(value):
    if isinstance(value, (list, tuple)):
        return str(tuple(value))
    return str(value)


def to_graph(func):
    """A Relay function as the workbench's graph (its parameters must all be read)."""
    if not isinstance(func, Function):
        raise Error(f"relay: expected a relay.Function, got {type(func).__name__}")
    nodes, index, counts = [], {}, {}
    for expr in _post_order(func.body):
        if isinstance(expr, Var):
            if not any(expr is p for p in func.params):
                raise Error(f"relay.Function: %{expr.name_hint} is free (not a parameter)")
            t = expr.type_annotation
            nodes.append(("var", expr.name_hint, None if t is None else list(t.shape),
                          "float32" if t is None else t.dtype))
        elif isinstance(expr, Constant):
            # A scalar beside a tensor is the attribute of a scalar op (multiply(x, 2f) is
            # __mul_scalar__); elsewhere, a rank-0 constant node.
            # (np.ascontiguousarray would make a 0-d array 1-d)
            nodes.append(("const", f"const{len(nodes)}", np.asarray(expr.data, order="C")))
        elif isinstance(expr, Call):
            op, args, attrs = _graph_call(expr)
            inputs = []
            for a in args:
                inputs.append((index[id(a)], 0))
            n = counts.get(op, 0)
            counts[op] = n + 1
            nodes.append(("call", f"{op}{n}", op, inputs, attrs))
        elif isinstance(expr, Function):
            raise Error("relay: nested functions are not in the graph form")
        else:
            raise Error(f"relay: {type(expr).__name__} has no graph form")
        index[id(expr)] = len(nodes) - 1
    for p in func.params:
        if id(p) not in index:
            raise Error(f"relay.Function: parameter %{p.name_hint} is not read; Loupe's graphs "
                        "hold only the inputs their outputs read")
    return _loupe.relay_graph(nodes, [(index[id(func.body)], 0)])


# --- graphs to expressions -------------------------------------------------------------------


def from_graph(graph):
    """The workbench's graph as a Relay function (its inputs are the parameters)."""
    made = []
    for node in _loupe.relay_nodes(graph):
        kind = node[0]
        if kind == "var":
            _, name, shape, dtype = node
            made.append(Var(name, None if shape is None else TensorType(shape, dtype)))
        elif kind == "const":
            made.append(Constant(node[2]))
        else:
            _, name, nnvm_op, relay_op, inputs, attrs, scalar, first = node
            for n, i in inputs:
                if i != 0:
                    raise Error(f"relay: {name} reads output {i} of a node; tuples are not in "
                                "loupe.relay yet")
            args = [made[n] for n, _ in inputs]
            if scalar is not None:
                s = Constant(np.array(scalar, dtype="float32"))
                made.append(Call(Op(relay_op), [s] + args if first else args + [s]))
            else:
                made.append(Call(Op(relay_op), args, Attrs(dict(attrs), (nnvm_op, attrs))))
    heads = _loupe.graph_heads(graph)
    if len(heads) != 1 or heads[0][1] != 0:
        raise Error("relay: a graph of several outputs is a tuple, which loupe.relay has not yet")
    params = [e for e in made if isinstance(e, Var)]
    return Function(params, made[heads[0][0]])
