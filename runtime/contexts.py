"""What a ``with`` statement of a differentiated function runs under."""

from __future__ import annotations


class unsuppressed:  # noqa: N801 (used like the context manager it wraps)
    """``with rt.unsuppressed(manager) as v:`` enters and exits ``manager`` as ``with manager
    as v:`` does, but an exception the manager would swallow is raised instead: the gradient
    of a block left midway is not defined (its adjoint would run statements that did not)."""

    def __init__(self, manager):
        self.manager = manager

    def __enter__(self):
        return self.manager.__enter__()

    def __exit__(self, kind, value, traceback):
        if self.manager.__exit__(kind, value, traceback) and kind is not None:
            raise RuntimeError(f"{self.manager!r} suppressed {kind.__name__}: {value}; a "
                               "differentiated block left midway has no gradient (handle the "
                               "error outside the differentiated function)") from value
        return False
