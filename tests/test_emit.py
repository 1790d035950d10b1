"""The two source printers: astor's and the standard library's (used where astor cannot print
or import, as on Python 3.14) print the same text, and neither warns."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import gast
import pytest

from tests.test_gradients import CORPUS
from tests.util import make
from transpiler import emit, grad, jvp

ROOT = Path(__file__).resolve().parents[1]


def test_the_goldens_pass_with_the_standard_library_printer_forced():
    env = {**os.environ, "TRANSPILER_EMITTER": "unparse", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests/passes/test_golden.py", "-W", "error::DeprecationWarning"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert " passed" in done.stdout and "failed" not in done.stdout


def test_the_forced_printer_is_the_standard_librarys():
    env = {**os.environ, "TRANSPILER_EMITTER": "unparse", "PYTHONPATH": str(ROOT)}
    code = "from transpiler import emit; print(emit.PRINTER)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.strip() == "unparse", done.stderr


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_both_printers_print_the_generated_corpus_alike(name):
    fn, args, wrt = CORPUS[name]
    source = grad(fn, wrt=wrt).source_for(*args)
    tree = gast.parse(source)
    assert emit.to_source(tree, "unparse") == emit.to_source(tree, "astor")


SHAPES = """
def f(x, y):
    a, b = y, x
    t = a * 2.0, b
    u = (a,)
    s = {"k": x, 'q': "it's"}
    v = [x for _ in range(2)]
    w = -x ** 2 + (x - y) * (y - x) / (1.0 + x) % 3.0
    z = x if x > y else -y
    c = x > 0 and not y > 0 or not (x > 1 or y < 2) and x < 3 < y
    m = y[1:2, ::3] if False else y
    del u
    assert x == x, f"{x!r:>4} and {{braces}}"
    return a, b
"""


def test_both_printers_print_assorted_constructs_alike():
    tree = gast.parse(SHAPES)
    assert emit.to_source(tree, "unparse") == emit.to_source(tree, "astor")


def test_a_construct_astor_cannot_print_falls_back_to_the_standard_library(monkeypatch):
    def broken(tree):
        raise AttributeError("module 'ast' has no attribute 'Str'")  # astor on Python 3.14

    monkeypatch.setitem(emit.PRINTERS, "astor", broken)
    tree = gast.parse("def f(x):\n    return x, 2.0\n")
    assert emit.to_source(tree, "astor") == "def f(x):\n    return x, 2.0"


def test_generated_code_with_comments_and_f_strings_prints_without_warnings():
    f = make("def f(x):\n    print(f'x = {x:.3f}')\n    return x * np.sin(x)\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for printer in emit.PRINTERS:
            tree = gast.parse(grad(f).source)
            emit.to_source(tree, printer)
        assert grad(f)(0.5) == pytest.approx(0.5 * 0.8775825618903728 + 0.479425538604203)
        assert jvp(f, (0.5,), (1.0,))[1] == pytest.approx(0.9182168195493894)


def test_errors_name_the_users_line_with_the_standard_library_printer(monkeypatch):
    monkeypatch.setattr(emit, "PRINTER", "unparse")
    f = make("def f(x):\n    y = x * 2.0\n    z = 1.0 / (y - 1.0)\n    return z * x\n")
    with pytest.raises(ZeroDivisionError) as caught:
        grad(f)(0.5)
    assert any(":3" in note and "1.0 / (y - 1.0)" in note for note in caught.value.__notes__)
