"""Relay's ops as functions that make calls: add, subtract, multiply, divide and the unary ops
NNVM shares with Relay (exp, sqrt, …); nn's are in loupe.relay.nn."""

from .expr import Call, Op

__all__ = ["add", "divide", "exp", "log", "multiply", "negative", "sigmoid", "sqrt", "subtract",
           "tanh"]


def _call(name, *args, **attrs):
    return Call(Op(name), list(args), attrs)


def add(lhs, rhs):
    """lhs + rhs, broadcasting."""
    return _call("add", lhs, rhs)


def subtract(lhs, rhs):
    """lhs - rhs, broadcasting."""
    return _call("subtract", lhs, rhs)


def multiply(lhs, rhs):
    """lhs * rhs, broadcasting."""
    return _call("multiply", lhs, rhs)


def divide(lhs, rhs):
    """lhs / rhs, broadcasting."""
    return _call("divide", lhs, rhs)


def exp(data):
    """e ** data, elementwise."""
    return _call("exp", data)


def log(data):
    """The natural logarithm, elementwise."""
    return _call("log", data)


def sqrt(data):
    """The square root, elementwise."""
    return _call("sqrt", data)


def tanh(data):
    """tanh, elementwise."""
    return _call("tanh", data)


def sigmoid(data):
    """1 / (1 + e ** -data), elementwise."""
    return _call("sigmoid", data)


def negative(data):
    """-data, elementwise."""
    return _call("negative", data)
