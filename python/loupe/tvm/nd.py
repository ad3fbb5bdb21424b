"""tvm.nd: arrays on a device (the host CPU), holding NumPy arrays."""

import numpy as np

from .. import _loupe

__all__ = ["NDArray", "TVMContext", "array", "cpu", "empty", "values_of"]


class TVMContext:
    """A device: Loupe runs on the host CPU, device 0."""

    def __init__(self, device_id=0):
        if device_id != 0:
            raise _loupe.Error(f"cpu({device_id}): the host CPU is device 0")
        self.device_type, self.device_id = 1, 0

    def __repr__(self):
        return "cpu(0)"

    def __eq__(self, other):
        return isinstance(other, TVMContext)

    def __hash__(self):
        return 1


def cpu(dev_id=0):
    """The host CPU."""
    return TVMContext(dev_id)


class NDArray:
    """An array on the CPU (a NumPy array of its own)."""

    def __init__(self, values, ctx=None):
        self._a = np.array(values, copy=True)
        self.ctx = ctx or cpu(0)

    @property
    def shape(self):
        return self._a.shape

    @property
    def dtype(self):
        return str(self._a.dtype)

    def asnumpy(self):
        """A copy of the values as a NumPy array."""
        return self._a.copy()

    def copyfrom(self, source):
        """Copies `source` (same shape) in; returns self."""
        values = values_of(source)
        if values.shape != self._a.shape:
            raise _loupe.Error(f"copyfrom: shape {values.shape} into an array of {self._a.shape}")
        self._a[...] = values
        return self

    def __repr__(self):
        return f"<tvm.NDArray shape={self.shape}, {self.ctx}>\n{self._a!r}"


def values_of(x):
    """The values of an NDArray (its own NumPy array, not copied), of anything else with
    `asnumpy()`, or of anything NumPy reads as an array."""
    if isinstance(x, NDArray):
        return x._a
    if hasattr(x, "asnumpy"):
        return x.asnumpy()
    return np.asarray(x)


def array(values, ctx=None):
    """An NDArray holding a copy of `values`."""
    return NDArray(values_of(values), ctx)


def empty(shape, dtype="float32", ctx=None):
    """An NDArray of zeros."""
    return NDArray(np.zeros(shape, dtype), ctx)
