"""The rule spec tables on Dask arrays.

Every case of ``tests/test_rules.py`` with an array argument runs again with its arrays as Dask
arrays in chunks of 2 (so that every operation meets several chunks), on the synchronous
scheduler, with warnings as errors. Each case either gives NumPy's gradient (the gradient of a
Dask argument a lazy Dask array of its shape, of the others what they are) or refuses with a
TypeError that names the function Dask cannot serve; never another error, never another number.
The rules that refuse at least one case are listed in the README (``unsupported_markdown``).
"""

from __future__ import annotations

import functools
import pathlib
import warnings

import numpy as np
import pytest

from tests.rule_specs import build, case_seed, make_args
from tests.test_rules import CASES
from transpiler import grad
from transpiler.rules.registry import key_name

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

README = pathlib.Path(__file__).parent.parent / "README.md"
BEGIN, END = "<!-- BEGIN dask-unsupported -->", "<!-- END dask-unsupported -->"


def _with_arrays():
    for case in CASES:
        spec, shapes = case.values
        if not case.marks and any(len(s) for s in shapes):
            yield case


DASK_CASES = list(_with_arrays())
# cases where Dask's function means something else than NumPy's, and the gradient refuses the
# result (not a Dask refusal, so its message need not name Dask)
DIFFERENT = {
    "np.gradient(a)-(2,)": "Dask's np.gradient of a 1-D array returns a list (NumPy's an array)",
}

# Dask arrays have no ufunc methods that reduce: the function itself raises, before any gradient
NO_UFUNC_METHODS = ("np.add.reduce(", "np.add.accumulate(", "np.add.reduceat(")
# nor do SciPy's iterative solvers take them (SciPy raises "type not understood")
NOT_TAKEN = ("spla.",)


@functools.cache
def outcome(case_id: str) -> str:
    """"" when the case gives NumPy's gradient on Dask arrays, else the refusal's message."""
    spec, shapes = next(c.values for c in DASK_CASES if c.id == case_id)
    seed = case_seed(f"{spec.expr}-{shapes}")
    args = make_args(spec, shapes, seed)
    f = build(spec.expr, args, seed + 1)
    wrt = spec.diff_positions
    want = grad(f, wrt=wrt)(*args)
    want = want if isinstance(want, tuple) else (want,)
    lazy = tuple(da.from_array(a, chunks=2) if isinstance(a, np.ndarray) and a.ndim else a
                 for a in args)
    try:
        with warnings.catch_warnings(), dask.config.set(scheduler="synchronous"):
            warnings.simplefilter("error")
            got = grad(f, wrt=wrt)(*lazy)
            got = got if isinstance(got, tuple) else (got,)
            computed = dask.compute(*got)
    except TypeError as e:
        assert "Dask" in str(e) or case_id in DIFFERENT \
            or case_id.startswith(NO_UFUNC_METHODS) \
            or any(name in case_id for name in NOT_TAKEN), f"{e}"  # a refusal naming Dask
        return str(e)
    for pos, g, value, w in zip(wrt, got, computed, want, strict=True):
        x = lazy[pos]
        if isinstance(x, da.Array):  # a Dask argument: a lazy gradient of its shape
            assert isinstance(g, da.Array) and g.shape == x.shape and g.dtype == x.dtype, g
        elif isinstance(x, np.ndarray):
            assert type(g) is np.ndarray and g.shape == x.shape, type(g)
        else:
            assert type(g) is float, type(g)
        np.testing.assert_allclose(np.asarray(value), w, rtol=1e-9, atol=1e-12)
    return ""


@pytest.mark.parametrize("case", [c.id for c in DASK_CASES])
def test_rule_on_dask(case):
    outcome(case)


def unsupported() -> dict[str, tuple[int, int]]:
    """Rule name -> (cases refused, cases) for the rules with at least one refused case."""
    counts: dict[str, list[int]] = {}
    for case in DASK_CASES:
        name = key_name(case.values[0].key).replace("numpy.", "np.", 1)
        entry = counts.setdefault(name, [0, 0])
        entry[0] += bool(outcome(case.id))
        entry[1] += 1
    return {name: (n, total) for name, (n, total) in sorted(counts.items()) if n}


def unsupported_markdown() -> str:
    """The README's list: every rule Dask cannot serve in all its spec cases."""
    rows = unsupported()
    served = sum(not outcome(c.id) for c in DASK_CASES)
    lines = [f"Made with Dask {dask.__version__}: of {len(DASK_CASES)} spec cases with array "
             f"arguments, {served} give NumPy's gradient on Dask arrays and "
             f"{len(DASK_CASES) - served} refuse, in these {len(rows)} rules (refused / cases):",
             ""]
    lines += [f"`{name}` {n}/{total}" + ("," if i < len(rows) - 1 else ".")
              for i, (name, (n, total)) in enumerate(rows.items())]
    return "\n".join(lines)


def test_readme_lists_the_rules_dask_cannot_serve():
    text = README.read_text()
    block = text[text.index(BEGIN) + len(BEGIN):text.index(END)].strip()
    made_with = block.split(":", 1)[0].removeprefix("Made with Dask ")
    if made_with.split(".")[:2] != dask.__version__.split(".")[:2]:
        pytest.skip(f"the README's list was made with Dask {made_with}, this is "
                    f"{dask.__version__}")
    assert block == unsupported_markdown(), \
        "README's Dask list is stale; regenerate it with tests.test_dask_rules." \
        "unsupported_markdown()"
