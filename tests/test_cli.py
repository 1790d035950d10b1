"""The command line (show, export, check, --help, bad inputs, exit codes) and the notes that tie an
exception raised inside generated code to the user's line.

Exit codes are checked on real subprocesses (``python -m transpiler ...``); an exported module
is run in a subprocess where ``import transpiler`` fails.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import subprocess
import sys
import textwrap
import traceback
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from transpiler import grad, value_and_grad
from transpiler.__main__ import _use_colour, highlight, main

ROOT = pathlib.Path(__file__).resolve().parents[1]

# the user's simulation code: NumPy only, so an export of it needs nothing else
SIM = '''\
import math

import numpy as np

DT = 0.01
WEIGHTS = np.array([1.0, 2.0, 3.0])


def spring(x, k, c=0.5):
    return k * np.sin(x) + c * x


def energy(x, k):
    f = 1.0 * spring(x, k)  # inside an expression: a forward/backward pair, not inlined
    g = 1.0 * spring(x, 2.0, c=DT)
    return np.sum(WEIGHTS * f * g) + math.cos(DT * k)


def final_energy(k, x0):
    x, v = x0, 0.0
    for step in range(50):
        v = v - DT * k * math.sin(x)
        x = x + DT * v
    return 0.5 * v * v + k * (1.0 - math.cos(x))


def scaled(x, n=2, *, scale=0.5):
    return np.sum(x ** n) * scale


def make(k):
    def inner(x):
        return np.sum(x * k)
    return inner


closure = make(2.0)


def uses_try(x):
    try:
        y = x * 2.0
    except ValueError:
        y = x
    except TypeError:
        y = x
    return y
'''

# a user rule with a bug that only the adjoint hits (its partial has the wrong orientation)
RULES = '''\
import math

import numpy as np

from transpiler import adjoint, d


def apply(W, x):
    return W @ x


@adjoint(apply)
def adj_apply(ans, W, x):
    d[x] = d[ans] @ W.T  # wrong: d[ans] @ W


def loss(W, x):
    y = apply(W, np.tanh(x))
    return np.sum(y ** 2)


def helper(W, x):
    y = apply(W, x)
    return np.sum(y ** 2)


def outer_loss(W, x):
    h = np.tanh(x)
    return helper(W, h) + np.sum(h)


def cube(x):
    return x ** 3


@adjoint(cube)
def adj_cube(ans, x):
    d[x] = d[ans] * 2.0 * x ** 2  # wrong: 3 x**2


def cubes(x):
    return np.sum(cube(x))


def softabs(x):
    return math.sqrt(x * x + 1.0)


@adjoint(softabs)
def adj_softabs(ans, x):
    d[x] = d[ans] * x / math.sqrt(ans - 2.0)  # wrong: / ans (a domain error for |x| < 1.7)


def scalar_loss(x):
    s = softabs(x)
    return s * 2.0
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    (folder / "cli_sim.py").write_text(SIM)
    (folder / "cli_rules.py").write_text(RULES)
    return folder


def _import(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def sim(project):
    return _import(project / "cli_sim.py", "cli_sim")


@pytest.fixture(scope="module")
def rules(project):
    from transpiler.rules.registry import ADJOINTS

    module = _import(project / "cli_rules.py", "cli_rules")
    yield module
    for function in (module.apply, module.cube, module.softabs):  # the rule tables are global
        ADJOINTS.pop(function, None)


def cli(cwd, *argv, env=None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("NO_COLOR", "TRANSPILER_DUMP")}
    environment["PYTHONPATH"] = str(ROOT)
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "transpiler", *argv], cwd=cwd,
                          capture_output=True, text=True, env=environment, timeout=120)


# Command lines run as real processes, all at once on first use (each start imports NumPy and
# SciPy, about a second of CPU, so they overlap); the other bad inputs go through main() here.
BAD_IN_PROCESSES = {
    "missing file": (["show", "missing.py:f"], ["no such file: missing.py"]),
    "unknown option": (["show", "cli_sim.py:energy", "--bogus"],
                       ["unrecognized arguments: --bogus"]),
}
BAD_INPUTS = {
    "missing function": (["show", "cli_sim.py:nothing"], ["defines no function 'nothing'",
                                                          "energy"]),
    "no function named": (["show", "cli_sim.py"], ["expected FILE.py:FUNCTION"]),
    "unknown --wrt": (["show", "cli_sim.py:energy", "--wrt", "z"], ["no parameter named 'z'",
                                                                    "x, k"]),
    "--wrt out of range": (["show", "cli_sim.py:energy", "--wrt", "5"], ["wrt=5"]),
    "--args NameError": (["check", "cli_sim.py:energy", "--args", "np.ones(3), undefined"],
                         ["--args", "NameError"]),
    "--args SyntaxError": (["check", "cli_sim.py:energy", "--args", "np.ones(3"],
                           ["--args", "SyntaxError"]),
    "--args do not fit": (["export", "cli_sim.py:energy", "--args", "np.ones(3)", "-o", "x.py"],
                          ["do not fit energy", "'k'"]),
    "check without --args": (["check", "cli_sim.py:energy"], ["--args"]),
    "unwritable output": (["export", "cli_sim.py:energy", "-o", "no/such/dir/out.py"],
                          ["cannot write"]),
    "--value in forward mode": (["export", "cli_sim.py:energy", "-o", "f.py", "--mode",
                                 "forward", "--value"], ["--value is for reverse mode"]),
}


@pytest.fixture(scope="module")
def runs(project, tmp_path_factory):
    exported = tmp_path_factory.mktemp("exported")
    twins = [tmp_path_factory.mktemp("twin") for _ in range(2)]
    target = str(project / "cli_sim.py") + ":energy"
    commands = {key: (project, argv) for key, (argv, _) in BAD_IN_PROCESSES.items()}
    commands.update({
        "help": (project, ["--help"]),
        "show": (project, ["show", "cli_sim.py:energy", "--wrt", "x,k"]),
        "show args": (project, ["show", "cli_sim.py:final_energy", "--args", "2.0, 0.5"]),
        "show try": (project, ["show", "cli_sim.py:uses_try"]),
        "check agrees": (project, ["check", "cli_sim.py:energy", "--wrt", "x,k", "--args",
                                   "np.linspace(0.1, 0.9, 3), 1.5"]),
        "check disagrees": (project, ["check", "cli_rules.py:cubes", "--args",
                                      "np.array([0.5, 1.0, 2.0])"]),
        "export closure": (project, ["export", "cli_sim.py:closure", "-o",
                                     str(exported / "c.py")]),
        "export energy": (project, ["export", "cli_sim.py:energy", "-o",
                                    str(exported / "energy_grad.py"), "--wrt", "x,k"]),
        "export final": (project, ["export", "cli_sim.py:final_energy", "-o",
                                   str(exported / "final_grad.py"), "--value", "--args",
                                   "2.0, 0.5"]),
        "export scaled": (project, ["export", "cli_sim.py:scaled", "-o",
                                    str(exported / "scaled_grad.py")]),
        "export forward": (project, ["export", "cli_sim.py:energy", "-o",
                                     str(exported / "energy_jvp.py"), "--wrt", "x,k", "--mode",
                                     "forward"]),
        "show forward": (project, ["show", "cli_sim.py:energy", "--mode", "forward"]),
        "check forward": (project, ["check", "cli_sim.py:energy", "--wrt", "x,k", "--args",
                                    "np.linspace(0.1, 0.9, 3), 1.5", "--mode", "forward"]),
    })
    for i, twin in enumerate(twins):  # the same command in two folders: the same bytes
        commands[f"twin {i}"] = (twin, ["export", target, "--wrt", "k", "--args",
                                        "np.ones(3), 1.5", "-o", "g.py"])
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        futures = {key: pool.submit(cli, cwd, *argv) for key, (cwd, argv) in commands.items()}
        results = {key: future.result() for key, future in futures.items()}
    results["exported"], results["twins"] = exported, twins
    return results


@pytest.fixture
def run_main(project, monkeypatch, capsys, sim):
    """``main(argv)`` in this process, from the project folder: (exit code, stdout, stderr)."""
    monkeypatch.chdir(project)
    monkeypatch.setattr(sys, "path", list(sys.path))  # main() puts the file's folder on it
    monkeypatch.setitem(sys.modules, "cli_sim", sim)  # and loads the file as a module

    def run(*argv):
        capsys.readouterr()
        try:
            code = main(list(argv))
        except SystemExit as e:  # argparse's own errors and --help
            code = e.code
        out, err = capsys.readouterr()
        return code, out, err
    return run


# --- help -----------------------------------------------------------------------------------------

def test_help_lists_the_commands(runs):
    result = runs["help"]
    assert result.returncode == 0
    for command in ("show", "export", "check", "coverage"):
        assert command in result.stdout


@pytest.mark.parametrize("command", ["show", "export", "check", "coverage"])
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    assert "usage: python -m transpiler " + command in capsys.readouterr().out


# --- show -----------------------------------------------------------------------------------------

def test_show_prints_the_source_plain_when_piped(runs, sim):
    result = runs["show"]
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip("\n") == grad(sim.energy, wrt=("x", "k")).source
    assert "\x1b[" not in result.stdout


def test_show_args_shows_the_variant_they_run(runs, sim, run_main):
    result = runs["show args"]
    assert result.returncode == 0, result.stderr
    expected = grad(sim.final_energy).source_for(2.0, 0.5)
    assert result.stdout.rstrip("\n") == expected
    assert expected != grad(sim.final_energy).source  # Python numbers: their own variant
    code, out, _ = run_main("show", "cli_sim.py:final_energy", "--value", "--mode", "reverse")
    assert code == 0 and "def value_and_grad_final_energy" in out


def test_show_colour(run_main, monkeypatch):
    code, out, _ = run_main("show", "cli_sim.py:final_energy", "--color", "always")
    assert code == 0
    assert "\x1b[1;35mdef\x1b[0m" in out and "\x1b[2;37m# grad of:" in out
    coloured = highlight("for i in x:  # c\n    y = 'a' + 1")
    assert "\x1b[1;35mfor\x1b[0m" in coloured and "\x1b[36m1\x1b[0m" in coloured
    assert "\x1b[32m'a'\x1b[0m" in coloured and "\x1b[2;37m# c\x1b[0m" in coloured

    class Terminal:
        def __init__(self, tty):
            self.tty = tty

        def isatty(self):
            return self.tty

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert _use_colour("auto", Terminal(True))
    assert not _use_colour("auto", Terminal(False))  # piped
    assert not _use_colour("never", Terminal(True))
    assert _use_colour("always", Terminal(False))
    monkeypatch.setenv("NO_COLOR", "1")
    assert not _use_colour("auto", Terminal(True))


# --- bad inputs -----------------------------------------------------------------------------------

@pytest.mark.parametrize("key", BAD_IN_PROCESSES)
def test_bad_input_exits_with_code_2_without_traceback(runs, key):
    result = runs[key]
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    for word in BAD_IN_PROCESSES[key][1]:
        assert word in result.stderr


@pytest.mark.parametrize("key", BAD_INPUTS)
def test_bad_input_is_a_usage_error(run_main, key):
    code, _, err = run_main(*BAD_INPUTS[key][0])
    assert code == 2, err
    for word in BAD_INPUTS[key][1]:
        assert word in err


def test_transpile_error_fails_with_exit_code_1(runs, run_main):
    result = runs["show try"]
    assert result.returncode == 1
    assert "'try' with more than one 'except' is not supported" in result.stderr
    assert "Traceback" not in result.stderr
    assert "cli_sim.py:" in result.stderr  # located
    code, _, err = run_main("check", "cli_sim.py:uses_try", "--args", "1.0")
    assert code == 1 and "'try' with more than one 'except' is not supported" in err


# --- check ----------------------------------------------------------------------------------------

def test_check_agrees(runs):
    result = runs["check agrees"]
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("x: shape (3,), max abs error ") and "max rel error" in lines[0]
    assert lines[1].startswith("k: shape (), max abs error ")
    assert lines[-1].startswith("ok: the gradient agrees with central finite differences")


def test_show_and_check_in_forward_mode(runs):
    shown = runs["show forward"]
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("def jvp_energy(x, k, *, dx):")  # --wrt 0: x's tangent
    assert "spring_jvp.call(" in shown.stdout  # the helper in forward mode
    checked = runs["check forward"]
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.splitlines()[-1].startswith("ok: the gradient agrees")


def test_check_disagrees_with_a_wrong_rule(runs):
    result = runs["check disagrees"]
    assert result.returncode == 1
    assert "MISMATCH: x[2]: compiled 8, finite differences 12" in result.stdout


# --- export ---------------------------------------------------------------------------------------

# runs an exported module with 'import transpiler' failing; writes what it computes to a file
_STANDALONE = """
import sys
sys.modules["transpiler"] = None  # import transpiler fails from here on
import numpy as np
import energy_grad, energy_jvp, final_grad, scaled_grad
x, k = np.linspace(0.1, 0.9, 3), 1.5
gx, gk = energy_grad.grad_energy(x, k)
value, gfin = final_grad.value_and_grad_final_energy(2.0, 0.5)
fvalue, ftangent = energy_jvp.jvp_energy(x, 1.5, dx=np.ones(3), dk=0.5)
gs = scaled_grad.grad_scaled(x)
gs3 = scaled_grad.grad_scaled(x, 3, scale=2.0)
assert sys.modules["transpiler"] is None
assert not [m for m in sys.modules if m.startswith("transpiler.")]
np.savez(sys.argv[1], gx=gx, gk=gk, value=value, gfin=gfin, gs=gs, gs3=gs3, fvalue=fvalue,
         ftangent=ftangent)
"""


def test_export_runs_without_the_transpiler(runs, project, sim, tmp_path):
    out = runs["exported"]
    for key, name in (("export energy", "energy_grad.py"), ("export final", "final_grad.py"),
                      ("export scaled", "scaled_grad.py"), ("export forward", "energy_jvp.py")):
        assert runs[key].returncode == 0, runs[key].stderr
        assert runs[key].stdout.startswith(f"wrote {out / name}: ")
    text = (out / "energy_grad.py").read_text()
    assert text.startswith("# grad_energy: the gradient of energy (cli_sim.py:energy, line 13)")
    assert "#     python -m transpiler export cli_sim.py:energy -o " in text  # how to regenerate
    assert "import transpiler" not in text and "from transpiler" not in text
    assert "import runtime as rt" in text and "from cli_sim import DT, WEIGHTS\n" in text
    assert "def spring_forward(" in text and "def spring_forward_2(" in text  # two pairs
    assert "grad_scaled.__kwdefaults__ = {'scale': 0.5}" in (out / "scaled_grad.py").read_text()

    env = {"PYTHONPATH": os.pathsep.join([str(out), str(ROOT), str(project)])}
    saved = tmp_path / "results.npz"
    run = subprocess.run([sys.executable, "-c", _STANDALONE, str(saved)], cwd=tmp_path,
                         capture_output=True, text=True, env={**os.environ, **env}, timeout=60)
    assert run.returncode == 0, run.stderr
    got = np.load(saved)
    x, k = np.linspace(0.1, 0.9, 3), 1.5
    gx, gk = grad(sim.energy, wrt=("x", "k"))(x, k)
    value, gfin = value_and_grad(sim.final_energy)(2.0, 0.5)
    np.testing.assert_array_equal(got["gx"], gx)
    assert float(got["gk"]) == gk and float(got["value"]) == value and float(got["gfin"]) == gfin
    np.testing.assert_array_equal(got["gs"], grad(sim.scaled)(x))
    np.testing.assert_array_equal(got["gs3"], grad(sim.scaled)(x, 3, scale=2.0))
    assert float(got["ftangent"]) == pytest.approx(float(np.sum(gx) + 0.5 * gk), rel=1e-12)
    assert float(got["fvalue"]) == float(sim.energy(x, k))
    assert "def jvp_energy(x, k, *, dx, dk):" in (out / "energy_jvp.py").read_text()


def test_export_is_deterministic(runs):
    texts = []
    for i, folder in enumerate(runs["twins"]):
        assert runs[f"twin {i}"].returncode == 0, runs[f"twin {i}"].stderr
        texts.append((folder / "g.py").read_bytes())
    assert texts[0] == texts[1]  # two processes, the same bytes
    assert b"the variant for arguments like (np.ones(3), 1.5)" in texts[0]


def test_export_refuses_a_closure_over_a_local_value(runs):
    result = runs["export closure"]
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "cannot export inner" in result.stderr and "'k'" in result.stderr
    assert "closes over" in result.stderr and not (runs["exported"] / "c.py").exists()


def test_export_to_stdout(run_main):
    code, text, _ = run_main("export", "cli_sim.py:spring", "-o", "-")
    assert code == 0
    assert text.startswith("# grad_spring: ") and "\ndef grad_spring(x, k, c):\n" in text
    assert "grad_spring.__defaults__ = (0.5,)" in text


# --- exceptions inside generated code name the user's line --------------------------------------

def _line_of(module, text: str) -> int:
    lines = pathlib.Path(module.__file__).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_adjoint_error_notes_the_user_line(rules):
    W, x = np.ones((4, 3)), np.ones(3)
    with pytest.raises(ValueError, match="matmul") as caught:  # the type is kept
        grad(rules.loss, wrt=1)(W, x)
    line = _line_of(rules, "y = apply(W, np.tanh(x))")
    assert caught.value.__notes__ == [
        f"in the gradient of {rules.__file__}:{line}: y = apply(W, np.tanh(x))"]
    shown = "".join(traceback.format_exception(caught.value))
    assert f'File "<grad of loss at {rules.__file__}:' in shown  # generated lines are shown
    assert "by @ W.T" in shown


def test_error_in_a_helper_backward_names_the_helper_line(rules):
    W, x = np.ones((4, 3)), np.ones(3)
    with pytest.raises(ValueError) as caught:
        grad(rules.outer_loss, wrt=1)(W, x)
    line = _line_of(rules, "y = apply(W, x)")
    assert caught.value.__notes__ == [
        f"in the gradient of {rules.__file__}:{line}: y = apply(W, x)"]
    assert "helper_backward" in "".join(traceback.format_exception(caught.value))


def test_error_on_the_fast_float_path_is_noted_once(rules):
    df = grad(rules.scalar_loss)
    line = _line_of(rules, "s = softabs(x)")
    for _ in range(2):  # the first call compiles; the second takes the all-floats fast path
        with pytest.raises(ValueError, match="math domain error") as caught:
            df(0.5)
        assert caught.value.__notes__ == [
            f"in the gradient of {rules.__file__}:{line}: s = softabs(x)"]


def test_errors_outside_generated_code_get_no_note(sim):
    with pytest.raises(TypeError) as caught:
        grad(sim.energy)(np.ones(3, dtype=int), 1.0)  # refused before the generated code runs
    assert not getattr(caught.value, "__notes__", None)


def test_error_in_the_recomputed_primal_is_located(tmp_path):
    source = textwrap.dedent("""\
        import numpy as np


        def mismatch(x, y):
            z = np.sin(x)
            return np.sum(z @ y)
        """)
    path = tmp_path / "cli_primal.py"
    path.write_text(source)
    module = _import(path, "cli_primal")
    with pytest.raises(ValueError) as caught:
        grad(module.mismatch)(np.ones(3), np.ones(4))
    assert caught.value.__notes__ == [
        f"in {path}:6 (computed again by the gradient): return np.sum(z @ y)"]


# --- the user's module sees its own argv; coverage --update says what it changed ---------------

def test_the_user_s_module_sees_its_own_path_as_argv(tmp_path, capsys):
    script = tmp_path / "reads_argv.py"
    script.write_text("import sys\nimport numpy as np\n"
                      "SEEN = list(sys.argv)\n"
                      "N = int(sys.argv[1]) if len(sys.argv) > 1 else 3\n"
                      "def loss(x):\n    return np.sum(x ** 2) * N\n")
    before = list(sys.argv)
    for command in (["show", f"{script}:loss"],
                    ["memory", f"{script}:loss", "--args", "np.ones(3)"],
                    ["check", f"{script}:loss", "--args", "np.ones(3)"]):
        assert main(command) == 0, capsys.readouterr().err
        assert sys.modules["reads_argv"].SEEN == [str(script)]
        assert sys.argv == before  # (restored)


def test_coverage_update_says_what_it_changed(tmp_path, capsys):
    from transpiler.coverage import markdown

    page = tmp_path / "page.md"
    section = markdown()
    page.write_text("# page\n" + section + "\nafter\n")
    assert main(["coverage", "--update", str(page)]) == 0
    assert "up to date" in capsys.readouterr().out
    page.write_text("# page\n" + section.replace("`sinc`, ", "", 1) + "\nafter\n")
    assert main(["coverage", "--update", str(page)]) == 0
    out = capsys.readouterr().out
    assert "updated" in out and "+1: sinc" in out
    assert page.read_text() == "# page\n" + section + "\nafter\n"
