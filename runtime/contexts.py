"""What a ``with`` statement of a differentiated function runs under."""

from __future__ import annotations


class unsuppressed:  # noqa: N801 (used like the context manager it wraps)
    """``with rt.unsuppressed(manager) as v:`` enters and exits ``manager`` as ``with manager
    as v:`` does, but an exception the manager would swallow is raised instead: the gradient
    of a block left midway is not defined (its adjoint would run statements that did not)."""

    def __init__(self, manager):
        self.manager = manager
        kind = type(manager)
        if not (hasattr(kind, "__enter__") and hasattr(kind, "__exit__")):
            raise TypeError(f"'{kind.__name__}' object does not support the context manager "
                            "protocol")
        self._exit = kind.__exit__  # looked up on the type when entered, as 'with' does

    def __enter__(self):
        return type(self.manager).__enter__(self.manager)

    def __exit__(self, kind, value, traceback):
        if self._exit(self.manager, kind, value, traceback) and kind is not None:
            raise RuntimeError(f"{self.manager!r} suppressed {kind.__name__}: {value}; a "
                               "differentiated block left midway has no gradient (handle the "
                               "error outside the differentiated function)") from value
        return False
