"""The backend seam: how the compiler's final tree becomes functions one can call.

A backend is a module with

- ``NAME``: what ``Options.backend`` says to choose it;
- ``source(tree) -> str``: the text of the tree as the code the backend runs (what ``.source``
  shows);
- ``load(text, names, label, fn, bindings) -> list``: the functions ``names`` of that text,
  living in ``fn``'s module (``label`` names them in tracebacks, ``bindings`` are the values
  the code refers to by name: rules' modules, the user's closure);
- ``fast_path(fn, compiled, count, keywords, slow) -> callable | None``: a function taking
  ``fn``'s arguments that calls ``compiled.function`` directly when given ``count`` Python
  floats and exactly ``keywords``, and ``slow`` otherwise (None: no such path).

The passes produce one tree whatever the backend; a new backend (native code, another array
library) is a new module here, listed in ``BACKENDS``. Python is the only one for now.
"""

from __future__ import annotations

from transpiler.backends import python

BACKENDS = {python.NAME: python}


def backend_for(options):
    """The backend module that ``options.backend`` names."""
    try:
        return BACKENDS[options.backend]
    except KeyError:
        raise ValueError(f"unknown backend {options.backend!r}; the backends are: "
                         + ", ".join(sorted(BACKENDS))) from None
