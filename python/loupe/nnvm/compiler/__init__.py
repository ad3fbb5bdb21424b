"""nnvm.compiler: build a graph into a deploy graph, a module and params."""

from . import graph_util
from .build_module import BuildConfig, build, build_config

__all__ = ["BuildConfig", "build", "build_config", "graph_util"]
