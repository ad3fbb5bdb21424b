"""tvm.target: the target a build compiles for. Loupe compiles for the host CPU: "llvm",
optionally "llvm -mcpu=NAME -mattr=+FEATURE" (checked when a build uses it)."""

from .. import _loupe

__all__ = ["Target", "create", "current_target"]


class Target:
    """A target string; as a context (`with tvm.target.create("llvm"):`) it is the target of
    builds that name none."""

    _stack = []

    def __init__(self, description):
        if not isinstance(description, str) or not description.split():
            raise _loupe.Error(f"tvm.target.create takes a target string, got {description!r}")
        self._description = " ".join(description.split())

    def __str__(self):
        return self._description

    def __repr__(self):
        return self._description

    def __enter__(self):
        Target._stack.append(self)
        return self

    def __exit__(self, *exc):
        Target._stack.pop()


def create(description):
    """The target a string names."""
    return Target(description)


def current_target(allow_none=True):
    """The innermost target in force, or None."""
    if Target._stack:
        return Target._stack[-1]
    if not allow_none:
        raise _loupe.Error("no target is in force (with tvm.target.create(…))")
    return None
