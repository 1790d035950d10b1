"""Rule tables. Importing this package registers every built-in rule."""

from transpiler.rules import (  # noqa: F401
    builtin_rules,
    complex_rules,
    container_rules,
    custom,
    linalg_rules,
    math_rules,
    numpy_rules,
    object_rules,
    operator_rules,
    reduction_rules,
    runtime_rules,
    scipy_integrate_rules,
    scipy_linalg_rules,
    scipy_rules,
    shape_rules,
    sparse_rules,
    stats_rules,
)
from transpiler.rules.nondiff import NONDIFF
from transpiler.rules.registry import ADJOINTS, adjoint, d, key_name

__all__ = ["ADJOINTS", "NONDIFF", "adjoint", "d", "key_name"]
