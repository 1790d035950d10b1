"""The corpus x {optimized, unoptimized} against central finite differences."""

import pytest

from tests.corpus import arrays, calls, containers, control_flow, functions, scientific, statements
from transpiler import check_grad

CORPUS = {**control_flow.CASES, **arrays.CASES, **calls.CASES, **containers.CASES,
          **functions.CASES, **statements.CASES, **scientific.CASES}


@pytest.mark.parametrize("optimize", [True, False], ids=["opt", "noopt"])
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_gradient_matches_finite_differences(name, optimize):
    fn, args, wrt = CORPUS[name]
    check_grad(fn, *args, wrt=wrt, optimize=optimize, rtol=1e-5, atol=1e-6)
