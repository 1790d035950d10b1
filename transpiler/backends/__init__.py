"""The backend seam: how the compiler's final tree becomes functions one can call.

A backend is a module or object with

- ``NAME``: what ``Options.backend`` says to choose it;
- ``source(tree, bindings) -> str``: the text of the tree as the code the backend runs (what
  ``.source`` shows; ``bindings`` are the values the code refers to by name, which the backend
  may add to);
- ``load(text, names, label, fn, bindings) -> list``: the functions ``names`` of that text,
  living in ``fn``'s module (``label`` names them in tracebacks, ``bindings`` are the values
  the code refers to by name: rules' modules, the user's closure);
- ``fast_path(fn, compiled, kinds, keywords, slow) -> callable | None``: a function taking
  ``fn``'s arguments that calls ``compiled.function`` directly when given positional arguments
  of ``kinds`` (``python.FLOAT``, ``python.NUMBER``, ``python.ArrayOf``) and exactly
  ``keywords`` while ``compiled`` is not stale, and ``slow`` otherwise (None: no such path).

The passes produce one tree whatever the backend; a new backend (native code, another array
library) is a new entry here, listed in ``BACKENDS``: Python (the default and the reference),
Numba (``native.py``: the same code compiled with ``numba.njit``, refusing what Numba cannot
compile) and ``auto`` (Numba where it compiles, Python otherwise).
"""

from __future__ import annotations

from transpiler.backends import native, python

BACKENDS = {python.NAME: python, "numba": native.Backend("numba", fallback=False),
            "auto": native.Backend("auto", fallback=True)}


def backend_for(options):
    """The backend that ``options.backend`` names."""
    try:
        return BACKENDS[options.backend]
    except KeyError:
        raise ValueError(f"unknown backend {options.backend!r}; the backends are: "
                         + ", ".join(sorted(BACKENDS))) from None


def check_backend(name: str) -> None:
    """Refuse, when a gradient is asked for, a backend that is unknown or not installed."""
    backend_for_name = BACKENDS.get(name)
    if backend_for_name is None:
        raise ValueError(f"unknown backend {name!r}; the backends are: "
                         + ", ".join(sorted(BACKENDS)))
    if name == "numba":
        native.numba_module()
