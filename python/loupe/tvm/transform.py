"""tvm.transform: Relay's pass infrastructure (relay-spec §1) over the workbench's passes —
Pass, Sequential, PassContext (opt_level, required_pass, disabled_pass, instruments, config),
PrintIR and module_pass. The rules (a Sequential skips a pass below the level or disabled, runs
its required passes first, every time; a pass called directly always runs; instruments hear
every run) are the workbench's own, the same the REPL's :pipeline follows.
"""

import inspect
import sys
import threading

from .. import _loupe
from .._loupe import Error
from .ir import IRModule

__all__ = ["ModulePass", "Pass", "PassContext", "PassInfo", "PrintIR", "Sequential",
           "module_pass"]


class PassInfo:
    """A pass's name, the lowest opt_level a Sequential runs it at, and the passes it needs."""

    def __init__(self, opt_level, name, required=None):
        self.opt_level = int(opt_level)
        self.name = str(name)
        self.required = list(required or [])

    def __str__(self):
        # As TVM prints it, a non-empty list as "[\nA, B, ]".
        req = "[" + ("\n" + "".join(f"{r}, " for r in self.required) if self.required else "") + "]"
        return (f"The meta data of the pass - pass name: {self.name}, opt_level: "
                f"{self.opt_level}, required passes: {req}\n")

    __repr__ = __str__


class Pass:
    """A pass; `pass(mod)` runs it on a module under the current PassContext (never checking
    its level or disabled_pass: only a Sequential does) and returns the new module."""

    # Whether a pass written in Python re-types the module before returning (Relay's
    # FunctionPass does, inside its own run).
    _RETYPES = False

    def __init__(self, handle):
        self._handle = handle

    @property
    def info(self):
        h = self._handle
        return PassInfo(h.opt_level, h.name, h.required)

    def __call__(self, mod):
        if not isinstance(mod, IRModule):
            raise Error(f"{self._handle.name}: expected an IRModule, got {type(mod).__name__}")
        graph = _loupe.run_pass(self._handle, mod._main_graph(), PassContext.current()._native())
        return IRModule._of(graph)


class ModulePass(Pass):
    """A pass over a whole module."""


class Sequential(Pass):
    """Passes run in order (relay-spec §1.4); itself a pass, named "sequential" by default."""

    def __init__(self, passes=None, opt_level=0, name="sequential", required=None):
        passes = list(passes or [])
        for p in passes:
            if not isinstance(p, Pass):
                raise Error(f"Sequential: {p!r} is not a pass")
        self.passes = passes
        super().__init__(_loupe.sequential([p._handle for p in passes], str(name), int(opt_level),
                                           list(required or [])))


# Config keys, as TVM registers them, and the workbench option each sets.
_CONFIG = {"relay.FuseOps.max_depth": "max_depth"}


class PassContext:
    """The options passes run under: `with PassContext(opt_level=3, disabled_pass=[…],
    instruments=[…]):`. Outside any `with`, the default context (opt_level 2) is current."""

    _local = threading.local()

    def __init__(self, opt_level=2, required_pass=None, disabled_pass=None, instruments=None,
                 config=None):
        self.opt_level = int(opt_level)
        self.required_pass = [str(p) for p in (required_pass or [])]
        self.disabled_pass = [str(p) for p in (disabled_pass or [])]
        self.instruments = list(instruments or [])
        self.config = {}
        for key, value in (config or {}).items():
            if key not in _CONFIG:
                raise Error(f"Invalid config option '{key}' candidates are: "
                            + ", ".join(sorted(_CONFIG)))
            self.config[_CONFIG[key]] = str(value)
        self._handle = None

    def _native(self):
        if self._handle is None:
            hooks = [_Hook(i) for i in self.instruments]
            self._handle = _loupe.pass_context(self.opt_level, self.required_pass,
                                               self.disabled_pass, hooks, self.config)
        return self._handle

    @classmethod
    def _stack(cls):
        if not hasattr(cls._local, "stack"):
            cls._local.stack = []
        return cls._local.stack

    @classmethod
    def current(cls):
        """The innermost context entered on this thread, or the default one."""
        stack = cls._stack()
        if stack:
            return stack[-1]
        if not hasattr(cls._local, "default"):
            cls._local.default = PassContext()
        return cls._local.default

    def __enter__(self):
        entered = []
        try:
            for inst in self.instruments:
                inst.enter_pass_ctx()
                entered.append(inst)
        except BaseException:
            for inst in reversed(entered):
                inst.exit_pass_ctx()
            self.instruments = []  # instrumentation is off, as in TVM
            self._handle = None
            raise
        self._stack().append(self)
        return self

    def __exit__(self, *exc):
        stack = self._stack()
        if not stack or stack[-1] is not self:
            raise Error("PassContext: exiting a context that is not the current one")
        stack.pop()
        try:
            for inst in self.instruments:
                inst.exit_pass_ctx()
        except BaseException:
            self.instruments = []
            self._handle = None
            raise

    def override_instruments(self, instruments):
        """Exits the current instruments, swaps in `instruments` and enters them."""
        for inst in self.instruments:
            inst.exit_pass_ctx()
        self.instruments = list(instruments)
        self._handle = None
        for inst in self.instruments:
            inst.enter_pass_ctx()


class _Hook:
    """One user instrument as the workbench calls it: graphs become modules, pass records
    PassInfo."""

    def __init__(self, inst):
        self.inst = inst
        self.name = getattr(inst, "name", type(inst).__name__)

    def _call(self, hook, missing, graph, name, opt_level, required):
        f = getattr(self.inst, hook, None)
        if f is None:
            return missing
        return f(IRModule._of(graph), PassInfo(opt_level, name, required))

    def should_run(self, *event):
        return bool(self._call("should_run", True, *event))

    def run_before_pass(self, *event):
        self._call("run_before_pass", None, *event)

    def run_after_pass(self, *event):
        self._call("run_after_pass", None, *event)


def _python_pass(name, opt_level, required, transform, retypes):
    """A pass whose body is `transform(graph) -> graph`, written in Python."""
    if opt_level is None:
        raise Error(f"{name}: a pass written in Python needs its opt_level")
    return _loupe.python_pass(str(name), int(opt_level), list(required or []), transform,
                              retypes)


def _decorate(base, decorator, method, make_body, opt_level, name, required):
    """module_pass / function_pass: a decorated function is the pass; a decorated class makes
    passes, one per instance, named after the class, whose `method` transforms. `base` is the
    kind of pass made (ModulePass, FunctionPass)."""

    def make(pass_name, transform):
        return _python_pass(pass_name, opt_level, required, make_body(transform), base._RETYPES)

    def create(target):
        pass_name = name or target.__name__
        if inspect.isclass(target):

            def __init__(self, *args, **kwargs):
                inst = target(*args, **kwargs)
                object.__setattr__(self, "_inst", inst)
                base.__init__(self, make(pass_name, getattr(inst, method)))

            def __getattr__(self, attr):
                return getattr(object.__getattribute__(self, "_inst"), attr)

            made = type(target.__name__, (base,), {"__init__": __init__,
                                                   "__getattr__": __getattr__,
                                                   "__doc__": target.__doc__})
            made.__qualname__ = target.__qualname__
            made.__module__ = target.__module__
            return made
        if not callable(target):
            raise Error(f"{decorator} decorates a function or a class, not {target!r}")
        return base(make(pass_name, target))

    return create


def _module_body(fn):
    def body(graph):
        out = fn(IRModule._of(graph), PassContext.current())
        if not isinstance(out, IRModule):
            raise Error(f"a module pass returned {type(out).__name__}, not an IRModule")
        return out._main_graph()

    return body


def module_pass(pass_func=None, opt_level=None, name=None, required=None):
    """A pass written in Python over a module: decorates `fn(mod, ctx) -> mod` or a class with
    `transform_module(mod, ctx)`."""
    create = _decorate(ModulePass, "module_pass", "transform_module", _module_body, opt_level,
                       name, required)
    return create(pass_func) if pass_func is not None else create


def PrintIR(header="", show_meta_data=False):
    """A pass that leaves the module alone and writes it, after `PrintIR(<header>):`, to
    standard error (TVM's log)."""

    def show(mod, ctx):
        sys.stderr.write(f"PrintIR({header}):\n{mod.astext(show_meta_data)}")
        return mod

    return module_pass(show, opt_level=0, name="PrintIR")
