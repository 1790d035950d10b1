"""Functions whose result carries no gradient: integers, booleans, shapes, constants.

Calling them on differentiated values is fine; their result is simply inactive. A function
belongs here only if its result is piecewise constant in, or independent of, every float
argument it can be given: a wrong entry turns a real gradient into a silent zero. So these are
NOT here, although they often build constants: ``np.full``/``np.full_like`` (the fill value),
``np.arange``/``np.linspace``/``np.logspace``/``np.geomspace`` (the end points),
``np.meshgrid``, ``np.bincount`` (its weights), ``np.heaviside`` (its second argument is the
value at 0), ``np.remainder``, and ``np.random``: ``normal``/``uniform`` samples move with
``loc``/``scale``, and entries here count as side-effect free, so an unused draw (``rand``,
``randn``) would be dropped and shift the random stream. Called on constants none of these
needs an entry; called on differentiated values they raise NoRuleError, never a wrong gradient.
"""

from __future__ import annotations

import builtins
import inspect
import logging
import math
import warnings

import numpy as np

import runtime as rt

NONDIFF: set = {
    rt.keys,  # a dict's keys
    rt.stop_gradient,  # transpiler.stop_gradient(x): the value, with no gradient
    rt.seed, rt.zeros_like_grad, rt.zero_tangent,  # ones and zeros shaped like a value
    rt.shape_of, rt.balanced_eq, rt.size,  # a shape on a tape; a tie mask; an element count
    # helpers of generated gradients: element ids, a mask, and two that only raise
    rt.element_ids, rt.nan_to_num_mask, rt.constant_only,
    rt.unsupported,
    rt.along_axis_index, rt.put_index,  # the index a write in place writes
    # builtins
    builtins.len, builtins.int, builtins.bool, builtins.round, builtins.range, builtins.print,
    builtins.isinstance, builtins.type, builtins.any, builtins.all,
    # shapes, dtypes and constructors of shape-only constants
    np.shape, np.ndim, np.size, np.broadcast_shapes, np.result_type, np.iscomplexobj,
    np.isrealobj, np.isscalar,
    np.zeros, np.ones, np.empty, np.eye, np.identity, np.tri,
    np.zeros_like, np.ones_like, np.empty_like,
    np.indices, np.diag_indices, np.tril_indices, np.triu_indices,
    # rounding: piecewise constant
    np.floor, np.ceil, np.trunc, np.rint, np.round, np.around, np.fix, np.floor_divide,
    np.sign, np.signbit,
    # indices and counts
    np.argmax, np.argmin, np.argsort, np.argpartition, np.lexsort, np.argwhere, np.nonzero,
    np.flatnonzero, np.searchsorted, np.digitize, np.count_nonzero, np.unravel_index,
    np.ravel_multi_index,
    # booleans: tests, comparisons, logic
    np.isfinite, np.isnan, np.isinf, np.isposinf, np.isneginf, np.isreal, np.iscomplex,
    np.isclose, np.allclose, np.array_equal, np.array_equiv, np.isin, np.any, np.all,
    np.greater, np.greater_equal, np.less, np.less_equal, np.equal, np.not_equal,
    np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
    # integer-only operations
    np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert, np.left_shift, np.right_shift,
    np.gcd, np.lcm,
    # math: integers and booleans
    math.floor, math.ceil, math.trunc, math.factorial, math.comb, math.perm, math.gcd,
    math.lcm, math.isqrt, math.isclose, math.isfinite, math.isnan, math.isinf,
}


def nondifferentiable(func):
    """Mark ``func`` as carrying no gradient (piecewise constant, or deliberately not
    differentiated): calls of it on differentiated values give an inactive result, and its
    source is not compiled. Like an entry above, it counts as free of side effects. Returns
    ``func``, so it works as a decorator. Gradients compiled before the call do not see it."""
    NONDIFF.add(func)
    return func


# Calls made for what they report: they only read their arguments, so a statement calling one
# stays in the primal, with no derivative (``print(loss)``, ``warnings.warn(f"...{x}")``,
# ``log.info("%s", x)`` on a module-level logger).
REPORTING = frozenset({
    builtins.print, warnings.warn, logging.debug, logging.info, logging.warning, logging.error,
    logging.critical, logging.exception, logging.log,
})
_LOGGER_METHODS = frozenset({"debug", "info", "warning", "error", "critical", "exception", "log"})


def reports(func) -> bool:
    """Whether ``func`` is one of REPORTING or a logging method of a logger."""
    if inspect.ismethod(func) and func.__name__ in _LOGGER_METHODS:
        return isinstance(func.__self__, (logging.Logger, logging.LoggerAdapter))
    try:
        return func in REPORTING
    except TypeError:  # unhashable
        return False
