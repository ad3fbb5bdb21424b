"""The one workbench behind loupe.nnvm in a process: its symbols, name counters and fused-function
names are process-wide, as NNVM's were (conv2d0, conv2d1, … across every graph a program makes)."""

import re

from .._loupe import Error, _Session

_session = None
_counter = 0
# The place of a generated statement means nothing to the user: the message is what counts.
_PLACE = re.compile(r"^<[^>]*>:\d+:\d+: (error: )?")


def session():
    """The process's workbench (made on first use)."""
    global _session
    if _session is None:
        _session = _Session()
    return _session


def call(fn, *args):
    """Calls the workbench, raising its errors without the place in generated text."""
    try:
        return fn(*args)
    except Error as e:
        raise Error(_PLACE.sub("", str(e))) from None


def run(statement):
    """Runs one graph-language statement; returns what it printed."""
    return call(session().command, statement)


def assign(expression):
    """Binds the expression's value to a fresh hidden name; returns the name."""
    global _counter
    _counter += 1
    name = f"_py{_counter}"
    run(f"{name} = {expression}")
    return name
