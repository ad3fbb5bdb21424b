"""tvm.contrib: the graph runtime."""

from . import graph_runtime

__all__ = ["graph_runtime"]
