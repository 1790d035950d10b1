"""Rules of functions that only newer Pythons or NumPys have are registered where the function
exists, and ``supported()`` says what each needs."""

from __future__ import annotations

import math
import types

import numpy as np
import pytest

from tests.util import make
from transpiler import TranspileError, grad, jvp, supported
from transpiler.rules import registry
from transpiler.rules.registry import ADJOINTS, TANGENTS, Newer, since

NEWER = {"math.cbrt": "Python 3.11", "math.exp2": "Python 3.11", "numpy.vecdot": "NumPy 2.0",
         "numpy.trapezoid": "NumPy 2.0", "numpy.linalg.vector_norm": "NumPy 2.0"}


def test_every_name_says_what_it_needs_whatever_runs_the_tests():
    needs = supported(requirements=True)
    for name, version in NEWER.items():
        assert needs[name] == version
    assert needs["numpy.sin"] is None and needs["math.sin"] is None
    assert set(supported()) <= set(needs)


@pytest.mark.parametrize("name", sorted(NEWER))
def test_a_name_is_supported_exactly_where_its_function_exists(name):
    module, attr = name.rsplit(".", 1)
    obj = {"math": math, "numpy": np, "numpy.linalg": np.linalg}[module]
    exists = hasattr(obj, attr)
    assert (name in supported()) == exists
    assert (getattr(obj, attr, None) in ADJOINTS) == exists


def test_a_function_this_interpreter_lacks_registers_nothing(monkeypatch):
    monkeypatch.setattr(registry, "NEEDS_NEWER", {})
    fake = types.SimpleNamespace(__name__="fakelib")
    key = since(fake, "shiny", "fakelib 9.0")
    assert key == Newer("fakelib.shiny", "fakelib 9.0")
    before = (len(ADJOINTS), len(TANGENTS))

    @registry.adjoint(key)
    def adj_shiny(ans, x):
        registry.d[x] = registry.d[ans] * 2.0

    assert (len(ADJOINTS), len(TANGENTS)) == before
    assert registry.NEEDS_NEWER == {"fakelib.shiny": "fakelib 9.0"}
    registry.REQUIREMENTS.pop("fakelib.shiny")


def test_a_function_that_exists_gets_its_rule():
    assert since(math, "sin", "Python 1.0") is math.sin
    registry.REQUIREMENTS.pop("math.sin")


@pytest.mark.skipif(not hasattr(math, "cbrt"), reason="math.cbrt is Python 3.11's")
def test_math_cbrt_where_python_has_it():
    f = make("def f(x):\n    return math.cbrt(x) * x\n")
    assert grad(f)(8.0) == pytest.approx(2.0 + 8.0 / (3.0 * 4.0))
    assert jvp(f, (8.0,), (1.0,))[1] == pytest.approx(2.0 + 8.0 / 12.0)


@pytest.mark.skipif(hasattr(math, "cbrt"), reason="Python 3.10 has no math.cbrt")
def test_math_cbrt_where_python_lacks_it_is_an_error_of_the_users_code():
    f = make("def f(x):\n    return math.cbrt(x) * x\n")
    with pytest.raises((AttributeError, TranspileError)):
        grad(f)(8.0)


def test_an_iterative_solver_s_tolerance_by_the_name_this_scipy_takes():
    """SciPy before 1.12 names the relative tolerance ``tol`` (1.12 and 1.13 take both): the
    adjoint and tangent solves run with the caller's, passed by the name SciPy takes."""
    import inspect

    spla = pytest.importorskip("scipy.sparse.linalg")
    keyword = "rtol" if "rtol" in inspect.signature(spla.cg).parameters else "tol"
    f = make("import scipy.sparse as sp\nimport scipy.sparse.linalg as spla\n"
             "def f(a, b):\n"
             "    A = sp.diags([a[1:], a + 4.0, a[1:]], [-1, 0, 1], format='csr')\n"
             f"    x, info = spla.cg(A, b, {keyword}=1e-13, atol=0.0)\n"
             "    return np.sum(x ** 2)\n")
    a, b = np.linspace(0.5, 1.0, 4), np.cos(np.arange(4.0))
    ga = grad(f)(a, b)
    h, v = 1e-6, np.sin(np.arange(4.0) + 1.0)
    assert ga @ v == pytest.approx((f(a + h * v, b) - f(a - h * v, b)) / (2 * h), rel=1e-7)
    _, tangent = jvp(f, (a, b), (v, np.zeros(4)))
    assert tangent == pytest.approx(ga @ v, rel=1e-9)


def test_the_changelog_names_the_version_and_the_type_hints_ship():
    import pathlib
    import re

    from transpiler import __version__

    tomllib = pytest.importorskip("tomllib")  # (Python 3.11+)

    root = pathlib.Path(__file__).resolve().parent.parent
    first = re.search(r"^## (.+)$", (root / "CHANGELOG.md").read_text(), re.M).group(1)
    assert first.split()[0] == __version__, first
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    for package in ("transpiler", "runtime"):
        assert (root / package / "py.typed").is_file()
        assert "py.typed" in data["package-data"][package]
    name = tomllib.loads((root / "pyproject.toml").read_text())["project"]["name"]
    assert name != "transpiler" and f"`{name}`" in (root / "README.md").read_text()
