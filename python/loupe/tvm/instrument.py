"""tvm.instrument: pass instruments, hooks around every pass a context runs (relay-spec §1.6).

    @tvm.instrument.pass_instrument
    class PrintIR:
        def run_before_pass(self, mod, info):
            print("Running pass: {}", info)
            print(mod)

    with tvm.transform.PassContext(opt_level=3, instruments=[PrintIR()]):
        mod = seq(mod)
"""

__all__ = ["PassInstrument", "pass_instrument"]


class PassInstrument:
    """An instrument; override the hooks you need. should_run(mod, info) returning False skips
    a pass; run_before_pass / run_after_pass see the module before and after it;
    enter_pass_ctx / exit_pass_ctx run as the context is entered and left."""

    @property
    def name(self):
        return type(self).__name__

    def enter_pass_ctx(self):
        pass

    def exit_pass_ctx(self):
        pass

    def should_run(self, mod, info):
        return True

    def run_before_pass(self, mod, info):
        pass

    def run_after_pass(self, mod, info):
        pass


def pass_instrument(pi_cls=None):
    """Makes a class with some of the hooks an instrument (its missing hooks do nothing, and
    should_run says yes)."""

    def create(cls):
        made = type(cls.__name__, (cls, PassInstrument), {"__doc__": cls.__doc__})
        made.__qualname__ = cls.__qualname__
        made.__module__ = cls.__module__
        return made

    return create(pi_cls) if pi_cls is not None else create
