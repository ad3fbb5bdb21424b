"""nnvm.compiler.build and build_config: the build of nnvm-spec §9, each of its Graph.apply calls
made through nnvm.graph.Graph.apply (so a replaced apply sees them, as in seed 000), each
function's loops logged at DEBUG level as NNVM's lowering logged them."""

import logging

import numpy as np

from ... import _loupe
from .. import _workspace
from ..graph import Graph, create

__all__ = ["BuildConfig", "build", "build_config"]


class BuildConfig:
    """Options of a build (NNVM's BuildConfig): `opt_level` (0-3, default 2). Used as a context:
    `with build_config(opt_level=3): nnvm.compiler.build(…)`."""

    _stack = []

    def __init__(self, opt_level=2, add_pass=None):
        if not isinstance(opt_level, int) or not 0 <= opt_level <= 3:
            raise _loupe.Error(f"build_config: opt_level must be 0, 1, 2 or 3, got {opt_level!r}")
        if add_pass:
            raise _loupe.Error("build_config: add_pass is not supported; the build's passes are "
                               "nnvm-spec §9's for the opt level")
        self.opt_level = opt_level

    def __enter__(self):
        BuildConfig._stack.append(self)
        return self

    def __exit__(self, *exc):
        BuildConfig._stack.pop()

    @classmethod
    def current(cls):
        """The innermost config in force (the default one outside any `with`)."""
        return cls._stack[-1] if cls._stack else _DEFAULT


_DEFAULT = BuildConfig()


def build_config(**kwargs):
    """A BuildConfig to use in a `with` statement (options: opt_level, add_pass)."""
    for key in kwargs:
        if key not in ("opt_level", "add_pass"):
            raise _loupe.Error(f"build_config: unknown option '{key}'; the options are opt_level "
                               "and add_pass")
    return BuildConfig(**kwargs)


def _dtype_name(value, what):
    if isinstance(value, str):
        return value
    try:
        return str(np.dtype(value))
    except TypeError:
        raise _loupe.Error(f"build: {what} has dtype {value!r}, which is no dtype") from None


def _apply(handle, passes):
    # Looked up at each call: a Graph.apply the user replaced is the one called.
    res = Graph.apply(Graph(handle), passes[0] if len(passes) == 1 else list(passes))
    return res._g if isinstance(res, Graph) else res


def _lowered(name, loops):
    logging.debug("lower function %s", name)
    logging.debug("%s", loops.rstrip("\n"))


def build(graph, target=None, shape=None, dtype="float32", params=None, target_host=None,
          layout=None):
    """Builds `graph` (a Graph or a symbol) for `target` ("llvm", or the current
    tvm.target). `shape`: input shapes by name; `dtype`: every input's dtype, or a dict by name;
    `params`: bound values by name (NumPy arrays or tvm.nd arrays). Returns (deploy_graph, lib,
    params) as NNVM did: the deploy graph of tvm_op nodes, its compiled module, and the params it
    reads (after PrecomputePrune) as tvm.nd arrays."""
    from ... import tvm

    if target is None:
        target = tvm.target.current_target()
        if target is None:
            raise _loupe.Error("build: no target given and none in force (tvm.target.create)")
    if target_host is not None and str(target_host) != "llvm":
        raise _loupe.Error(f"build: target_host must be llvm (the host CPU), got '{target_host}'")
    if layout:
        raise _loupe.Error("build: layout= is not supported; the inputs take the layouts "
                           "CorrectLayout gives them")
    if not isinstance(graph, Graph):
        graph = create(graph)
    shapes = {}
    for name, s in (shape or {}).items():
        shapes[name] = [int(d) for d in s]
    dtypes, default = {}, "float32"
    if isinstance(dtype, dict):
        dtypes = {name: _dtype_name(v, f"input '{name}'") for name, v in dtype.items()}
    else:
        default = _dtype_name(dtype, "every input")
    arrays = {}
    for name, value in (params or {}).items():
        arrays[name] = tvm.nd.values_of(value)
    deploy, lib, out = _workspace.call(
        _workspace.session().build, graph._g, str(target), BuildConfig.current().opt_level,
        shapes, dtypes, default, arrays, _apply, _lowered)
    return Graph(deploy), Module(lib), {k: tvm.nd.array(v) for k, v in out.items()}


class Module:
    """A built library (NNVM's `lib`): the compiled kernels the deploy graph's tvm_op nodes call.
    `tvm.contrib.graph_runtime.create(deploy_graph, lib, ctx)` runs them."""

    def __init__(self, handle):
        self._m = handle

    def __repr__(self):
        return "Module(llvm)"
