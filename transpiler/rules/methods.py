"""Array methods and the NumPy functions whose rules they share.

``x.sum(axis=0)`` is differentiated as ``np.sum(x, axis=0)``: the receiver becomes the first
argument. Methods in ``PACKED`` take their shape or axes as separate arguments
(``x.reshape(2, 3)``), which are packed into one tuple (``np.reshape(x, (2, 3))``).
"""

from __future__ import annotations

import numpy as np

import runtime as rt

METHODS = {
    "sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min,
    "var": np.var, "std": np.std, "cumsum": np.cumsum, "cumprod": np.cumprod,
    "dot": np.dot, "trace": np.trace, "diagonal": np.diagonal,
    "transpose": np.transpose, "reshape": np.reshape, "swapaxes": np.swapaxes,
    "copy": np.copy, "ravel": np.ravel, "flatten": np.ravel, "squeeze": np.squeeze,
    "clip": np.clip, "repeat": np.repeat, "take": np.take, "astype": np.ndarray.astype,
    "view": np.ndarray.view, "conj": np.conjugate, "conjugate": np.conjugate,
    "get": dict.get, "values": rt.values, "items": rt.items, "keys": rt.keys,
}
PACKED = frozenset({"transpose", "reshape"})
