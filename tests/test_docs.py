"""The README stays true: its coverage list and its example of generated source are generated."""

import pathlib
import re
import sys

import numpy as np
import pytest

from tests.util import make
from transpiler import grad
from transpiler.coverage import BEGIN, END, markdown

README = (pathlib.Path(__file__).parent.parent / "README.md").read_text()


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.0.0",
                    reason="the list is generated on NumPy 2, where np.max is not np.amax")
def test_readme_coverage_section_is_the_generated_one():
    section = README[README.index(BEGIN):README.index(END) + len(END)]
    assert section == markdown(), "run: python -m transpiler coverage, and paste it into README.md"


def test_readme_example_source_is_what_the_compiler_prints():
    shown = re.search(r"```python\n(def grad_f\(x, y\):.*?)```", README, re.S).group(1)
    f = make("def f(x, y):\n    return x * y + np.sin(x)\n")
    assert grad(f).source == shown.strip()


def test_readme_quick_start_commands_exist():
    assert "pip install -e . && python samples/quickstart.py" in README
    assert 'pip install -e ".[test]" && python -m pytest -q' in README


def test_readme_loop_example_is_what_the_compiler_prints():
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    user = next(b for b in blocks if b.startswith("def final_energy"))
    shown = next(b for b in blocks if b.startswith("def grad_final_energy"))
    f = make(user)
    assert grad(f).source_for(2.0, 0.5) == shown.strip()


def test_readme_input_check_example_is_what_the_compiler_prints():
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    user = next(b for b in blocks if b.startswith("def loss(x, w):"))
    shown = next(b for b in blocks if b.startswith("def grad_loss(x, w):"))
    f = make(user)
    assert grad(f).source == shown.strip()
    with pytest.raises(ValueError, match=r"got shape \(2, 2\)"):
        grad(f)(np.ones((2, 2)), 1.0)


def test_readme_custom_rule_example_runs():
    sp = pytest.importorskip("scipy.special")
    from transpiler.rules.registry import ADJOINTS

    block = next(b for b in re.findall(r"```python\n(.*?)```", README, re.S) if "@adjoint" in b)
    try:
        f = make(block, name="total")  # runs the example, its last line included
        a = np.array([0.5, 1.5])
        np.testing.assert_allclose(grad(f)(a), 1.0 - 2.0 * a * sp.dawsn(a))
        assert "ba = b_t1 * (1.0 - 2.0 * a * _t1)" in grad(f).source
    finally:
        ADJOINTS.pop(sp.dawsn, None)


def test_readme_heat_adjoint_is_what_the_compiler_prints():
    from tests.benchmarks.bench_grad import heat

    block = next(b for b in re.findall(r"```python\n(.*?)```", README, re.S)
                 if b.startswith("    for _t8 in reversed(_tape):"))
    source = grad(heat, wrt=(0, 1)).source_for(np.ones(200), 0.2)
    assert block.rstrip() in source


def test_readme_forward_example_is_what_the_compiler_prints():
    from transpiler import forward, jvp

    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    user = next(b for b in blocks if b.startswith("def drag"))
    shown = next(b for b in blocks if b.startswith("def jvp_drag"))
    f = make(user)
    assert forward(f, wrt=(0, 1)).source_for(3.0, 0.2, 10) == shown.strip()
    value, tangent = jvp(f, (3.0, 0.2, 10), (1.0, 0.0, None))
    assert f"`({value:.4f}..., {tangent:.4f}...)`" in README
    assert tangent == pytest.approx(grad(f)(3.0, 0.2, 10), rel=1e-12)


def test_readme_black_box_example_runs():
    pytest.importorskip("scipy.integrate")
    from transpiler import jvp
    from transpiler.rules.registry import ADJOINTS, TANGENTS

    block = next(b for b in re.findall(r"```python\n(.*?)```", README, re.S) if "black_box(" in b)
    f = make(block, name="misfit")
    try:
        k, y0 = 0.5, 1.0
        y = y0 * np.exp(-k)
        expected = (2 * (y - 0.3) * -y, 2 * (y - 0.3) * np.exp(-k))
        np.testing.assert_allclose(grad(f, wrt=(0, 1))(k, y0), expected, rtol=1e-7)
        np.testing.assert_allclose(jvp(f, (k, y0), (1.0, 0.0))[1], expected[0], rtol=1e-7)
        assert "decay_vjp(_t1, b_t2, k, y0)" in grad(f, wrt=(0, 1)).source
    finally:
        decay = f.__globals__["decay"]
        ADJOINTS.pop(decay, None)
        TANGENTS.pop(decay, None)


def test_readme_dataclass_example_is_what_the_compiler_prints():
    from dataclasses import dataclass

    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    user = next(b for b in blocks if "@dataclass\nclass Oscillator" in b)
    shown = next(b for b in blocks if b.startswith("def grad_energy"))
    f = make(user, name="energy", dataclass=dataclass)
    p = make(user, name="Oscillator", dataclass=dataclass)(4.0, 0.3)
    assert grad(f).source_for(p, 1.0, 2.0) == shown.strip()
    assert repr(grad(f)(p, 1.0, 2.0)) == "Oscillator(k=0.5, c=2.0, name='spring')"
    assert "`Oscillator(k=0.5, c=2.0, name='spring')`" in README


def test_readme_checkpoint_example_is_what_the_compiler_prints():
    from transpiler import checkpoint
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    user = next(b for b in blocks if b.startswith("def loss(u0, D):"))
    shown = next(b for b in blocks if b.startswith("def grad_loss(u0, D):"))
    f = make(user, checkpoint=checkpoint)
    assert grad(f, wrt=(0, 1)).source_for(np.ones(4), 0.2) == shown.strip()


def test_readme_jax_spellings_block_runs(capsys):
    from tests.util import run_readme_block

    run_readme_block("# argnums, has_aux and Hessian blocks", capsys)


def _readme_blocks():
    """Every Python block of the README but those a ``<!-- excerpt: why -->`` line marks."""
    for m in re.finditer(r"```python\n(.*?)```", README, re.S):
        line = README[:m.start()].count("\n") + 1
        before = README[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marks = [pytest.mark.skip(reason=before)] if before.startswith("<!-- excerpt") else []
        yield pytest.param(m.group(1), line, id=f"line{line}", marks=marks)


@pytest.mark.parametrize("block, line", list(_readme_blocks()))
def test_every_readme_block_runs_and_prints_what_it_shows(block, line, capsys):
    """Each self-contained block runs in a namespace of its own; a ``print(...)  # text`` line
    prints ``text`` (in order, from the start of the output)."""
    import linecache

    from transpiler.rules import registry

    tables = (registry.ADJOINTS, registry.TANGENTS, registry.COMPLEX_ADJOINTS,
              registry.COMPLEX_TANGENTS, registry.SPARSE_ADJOINTS, registry.SPARSE_TANGENTS)
    before = [dict(t) for t in tables]
    filename = f"<README line {line}>"
    linecache.cache[filename] = (len(block), None, block.splitlines(True), filename)
    try:
        exec(compile(block, filename, "exec"), {"__name__": f"readme_line_{line}"})
    finally:
        changed = [t != b for t, b in zip(tables, before, strict=True)]
        for table, saved in zip(tables, before, strict=True):
            table.clear()
            table.update(saved)
    assert not any(changed), (f"README line {line} registers rules: mark it an excerpt and "
                              "run it in a test that removes them after")
    shown = [text.split("# ", 1)[1] if "# " in text else None for text in block.splitlines()
             if text.startswith("print(")]
    out = capsys.readouterr().out.split("\n")
    for printed, expected in zip(out, shown, strict=False):
        if expected is not None:
            assert printed == expected, f"README line {line}: printed {printed!r}"


def test_the_public_api_s_type_hints_check():
    """The modules users call (py.typed ships them) type-check with mypy."""
    api = pytest.importorskip("mypy.api")
    root = pathlib.Path(__file__).parent.parent
    files = [str(root / "transpiler" / name) for name in
             ("__init__.py", "api.py", "vjp.py", "jvp.py", "checking.py")]
    limit = sys.getrecursionlimit()  # (mypy raises it for good: a runaway recursion in a
    try:  # later test would then overflow the C stack, a crash, not a RecursionError)
        out, err, status = api.run(["--follow-imports=silent", "--ignore-missing-imports",
                                    "--cache-dir=/dev/null", *files])
    finally:
        sys.setrecursionlimit(limit)
    assert status == 0, out + err
