"""Source-to-source reverse-mode differentiation of Python/NumPy functions.

    from transpiler import grad
    df = grad(f)          # compiled on first call, cached
    df(x); print(df.source)
"""

from runtime import stop_gradient
from transpiler import rules  # noqa: F401  (registers the built-in rules)
from transpiler.api import grad, value_and_grad
from transpiler.checking import check_grad
from transpiler.coverage import supported
from transpiler.errors import NoRuleError, TranspileError
from transpiler.rules.nondiff import nondifferentiable
from transpiler.rules.registry import adjoint, d
from transpiler.vjp import hessian, hvp, jacobian, vjp

__all__ = ["NoRuleError", "TranspileError", "adjoint", "check_grad", "d", "grad", "jacobian",
           "hessian", "hvp", "nondifferentiable", "stop_gradient", "supported", "value_and_grad",
           "vjp"]
