"""relay.nn: the neural-network ops (conv2d, dense, relu, softmax, pooling)."""

from .op import _call

__all__ = ["avg_pool2d", "batch_flatten", "conv2d", "dense", "global_avg_pool2d", "max_pool2d",
           "relu", "softmax"]


def conv2d(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
           channels=None, kernel_size=None, data_layout="NCHW", kernel_layout="OIHW",
           out_layout="", out_dtype=""):
    """A 2-D convolution; channels and kernel_size default to the weight's (its shape must be
    known: NNVM's conv2d needs them)."""
    return _call("nn.conv2d", data, weight, strides=strides, padding=padding, dilation=dilation,
                 groups=groups, channels=channels, kernel_size=kernel_size,
                 data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout,
                 out_dtype=out_dtype)


def dense(data, weight, units=None):
    """data · weightᵀ; units defaults to the weight's first dimension."""
    return _call("nn.dense", data, weight, units=units)


def relu(data):
    """max(data, 0)."""
    return _call("nn.relu", data)


def softmax(data, axis=-1):
    """The softmax along `axis`."""
    return _call("nn.softmax", data, axis=axis)


def batch_flatten(data):
    """Every axis but the first flattened into one."""
    return _call("nn.batch_flatten", data)


def max_pool2d(data, pool_size=(1, 1), strides=(1, 1), padding=(0, 0)):
    """The maximum over each window."""
    return _call("nn.max_pool2d", data, pool_size=pool_size, strides=strides, padding=padding)


def avg_pool2d(data, pool_size=(1, 1), strides=(1, 1), padding=(0, 0)):
    """The mean over each window."""
    return _call("nn.avg_pool2d", data, pool_size=pool_size, strides=strides, padding=padding)


def global_avg_pool2d(data):
    """The mean over each channel's whole plane."""
    return _call("nn.global_avg_pool2d", data)
