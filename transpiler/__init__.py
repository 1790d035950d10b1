"""Source-to-source differentiation of Python/NumPy functions, in reverse and forward mode.

    from transpiler import grad
    df = grad(f)          # compiled on first call, cached
    df(x); print(df.source)
"""

# isort: off  (the check comes first: a clear error where a user's runtime.py shadows ours)
from transpiler import shadowing  # noqa: F401
# isort: on
from runtime import converged, on_gradient, stop_gradient
from runtime.checkpoint import checkpoint
from transpiler import rules  # noqa: F401  (registers the built-in rules)
from transpiler.api import grad, value_and_grad
from transpiler.checking import check_grad
from transpiler.coverage import supported
from transpiler.errors import NoRuleError, TranspileError
from transpiler.jvp import forward, jvp
from transpiler.rules.custom import black_box
from transpiler.rules.nondiff import nondifferentiable
from transpiler.rules.registry import adjoint, d, tangent
from transpiler.version import __version__
from transpiler.vjp import hessian, hvp, jacobian, vjp

__all__ = ["__version__", "NoRuleError", "TranspileError", "adjoint", "black_box", "check_grad",
           "checkpoint", "converged", "d", "forward", "grad", "hessian", "hvp", "jacobian",
           "jvp", "nondifferentiable", "on_gradient", "stop_gradient", "supported", "tangent",
           "value_and_grad", "vjp"]
