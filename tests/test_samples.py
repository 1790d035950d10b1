"""Every sample script runs to completion and prints what it promises."""

import pathlib
import subprocess
import sys

import pytest

SAMPLES = sorted((pathlib.Path(__file__).parent.parent / "samples").glob("*.py"))


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_sample_runs(path):
    result = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


def test_quickstart_prints_a_gradient_and_its_source():
    path = next(p for p in SAMPLES if p.stem == "quickstart")
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                         check=True).stdout
    assert "d energy / dx" in out and "def grad_energy(x, k):" in out
    assert "# grad of:" in out
