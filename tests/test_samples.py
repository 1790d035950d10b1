"""Every sample script runs to completion and prints what it promises."""

import ast
import functools
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

SAMPLES = sorted((pathlib.Path(__file__).parent.parent / "samples").glob("*.py"))
# the samples that write a plot when given a PNG path (and matplotlib is installed)
PLOTTING = ["heat_inverse", "nbody_sensitivity", "neural_network", "ode_fit", "projectile"]


@functools.cache
def _run(path):
    """Run a sample once (without arguments) and keep its result for every test that reads it."""
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=120)


def _output(stem):
    result = _run(next(p for p in SAMPLES if p.stem == stem))
    assert result.returncode == 0, result.stderr
    return result.stdout


def _number(pattern, text):
    match = re.search(pattern, text)
    assert match, f"{pattern!r} not found in:\n{text}"
    return float(match.group(1))


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_sample_runs(path):
    result = _run(path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


def test_quickstart_prints_a_gradient_and_its_source():
    path = next(p for p in SAMPLES if p.stem == "quickstart")
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                         check=True).stdout
    assert "d energy / dx" in out and "def grad_energy(x, k):" in out
    assert "# grad of:" in out
    assert "def jvp_energy(x, k, *, dk):" in out  # and in forward mode
    slope = float(re.search(r"d energy / dk = (\S+)", out).group(1))
    x, h = np.linspace(-0.5, 1.0, 4), 1e-6

    def energy(k):
        return np.sum(np.sin(k * x) * np.exp(-(k * x) ** 2)) + 0.5 * np.sum(x * x)
    assert abs(slope - (energy(2.0 + h) - energy(2.0 - h)) / (2 * h)) < 1e-6


def test_ode_fit_recovers_stiffness_and_damping():
    out = _output("ode_fit")
    assert "true parameters:   k = 4.0000  c = 0.3000" in out
    k = _number(r"fitted parameters: k = ([-\d.]+)", out)
    c = _number(r"fitted parameters: k = [-\d.]+  c = ([-\d.]+)", out)
    assert abs(k - 4.0) < 0.02 and abs(c - 0.3) < 0.01
    assert 0 < _number(r"L-BFGS-B iterations: (\d+)", out) < 100
    assert "converged: True" in out


def test_lotka_volterra_fit_recovers_the_rates():
    out = _output("lotka_volterra_fit")
    line = next(row for row in out.splitlines() if row.startswith("fitted rates:"))
    fitted = np.array([float(v) for v in line.split("[")[1].rstrip("]").split()])
    np.testing.assert_allclose(fitted, [1.1, 0.4, 0.4, 0.1], atol=0.01)


def test_projectile_hits_the_target():
    out = _output("projectile")
    angle = _number(r"launch angle found: ([\d.]+) deg", out)
    assert 20.0 < angle < 40.0  # the low solution, below the angle of longest range
    assert abs(_number(r"landing error: ([-+\d.e]+) m", out)) < 1e-4
    assert abs(_number(r"landing distance: ([\d.]+) m", out) - 40.0) < 1e-4


def test_nbody_gradient_matches_finite_differences_and_physics():
    out = _output("nbody_sensitivity")
    assert "check_grad(final_energy): agrees with central finite differences" in out
    assert _number(r"difference ([\d.e+-]+)\s*$", out.strip()) < 1e-6
    gradient = _number(r"gradient ([-\d.]+)", out)
    central = _number(r"central difference ([-\d.]+)", out)
    assert gradient == pytest.approx(central, rel=1e-6, abs=1e-8)
    assert _number(r"relative drift ([\d.e+-]+)", out) < 1e-4
    # energy is nearly conserved, so dE_final/dv0 is close to m v0 (body 2: -0.932407 -0.864731)
    rows = re.search(r"d E_final / d v_initial =\n(.*?)\nm \* v_initial", out, re.S).group(1)
    last = [float(v) for v in rows.replace("[", " ").replace("]", " ").split()][-2:]
    assert last == pytest.approx([-0.932407, -0.864731], abs=1e-3)


def test_heat_inverse_reconstructs_the_initial_condition():
    out = _output("heat_inverse")
    naive = _number(r"measured final state taken as the answer: ([\d.]+)", out)
    error = _number(r"reconstruction error of the initial condition: ([\d.]+)", out)
    assert error < 0.05 and error < naive / 10
    assert _number(r"largest pointwise error: ([\d.]+)", out) < 0.05


def test_neural_network_learns_sin():
    out = _output("neural_network")
    before = _number(r"loss before training: ([\d.]+)", out)
    after = _number(r"loss after training:\s+([\d.]+)", out)
    assert before > 0.05 and after < 1e-4
    assert _number(r"largest error on a finer grid: ([\d.]+)", out) < 0.05


def test_side_by_side_shows_both_sources_and_a_checked_value():
    out = _output("side_by_side")
    assert re.search(r"^def damped_iterate\(x, steps\): +def grad_damped_iterate\(x, steps\):$",
                     out, re.M)
    assert " in reversed(_tape):" in out and "# grad of: if y > 1.0:" in out
    value = _number(r"d/dx damped_iterate\(0\.8, 6\) = ([-\d.]+)", out)
    central = _number(r"central finite difference\s+= ([-\d.]+)", out)
    assert value == pytest.approx(central, rel=1e-6)


@pytest.mark.parametrize("stem", PLOTTING)
def test_samples_import_matplotlib_only_inside_their_plot_function(stem):
    """Without a PNG argument no plotting library is imported (it stays optional)."""
    tree = ast.parse(next(p for p in SAMPLES if p.stem == stem).read_text())
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            assert not any(n.startswith("matplotlib") for n in names), stem
    plot = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "plot")
    assert "matplotlib" in ast.unparse(plot)


@pytest.mark.parametrize("stem", PLOTTING)
def test_sample_writes_a_png_when_asked(stem, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / f"{stem}.png"
    path = next(p for p in SAMPLES if p.stem == stem)
    result = subprocess.run([sys.executable, str(path), str(png)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"plot written to {png}" in result.stdout


def test_long_simulation_checkpoints_in_bounded_memory():
    out = _output("long_simulation")
    assert "taped whole:" in out and "snapshots" in out and "tape " in out
    assert _number(r"largest relative difference (\S+)", out) <= 1e-12
    assert _number(r"checkpointed \S+ MB \((\S+)x\)", out) <= 0.1


def test_dask_cluster_fit_matches_numpy():
    pytest.importorskip("dask.distributed")
    out = _output("dask_cluster_fit")
    assert "cluster: 2 worker processes" in out and "in 8 chunks" in out
    assert _number(r"max relative difference vs NumPy: (\S+)", out) < 1e-10
    assert "converged: True" in out

    def weights(label):
        return np.array(re.search(rf"{label} weights:\s*\[(.*?)\]", out, re.S).group(1).split(),
                        dtype=float)
    fitted, true = weights("fitted"), weights("true")
    assert fitted.shape == true.shape == (16,)
    # 200,000 labels drawn from the logistic model: each weight is off by about 0.007
    assert np.max(np.abs(fitted - true)) < 0.05
    assert abs(_number(r"fitted bias: ([-\d.]+)", out) - 0.5) < 0.05
    assert 0 < _number(r"function/gradient evaluations: (\d+)", out) < 100


def test_fem_poisson_gradients_match_and_its_adjoint_is_the_readme_s():
    pytest.importorskip("scipy.sparse")
    out = _output("fem_poisson")
    assert "both gradients match central differences" in out
    assert "assembled in a loop into a lil_matrix, the same: True" in out
    assert _number(r"1-D, 8 elements: loss ([\d.]+)", out) > 0.0
    readme = (pathlib.Path(__file__).parent.parent / "README.md").read_text()
    shown = next(b for b in re.findall(r"```python\n(.*?)```", readme, re.S)
                 if b.startswith("    # grad of: u = spsolve(K[1:-1, 1:-1], F[1:-1])"))
    assert shown in out


def test_reactor_gradients_agree_with_differences_and_each_other():
    out = _output("reactor_steady_state")
    assert _number(r"largest relative difference (\S+)", out) < 1e-5
    by_root = _number(r"by fsolve:\s+d misfit / dk = (\S+)", out)
    by_loop = _number(r"by iterations: d misfit / dk = (\S+)", out)
    central = _number(r"central differences:\s+(\S+)", out)
    assert abs(by_root - central) < 1e-8 and abs(by_loop - central) < 1e-8


def test_spring_chain_fit_recovers_the_stiffnesses_and_its_adjoint_is_the_readme_s():
    pytest.importorskip("scipy.optimize")
    path = next(p for p in SAMPLES if p.stem == "spring_chain_fit")
    out = subprocess.run([sys.executable, str(path), "--source"], capture_output=True,
                         text=True, timeout=300, check=True).stdout
    assert "checked against finite differences" in out
    assert "fitted stiffness [2.  0.7 1.4] (observed with [2.  0.7 1.4])" in out
    readme = (pathlib.Path(__file__).parent.parent / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    code = next(b for b in blocks if b.startswith("@dataclass\nclass Spring:"))
    assert code in path.read_text()  # (the sample as it is)
    adjoint = next(b for b in blocks if b.startswith("def grad_misfit("))
    assert adjoint.strip() in out


_BLOCK_SCIPY = ("import sys, runpy\n"
                "class _NoSciPy:\n"
                "    def find_spec(self, name, path=None, target=None):\n"
                "        if name == 'scipy' or name.startswith('scipy.'):\n"
                "            raise ImportError('no SciPy here')\n"
                "sys.meta_path.insert(0, _NoSciPy())\n"
                "sys.argv = [sys.argv[1]]\n"
                "runpy.run_path(sys.argv[0], run_name='__main__')\n")


@pytest.mark.parametrize("path", [p for p in SAMPLES if "scipy" in p.read_text()],
                         ids=lambda p: p.stem)
def test_a_sample_that_needs_scipy_says_how_to_install_it(path):
    """The plain install is NumPy alone: a sample using SciPy says which extra it needs (and
    its docstring's Run: line installs it)."""
    result = subprocess.run([sys.executable, "-c", _BLOCK_SCIPY, str(path)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "this sample needs SciPy: pip install -e \".[scipy" in result.stderr
    assert re.search(r'^Run:  pip install -e "\.\[scipy', path.read_text(), re.M)
