"""relay.transform: Relay's passes over the workbench's (FoldConstant, EliminateCommonSubexpr,
FuseOps, InferType, and every other registered pass by its name), and function_pass to write
one in Python over a Relay function.

    mod = relay.transform.FoldConstant()(mod)
    seq = tvm.transform.Sequential([relay.transform.FoldConstant(),
                                    relay.transform.FuseOps(fuse_opt_level=2)])
"""

from .. import _loupe
from .._loupe import Error
from ..tvm.ir import IRModule
from ..tvm.transform import Pass, PassContext, _decorate
from .expr import Function, from_graph, to_graph

__all__ = ["EliminateCommonSubexpr", "FoldConstant", "FunctionPass", "FuseOps", "InferType",
           "function_pass"]


class FunctionPass(Pass):
    """A pass over each function of a module (here: @main); it re-types the module before
    returning."""

    _RETYPES = True


def _registered(name, **options):
    return Pass(_loupe.relay_pass(name, {k: str(v) for k, v in options.items()}))


def FoldConstant():
    """Evaluates every call whose arguments are all constants (opt_level 2)."""
    return _registered("FoldConstant")


def EliminateCommonSubexpr(fskip=None):
    """Merges calls of the same op, attributes and arguments (opt_level 3, requires InferType)."""
    if fskip is not None:
        raise Error("EliminateCommonSubexpr: fskip is not supported by the workbench's pass")
    return _registered("EliminateCommonSubexpr")


def FuseOps(fuse_opt_level=-1):
    """Relay's fusion into primitive functions; fuse_opt_level -1 means the context's
    opt_level, 0 no fusion (opt_level 0, requires InferType)."""
    level = int(fuse_opt_level)
    return _registered("FuseOps") if level == -1 else _registered("FuseOps", fuse_opt_level=level)


def InferType():
    """Relay's type inference: every expression's shape and dtype."""
    return _registered("InferType")


def _function_body(transform):
    def body(graph):
        mod = IRModule._of(graph)
        func = transform(from_graph(graph), mod, PassContext.current())
        if not isinstance(func, Function):
            raise Error(f"a function pass returned {type(func).__name__}, not a relay.Function")
        return to_graph(func)

    return body


def function_pass(pass_func=None, opt_level=None, name=None, required=None):
    """A pass written in Python over each function: decorates `fn(func, mod, ctx) -> func` or a
    class with `transform_function(func, mod, ctx)`; instances of a decorated class are passes
    named after it."""
    create = _decorate(FunctionPass, "function_pass", "transform_function", _function_body,
                       opt_level, name, required)
    return create(pass_func) if pass_func is not None else create


_PASSES = frozenset(_loupe.pass_names())


def __getattr__(name):
    # Every other registered pass, by its name, with its options as keywords.
    if name in _PASSES:
        def make(**options):
            return _registered(name, **options)

        make.__name__ = name
        make.__doc__ = f"The workbench's {name} (`:explain {name}` in the REPL describes it)."
        return make
    raise AttributeError(f"module 'relay.transform' has no attribute '{name}'")
