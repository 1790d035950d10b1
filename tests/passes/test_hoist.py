"""Loop-invariant negations and products of numbers are computed once, before the loop."""

import re

import numpy as np

from tests.util import make
from transpiler import check_grad, grad


def _loop_body(source: str) -> str:
    return source[source.index("    for "):source.index("_tape.append")]


def test_invariant_negations_move_out_and_are_not_taped():
    f = make("""
        def f(k, x):
            for i in range(4):
                x = -k * x + x * x * 0.1 - k * 0.5
            return x
    """)
    check_grad(f, 0.7, 0.3, wrt=(0, 1))
    source = grad(f, wrt=(0, 1)).source_for(0.7, 0.3)
    assert "_t2 = -k" in source and "-k" not in _loop_body(source)
    assert "_t2" not in source[source.index("_tape.append"):source.index("\n", source.index(
        "_tape.append"))]


def test_identical_invariants_share_one_name():
    f = make("""
        def f(k, x):
            for i in range(3):
                x = -k * x
                x = x - (-k) * x * x
            return x
    """)
    check_grad(f, 0.4, 0.9, wrt=(0, 1))
    source = grad(f, wrt=(0, 1)).source_for(0.4, 0.9)
    assert len(re.findall(r"^ *_t\d+ = -k$", source, re.M)) == 1


def test_what_varies_in_the_loop_or_could_raise_stays():
    f = make("""
        def f(k, x, w):
            for i in range(3):
                k = k * 0.5
                x = -k * x + np.sum(w * 2.0)
            return x
    """)
    w = np.array([0.1, 0.2])
    check_grad(f, 0.4, 0.9, w, wrt=(0, 1, 2))
    source = grad(f, wrt=(0, 1, 2)).source_for(0.4, 0.9, w)
    body = _loop_body(source)
    assert "-k" in body and "w * 2.0" in body  # k varies; w is an array, w * 2.0 could raise


def test_a_loop_that_never_runs_still_works():
    f = make("""
        def f(k, x, n):
            for i in range(n):
                x = -k * x
            return x * k
    """)
    assert grad(f, wrt=(0, 1))(0.5, 2.0, 0) == (2.0, 0.5)
    check_grad(f, 0.5, 2.0, 3, wrt=(0, 1))
