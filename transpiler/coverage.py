"""What the rule tables cover, read from the tables themselves.

``python -m transpiler coverage`` prints the README's coverage section; a test keeps the README
equal to it, so the list is never maintained by hand.
"""

from __future__ import annotations

from transpiler.rules.nondiff import NONDIFF
from transpiler.rules.registry import (
    ADJOINTS,
    NEEDS_NEWER,
    REQUIREMENTS,
    SPARSE_ADJOINTS,
    TANGENTS,
    key_name,
)

BEGIN, END = "<!-- coverage:begin -->", "<!-- coverage:end -->"
# rules keyed by the helper a user's spelling compiles to (passes/resolve.py): listed as written
SPELLED = {"runtime.index_join": ("numpy.c_", "numpy.r_")}


def supported(requirements: bool = False) -> list[str] | dict[str, str | None]:
    """Sorted names of every function and operator that has an adjoint rule here (the methods of
    scipy.sparse matrices as ``sparse matrix.toarray``). With
    ``requirements=True``: a dict of every name that has a rule on some supported Python and
    NumPy (also those this interpreter lacks) to the version it needs (``"Python 3.11"``,
    ``"NumPy 2.0"``), or None where every supported version has it."""
    names = {key_name(key) for key in (*ADJOINTS, *SPARSE_ADJOINTS)} | set(NEEDS_NEWER)
    names = sorted({spelled for name in names for spelled in SPELLED.get(name, (name,))})
    if requirements:
        return {name: REQUIREMENTS.get(name) for name in names}
    return [name for name in names if name not in NEEDS_NEWER]


_LIBRARIES = ("numpy", "scipy", "math")


def library_functions(names) -> list[str]:
    """The names of NumPy, SciPy and ``math`` functions (and the differentiable builtins) among
    ``names``: what is compared with other tools (operators and our own helpers are not)."""
    builtin = {"abs", "sum", "min", "max", "pow", "float", "divmod"}
    return sorted(n for n in names if n.split(".")[0] in _LIBRARIES or n in builtin)


def autograd_supported() -> list[str] | None:
    """The same count for HIPS autograd, read from its own VJP table (None if not installed):
    every primitive with a reverse rule whose wrapped function is a NumPy/SciPy/math one."""
    try:
        import autograd.core
        import autograd.numpy  # noqa: F401  (importing registers the rules)
        import autograd.scipy.linalg  # noqa: F401
        import autograd.scipy.signal  # noqa: F401
        import autograd.scipy.special  # noqa: F401
        import autograd.scipy.stats  # noqa: F401
    except ImportError:
        return None
    wrapped = [getattr(p, "fun", None) for p in autograd.core.primitive_vjps]
    return library_functions({key_name(f) for f in wrapped if f is not None})


def comparison() -> str:
    """``python -m transpiler coverage --compare``: our count beside autograd's."""
    ours = library_functions(supported())
    lines = [f"transpiler: {len(ours)} NumPy/SciPy/math functions with reverse rules"]
    theirs = autograd_supported()
    if theirs is None:
        lines.append("autograd: not installed (pip install autograd to compare)")
    else:
        lines += [f"autograd:   {len(theirs)} NumPy/SciPy/math functions with reverse rules",
                  f"in both: {len(set(ours) & set(theirs))}; only autograd: "
                  + (", ".join(sorted(set(theirs) - set(ours))) or "none")]
    return "\n".join(lines)


def markdown() -> str:
    """The coverage section of the README, between its markers."""
    groups: dict[str, list[str]] = {}
    needs = supported(requirements=True)
    for name in needs:
        if name.startswith("operator "):
            group, short = "operators", name.removeprefix("operator ")
        elif "." in name:
            group, short = name.rsplit(".", 1)
        else:
            group, short = "builtins", name
        groups.setdefault(group, []).append(f"`{short}`" + (f" ({needs[name]}+)"
                                                             if needs[name] else ""))
    names = list(needs)
    missing = sum(1 for key in ADJOINTS if key not in TANGENTS)
    both = "every one of them also has a forward-mode (tangent) rule" if not missing else \
        f"all but {missing} of them also have a forward-mode (tangent) rule"
    lines = [BEGIN, f"{len(names)} functions and operators have reverse-mode rules, "
             f"{len(library_functions(names))} of them NumPy, SciPy and `math` functions "
             f"(and differentiable builtins); {both}:", ""]
    for group in sorted(groups):
        lines.append(f"- **{group}**: " + ", ".join(groups[group]))
    nondiff = sorted({key_name(k) for k in NONDIFF})
    lines += ["", f"{len(nondiff)} functions are known to be non-differentiable (their result "
              "carries no gradient; calling them on differentiated values is fine):", "",
              ", ".join(f"`{n}`" for n in nondiff), END]
    return "\n".join(lines)
