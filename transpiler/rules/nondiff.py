"""Functions whose result carries no gradient: integers, booleans, shapes, constants.

Calling them on differentiated values is fine; their result is simply inactive.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

NONDIFF: frozenset = frozenset({
    # builtins
    builtins.len, builtins.int, builtins.bool, builtins.round, builtins.range, builtins.print,
    builtins.isinstance, builtins.type,
    # shapes and constructors
    np.shape, np.ndim, np.size, np.zeros, np.ones, np.empty, np.full, np.eye, np.identity,
    np.arange, np.linspace, np.logspace, np.zeros_like, np.ones_like, np.empty_like,
    np.full_like,
    # integer- and boolean-valued functions
    np.floor, np.ceil, np.trunc, np.rint, np.round, np.sign, np.argmax, np.argmin, np.argsort,
    np.nonzero, np.isfinite, np.isnan, np.isinf, np.greater, np.greater_equal, np.less,
    np.less_equal, np.equal, np.not_equal, np.logical_and, np.logical_or, np.logical_not,
    np.any, np.all,
    math.floor, math.ceil, math.trunc, math.isfinite, math.isnan, math.isinf,
})
