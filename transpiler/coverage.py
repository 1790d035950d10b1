"""What the rule tables cover, read from the tables themselves."""

from __future__ import annotations

from transpiler.rules.registry import ADJOINTS, key_name


def supported() -> list[str]:
    """Sorted names of every function and operator that has an adjoint rule."""
    return sorted({key_name(key) for key in ADJOINTS})
