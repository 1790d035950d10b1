"""Gradients through FFTs: what they cost beside the primal and a hand-written adjoint.

Run from the repository root::

    python -m tests.benchmarks.bench_spectral            # ~1 minute
    python -m tests.benchmarks.bench_spectral --quick

Not part of the test suite. Workloads, on real signals of 2^20 samples:

  1. a power-spectrum loss: the distance of ``|rfft(x)|^2`` to a target spectrum;
  2. a spectral derivative: ``du = real(ifft(1j * k * fft(u)))``, loss ``sum(du^2)``;
  3. a convolution by FFT: ``irfft(rfft(x) * rfft(h))``, loss ``sum(tanh(y))``.

The hand-written adjoints are what a careful person writes (an FFT per FFT of the primal). Each
gradient is checked against the hand-written one before it is timed; rows are timed round-robin
in one process (each round calls every row ``number`` times; the minimum over rounds is
reported). Target: the gradient of the power-spectrum loss at most 4x its primal (an adjoint
FFT is an FFT: O(n log n)).
"""

from __future__ import annotations

import argparse

import numpy as np

from tests.benchmarks.bench_call import table
from transpiler import grad

N = 2 ** 20


def power_loss(x, target):
    X = np.fft.rfft(x)
    return np.sum((np.abs(X) ** 2 - target) ** 2)


def power_hand(x, target):
    X = np.fft.rfft(x)
    p = X.real ** 2 + X.imag ** 2
    bX = 4.0 * (p - target) * X  # d/dX of (|X|^2 - t)^2 in dL/dRe - i dL/dIm, conjugated
    bX[1:(x.size + 1) // 2] *= 0.5  # (the half spectrum: the middle bins stand for two)
    return np.fft.irfft(bX, x.size) * x.size


def spectral(u, k):
    du = np.real(np.fft.ifft(1j * k * np.fft.fft(u)))
    return np.sum(du * du)


def spectral_hand(u, k):
    du = np.real(np.fft.ifft(1j * k * np.fft.fft(u)))
    return np.real(np.fft.fft(1j * k * np.fft.ifft(2.0 * du)))


def convolve(x, h):
    n = x.size
    y = np.fft.irfft(np.fft.rfft(x) * np.fft.rfft(h), n)
    return np.sum(np.tanh(y))


def convolve_hand(x, h):
    n = x.size
    H = np.fft.rfft(h)
    y = np.fft.irfft(np.fft.rfft(x) * H, n)
    by = 1.0 - np.tanh(y) ** 2
    return np.fft.irfft(np.fft.rfft(by) * np.conj(H), n)  # (a circular correlation with h)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    quick = parser.parse_args().quick
    rounds, number = (3, 1) if quick else (7, 2)
    rng = np.random.default_rng(0)
    x = rng.normal(size=N)
    target = np.abs(np.fft.rfft(rng.normal(size=N))) ** 2
    k = np.fft.fftfreq(N, d=1.0 / N)
    h = np.exp(-np.arange(N) / 50.0)
    h /= h.sum()
    for name, f, hand, args in (("power-spectrum loss", power_loss, power_hand, (x, target)),
                                ("spectral derivative", spectral, spectral_hand, (x, k)),
                                ("FFT convolution", convolve, convolve_hand, (x, h))):
        df = grad(f)
        np.testing.assert_allclose(df(*args), hand(*args), rtol=1e-8,
                                   atol=1e-8 * np.max(np.abs(hand(*args))))
        table(f"{name}, 2^20 samples", {
            "primal": lambda f=f, args=args: f(*args),
            "hand-written gradient": lambda hand=hand, args=args: hand(*args),
            "grad(f)": lambda df=df, args=args: df(*args),
        }, number, rounds, "primal")


if __name__ == "__main__":
    main()
