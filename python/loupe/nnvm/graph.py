"""nnvm.graph: Graph values, passes applied with Graph.apply, attributes and the node index.

    g = nnvm.graph.create(z).apply("InferShape").apply("InferType")
    print(g.ir())
    g.json_attr("shape")

A Graph is a value: `apply` returns a new one and leaves it as it was; `_set_json_attr` changes
it in place, as NNVM's did. `nnvm.compiler.build` applies its passes through `Graph.apply`, so a
replaced `Graph.apply` sees every one.
"""

import ast
import json
import pprint

from .. import _loupe
from .._text import text
from . import _workspace

__all__ = ["Graph", "GraphIndex", "create", "load_json"]


class Graph:
    """A graph with its attributes (NNVM's nnvm.graph.Graph)."""

    def __init__(self, handle):
        self._g = handle

    def apply(self, passes):
        """Applies a pass or a list of passes in order; returns the resulting graph."""
        names = [passes] if isinstance(passes, str) else list(passes)
        for n in names:
            if not isinstance(n, str):
                raise _loupe.Error(f"Graph.apply takes pass names, got {n!r}")
        return Graph(_workspace.call(_workspace.session().apply, self._g, names))

    def ir(self, join_entry_attrs=None, join_node_attrs=None):
        """The graph as NNVM's PrintGraphIR prints it."""
        if join_entry_attrs or join_node_attrs:
            raise _loupe.Error("Graph.ir: joined attributes are the REPL's :ir KEY …")
        return self._g.ir()

    def json_attr(self, key):
        """A graph attribute as Python values (lists, strings, numbers), or None when unset."""
        value = self._g.attr(key)
        if value is None:
            return None
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise _loupe.Error(f"graph attribute '{key}' is not JSON: {value}") from None

    def _set_json_attr(self, key, value, type_name=None):
        """Sets a graph attribute of NNVM's type `type_name` (str, int, size_t, list_int,
        list_str, list_shape, list_layout, dict_str_int; guessed from `value` when None)."""
        if type_name is None:
            type_name = _guess_type(value)
        if type_name == "str":
            if not isinstance(value, str):
                raise _loupe.Error(f"_set_json_attr: a str attribute needs a string, got {value!r}")
            words = value
        elif type_name == "dict_str_int" and isinstance(value, dict):
            words = text(list(value.items()), "_set_json_attr")
        else:
            words = text(value, "_set_json_attr")
        self._g = _workspace.call(_workspace.session().set_attr, self._g, key, words, type_name)

    def json(self):
        """The graph as NNVM's graph JSON."""
        return self.apply("SaveJSON").json_attr("json")

    def _repr_svg_(self):
        """The graph drawn as the viewer draws it (fusion groups as regions), for notebooks."""
        return _workspace.call(self._g.svg)

    @property
    def index(self):
        """The node index: nodes as SaveJSON writes them, entry ids, input names."""
        return GraphIndex(self)


def _guess_type(value):
    if isinstance(value, str):
        return "str"
    if isinstance(value, int):
        return "int"
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        return "list_int"
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return "list_str"
    raise _loupe.Error(f"_set_json_attr: give the type of {value!r} (type_name=…)")


class _Nodes(list):
    """graph.index.nodes: a list of node dicts, shown in a notebook as IPython showed it in the
    seeds' days (pprint's layout, each dict's keys sorted)."""

    def _repr_pretty_(self, p, cycle):
        p.text(pprint.pformat(list(self), width=79))


class GraphIndex:
    """NNVM's graph.index, read from SaveJSON (as NNVM's was: the SaveJSON goes through
    Graph.apply)."""

    def __init__(self, graph):
        jgraph = json.loads(graph.apply("SaveJSON").json_attr("json"))
        self.nodes = _Nodes(jgraph["nodes"])
        self.entry_ptr = jgraph["node_row_ptr"]
        self._name2nodeid = {n["name"]: i for i, n in enumerate(self.nodes)}
        self.input_names = [self.nodes[i]["name"] for i in jgraph["arg_nodes"]]
        self.output_entries = jgraph["heads"]

    @property
    def num_nodes(self):
        return len(self.entry_ptr) - 1

    @property
    def num_node_entries(self):
        return self.entry_ptr[-1]

    def node_id(self, key):
        """The id of the node named `key`."""
        if key not in self._name2nodeid:
            raise _loupe.Error(f"the graph has no node named '{key}'")
        return self._name2nodeid[key]

    def entry_id(self, key, value_index=0):
        """The entry id of a node's output: by node id, by name, or an entry [node, index, …]."""
        if isinstance(key, list):
            return self.entry_ptr[key[0]] + key[1]
        if isinstance(key, str):
            key = self.node_id(key)
        return self.entry_ptr[key] + value_index


def create(symbol):
    """The graph of a symbol (its outputs are the graph's outputs)."""
    var = getattr(symbol, "_var", None)
    if var is None:
        raise _loupe.Error(f"nnvm.graph.create takes a symbol, got {type(symbol).__name__}")
    return Graph(_workspace.call(_workspace.session().symbol_graph, var))


def load_json(json_str):
    """A graph from NNVM's graph JSON (LoadJSON on a graph holding it)."""
    g = Graph(_loupe._Graph())
    g._set_json_attr("json", json_str, "str")
    return g.apply("LoadJSON")
