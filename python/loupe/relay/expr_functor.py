"""ExprVisitor and ExprMutator: walking and rewriting Relay expressions in Python, as a pass
written with relay.transform.function_pass does (seed 003's ReplaceConstant). Each expression is
visited once (memoised by identity), as in Relay."""

from .expr import Call, Constant, Function, Op, Var
from .._loupe import Error

__all__ = ["ExprFunctor", "ExprMutator", "ExprVisitor"]


class ExprFunctor:
    """Dispatches visit(expr) to visit_function, visit_call, visit_var, visit_constant or
    visit_op, remembering each expression's result."""

    def __init__(self):
        self.memo_map = {}

    def visit(self, expr):
        key = id(expr)
        if key in self.memo_map:
            return self.memo_map[key][1]
        if isinstance(expr, Function):
            res = self.visit_function(expr)
        elif isinstance(expr, Call):
            res = self.visit_call(expr)
        elif isinstance(expr, Var):
            res = self.visit_var(expr)
        elif isinstance(expr, Constant):
            res = self.visit_constant(expr)
        elif isinstance(expr, Op):
            res = self.visit_op(expr)
        else:
            raise Error(f"relay: cannot visit a {type(expr).__name__}")
        self.memo_map[key] = (expr, res)  # the expression kept alive, so its id stays its own
        return res

    def visit_function(self, fn):
        raise NotImplementedError()

    def visit_call(self, call):
        raise NotImplementedError()

    def visit_var(self, var):
        raise NotImplementedError()

    def visit_constant(self, const):
        raise NotImplementedError()

    def visit_op(self, op):
        raise NotImplementedError()


class ExprVisitor(ExprFunctor):
    """Visits every expression once; override the visit_* of the kinds you look at."""

    def visit_function(self, fn):
        for p in fn.params:
            self.visit(p)
        self.visit(fn.body)

    def visit_call(self, call):
        self.visit(call.op)
        for a in call.args:
            self.visit(a)

    def visit_var(self, var):
        pass

    def visit_constant(self, const):
        pass

    def visit_op(self, op):
        pass


class ExprMutator(ExprFunctor):
    """Rebuilds an expression bottom-up; override the visit_* of the kinds you replace."""

    def visit_function(self, fn):
        params = [self.visit(p) for p in fn.params]
        body = self.visit(fn.body)
        if all(a is b for a, b in zip(params, fn.params)) and body is fn.body:
            return fn
        return Function(params, body, fn.ret_type, None, fn.attrs)

    def visit_call(self, call):
        op = self.visit(call.op)
        args = [self.visit(a) for a in call.args]
        return Call(op, args, call.attrs)

    def visit_var(self, var):
        return var

    def visit_constant(self, const):
        return const

    def visit_op(self, op):
        return op
