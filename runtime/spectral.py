"""The adjoints of the FFTs that are not an FFT call as they stand: a length changed by ``n=``
or ``s=``, and the real transforms.

The convention (transpiler/rules/complex_rules.py): the gradient of a real loss ``L`` at a
complex value ``z = x + iy`` is ``dL/dx - i dL/dy``, so the adjoint of a linear map is its
transpose, not its conjugate transpose. A DFT matrix is symmetric: the adjoint of ``fft`` is
``fft`` and of ``ifft`` is ``ifft``, with the same ``norm``. What is left is here:

- ``fitted(t, like)``: ``t`` cropped or padded with zeros to ``like``'s shape: the transpose of
  the cropping or padding ``n=`` and ``s=`` make (its own transpose too);
- ``unrfftn``: the adjoint of ``rfftn`` (and ``rfft``, ``rfft2``): the half spectrum padded
  with zeros to the full length, then ``fftn``;
- ``swapped_norm``: ``hfft`` is ``irfft`` of the conjugate, and ``ihfft`` the conjugate of
  ``rfft``, each with the other direction's ``norm``: their adjoints are those of the real
  transforms, conjugated;
- ``unirfftn``: the adjoint of ``irfftn`` (and ``irfft``, ``irfft2``), which reads each
  coefficient and, but for the first and the Nyquist one, its conjugate: ``rfft`` of the
  gradient, conjugated, weighted 1 or 2 and scaled by ``norm``, then ``ifftn`` over the other
  axes.

- ``unreal`` and ``real_transform``: the adjoints of SciPy's real transforms (``dct``,
  ``idct``, ``dst``, ``idst`` and their n-dimensional forms), each the other's: an orthonormal
  transform's transpose is its inverse, and the other norms scale the input and the output by
  diagonal factors (``_dct_scales``), so the transpose of a transform is the orthonormal
  inverse between the factors, swapped.

Each costs one FFT of the gradient: O(n log n).
"""

from __future__ import annotations

import math

import numpy as np


def fitted(t, like):
    """``t`` cropped or padded with zeros at the end of each axis to ``like``'s shape."""
    shape = np.shape(like)
    t = np.asarray(t)
    if t.shape == shape:
        return t
    crop = tuple(slice(0, min(a, b)) for a, b in zip(t.shape, shape, strict=True))
    if all(a >= b for a, b in zip(t.shape, shape, strict=True)):
        return t[crop]
    out = np.zeros(shape, t.dtype)
    out[crop] = t[crop]
    return out


def _axes(ndim: int, s, axes) -> list[int]:
    """The axes an n-dimensional FFT of an array of ``ndim`` dimensions transforms (NumPy's
    defaults: the last ``len(s)``, or all), each in ``range(ndim)``."""
    if axes is None:
        axes = range(-len(s), 0) if s is not None else range(ndim)
    return [int(a) % ndim for a in np.atleast_1d(axes)]


def _scale(n: int, norm) -> float:
    """The factor of an inverse transform of length ``n`` under ``norm``."""
    if norm is None or norm == "backward":
        return 1.0 / n
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if norm == "forward":
        return 1.0
    raise ValueError(f'norm must be "backward", "ortho" or "forward", not {norm!r}')


def swapped_norm(norm):
    """The ``norm`` of the transform in the other direction (``hfft`` is ``irfft`` of the
    conjugate with it): "backward" and "forward" swap, "ortho" stays."""
    return {None: "forward", "backward": "forward", "forward": "backward"}.get(norm, norm)


def unrfftn(g, a, s=None, axes=None, norm=None):
    """The adjoint of ``np.fft.rfftn(a, s, axes, norm)`` for ``a`` (real), given the gradient
    ``g`` of its result: the real part of ``fftn`` of ``g`` padded with zeros to the full length
    of the last axis, fitted to ``a``'s shape. Computed as the real transform it is: ``irfftn``
    (unscaled) of ``conj(g)``, each coefficient but the first and the Nyquist one halved
    (irfftn counts those twice, as themselves and as their conjugates)."""
    g = np.asarray(g)
    axes = _axes(np.ndim(a), s, axes)
    last = axes[-1]
    lengths = [int(n) for n in s] if s is not None else [np.shape(a)[k] for k in axes]
    n = lengths[-1]
    m = n // 2 + 1
    keep = [slice(None)] * g.ndim
    keep[last] = slice(0, min(m, g.shape[last]))
    half = np.conj(g[tuple(keep)])
    weights = np.full(half.shape[last], 0.5)
    weights[0] = 1.0
    if n % 2 == 0 and half.shape[last] == m:
        weights[-1] = 1.0
    shape = [1] * g.ndim
    shape[last] = half.shape[last]
    full = np.fft.irfftn(half * weights.reshape(shape), lengths, axes, norm="forward")
    scale = _scale(math.prod(lengths), {"ortho": "ortho", "forward": None}.get(norm, "forward"))
    return fitted(full * scale if scale != 1.0 else full, a)  # (rfftn's factor: 1, N^-1/2, 1/N)


def unirfftn(g, c, s=None, axes=None, norm=None):
    """The adjoint of ``np.fft.irfftn(c, s, axes, norm)`` for ``c``, given the (real) gradient
    ``g`` of its result: along the last axis ``w_k * scale * conj(rfft(g))_k`` (``w_k`` is 1
    for the first coefficient and, for an even length, the last, 2 otherwise: irfft reads the
    others twice, as themselves and as their conjugates), then ``ifftn`` over the other axes,
    fitted to ``c``'s shape."""
    g = np.asarray(g)
    axes = _axes(np.ndim(c), s, axes)
    last = axes[-1]
    n = g.shape[last]
    half = np.conj(np.fft.rfft(g, axis=last))
    weights = np.full(n // 2 + 1, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    shape = [1] * g.ndim
    shape[last] = n // 2 + 1
    half = half * (weights * _scale(n, norm)).reshape(shape)
    if len(axes) > 1:
        half = np.fft.ifftn(half, axes=axes[:-1], norm=norm)
    return fitted(half, c)


def _dct_scales(kind: str, type_: int, n: int, norm) -> tuple[np.ndarray, np.ndarray]:
    """The diagonal factors of SciPy's ``kind`` ("dct" or "dst") of ``type_`` and length ``n``
    under ``norm``: the transform is ``out * orthonormal(in * x)``."""
    out, into = np.ones(n), np.ones(n)
    if norm == "ortho":
        return out, into
    end = 0 if kind == "dct" else -1  # (the coefficient DCT-II and III treat apart; DST's last)
    if type_ == 1:
        out[:] = math.sqrt(2 * (n - 1)) if kind == "dct" else math.sqrt(2 * (n + 1))
        if kind == "dct":
            out[[0, -1]] *= math.sqrt(2)
            into[[0, -1]] = 1 / math.sqrt(2)
    elif type_ == 2:
        out[:] = math.sqrt(2 * n)
        out[end] = math.sqrt(4 * n)
    elif type_ == 3:
        into[:] = math.sqrt(2 * n)
        into[end] = math.sqrt(n)
    else:
        out[:] = math.sqrt(2 * n)
    if norm == "forward":
        out /= 2 * (n - 1) if (type_, kind) == (1, "dct") else 2 * (n + 1) if type_ == 1 \
            else 2 * n
    return out, into


def _transposed(g, kind: str, type_: int, norm, axis: int):
    """The transpose of SciPy's 1-D ``kind`` (dct, idct, dst, idst) along ``axis``, of ``g``."""
    import scipy.fft as sfft
    base = kind.lstrip("i")
    out, into = _dct_scales(base, type_, g.shape[axis], norm)
    shape = [1] * g.ndim
    shape[axis] = g.shape[axis]
    out, into = out.reshape(shape), into.reshape(shape)
    if kind.startswith("i"):  # (the inverse of out * O * into is 1/into * O^T * 1/out)
        return getattr(sfft, base)(g / into, type_, axis=axis, norm="ortho") / out
    return into * getattr(sfft, "i" + base)(out * g, type_, axis=axis, norm="ortho")


def unreal(g, x, kind: str, type=2, s=None, axes=None, norm=None):
    """The adjoint of ``scipy.fft.<kind>n(x, type, s, axes, norm)`` for ``x`` (``kind``: "dct",
    "idct", "dst" or "idst"; a 1-D transform as ``s=(n,)``, ``axes=(axis,)``), given the
    gradient ``g`` of its result: the transposed transform along each axis, fitted to ``x``'s
    shape."""
    g = np.asarray(g)
    for axis in _axes(np.ndim(x), s, axes):
        g = _transposed(g, kind, int(type), norm, axis)
    return fitted(g, x)


def real_transform(g, x, kind: str, type=2, s=None, axes=None, norm=None):
    """``scipy.fft.<kind>n(g, type, s, axes, norm)``: the transform ``unreal`` is the adjoint
    of (``x``, the argument it was taken of, for its number of axes), which is its adjoint in
    turn."""
    import scipy.fft as sfft
    return getattr(sfft, kind + "n")(g, int(type), s, _axes(np.ndim(x), s, axes), norm)
