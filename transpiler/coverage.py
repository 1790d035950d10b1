"""What the rule tables cover, read from the tables themselves.

``python -m transpiler coverage`` prints the README's coverage section; a test keeps the README
equal to it, so the list is never maintained by hand.
"""

from __future__ import annotations

from transpiler.rules.nondiff import NONDIFF
from transpiler.rules.registry import ADJOINTS, key_name

BEGIN, END = "<!-- coverage:begin -->", "<!-- coverage:end -->"


def supported() -> list[str]:
    """Sorted names of every function and operator that has an adjoint rule."""
    return sorted({key_name(key) for key in ADJOINTS})


def markdown() -> str:
    """The coverage section of the README, between its markers."""
    groups: dict[str, list[str]] = {}
    for name in supported():
        if name.startswith("operator "):
            group, short = "operators", name.removeprefix("operator ")
        elif "." in name:
            group, short = name.rsplit(".", 1)
        else:
            group, short = "builtins", name
        groups.setdefault(group, []).append(short)
    lines = [BEGIN, f"{len(supported())} functions and operators have reverse-mode rules:", ""]
    for group in sorted(groups):
        lines.append(f"- **{group}**: " + ", ".join(f"`{n}`" for n in groups[group]))
    nondiff = sorted({key_name(k) for k in NONDIFF})
    lines += ["", f"{len(nondiff)} functions are known to be non-differentiable (their result "
              "carries no gradient; calling them on differentiated values is fine):", "",
              ", ".join(f"`{n}`" for n in nondiff), END]
    return "\n".join(lines)
