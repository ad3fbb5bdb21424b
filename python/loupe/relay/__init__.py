"""Relay's Python API as seed 003 ("How to Use TVM Pass Infra") uses it:

    from loupe import relay, tvm
    x = relay.var("x", relay.TensorType((1, 64, 56, 56), "float32"))
    weight = relay.var("weight", shape=(64, 64, 3, 3))
    f = relay.Function([x, weight], relay.add(relay.nn.conv2d(x, weight), relay.const(1.0)))
    mod = tvm.IRModule.from_expr(f)
    mod = relay.transform.FoldConstant()(mod)
    print(mod)

Programs live in the workbench's graph, so the passes are the REPL's; modules print in Relay's
text form. See loupe.relay.expr for what the graph form cannot hold.
"""

from . import nn, transform
from .expr import Call, Constant, Function, Op, TensorType, Var, const, var
from .expr_functor import ExprFunctor, ExprMutator, ExprVisitor
from .op import add, divide, exp, log, multiply, negative, sigmoid, sqrt, subtract, tanh

__all__ = ["Call", "Constant", "ExprFunctor", "ExprMutator", "ExprVisitor", "Function", "Op",
           "TensorType", "Var", "add", "const", "divide", "exp", "log", "multiply", "negative",
           "nn", "sigmoid", "sqrt", "subtract", "tanh", "transform", "var"]
