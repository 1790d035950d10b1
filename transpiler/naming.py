"""Deterministic names for generated code (Griewank's conventions).

The adjoint of ``x`` is ``bx``, the tangent ``dx``, temporaries are ``_t1, _t2, ...``. A name
the user already uses is never handed out; the same input always gives the same names.
"""

from __future__ import annotations

import types


def function_name(func) -> str:
    """``func``'s name as generated code spells names after it: ``lambda_fn`` for a lambda."""
    name = getattr(func, "__name__", "")
    return name if name.isidentifier() else "lambda_fn"


class Namer:
    def __init__(self, taken: set[str]):
        self.taken = set(taken)
        self._grads: dict[str, str] = {}
        self._vars: dict[str, str] = {}  # gradient -> its variable
        self._tangents: dict[str, str] = {}
        self._temps = 0

    def fresh(self, base: str) -> str:
        """``base`` itself if free, else ``base_1``, ``base_2``, ..."""
        name, k = base, 0
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name

    def temp(self) -> str:
        while True:
            self._temps += 1
            name = f"_t{self._temps}"
            if name not in self.taken:
                self.taken.add(name)
                return name

    def is_grad(self, name: str) -> bool:
        return name in self._vars

    def var_of(self, grad: str) -> str:
        """The variable whose adjoint is ``grad``."""
        return self._vars[grad]

    def variable(self, name: str) -> str:
        """The variable whose gradient or tangent ``name`` is (itself if neither)."""
        if name in self._vars:
            return self._vars[name]
        return next((v for v, t in self._tangents.items() if t == name), name)

    def grad(self, var: str) -> str:
        """The adjoint variable of ``var`` (always the same one for the same ``var``)."""
        if var not in self._grads:
            self._grads[var] = self.fresh(f"b{var}")
            self._vars[self._grads[var]] = var
        return self._grads[var]

    def tangent(self, var: str) -> str:
        """The tangent variable of ``var`` (always the same one for the same ``var``)."""
        if var not in self._tangents:
            self._tangents[var] = self.fresh(f"d{var}")
        return self._tangents[var]

    def derivative_pairs(self) -> list[tuple[str, str]]:
        """``(variable, its gradient or tangent name)`` for every such name given so far."""
        return [*self._grads.items(), *self._tangents.items()]

    def name_tangent(self, var: str, name: str) -> None:
        """Make ``name`` the tangent variable of ``var`` (a tangent parameter named before)."""
        self._tangents[var] = name
        self.taken.add(name)


def tangent_parameters(fn, wrt: tuple[str, ...]) -> dict[str, str]:
    """The keyword-only parameters through which a forward-mode function of ``fn`` receives the
    tangents of ``wrt``: ``dx`` for ``x`` unless ``fn`` (or a function of its module it calls,
    which may be inlined) uses that name. Computed from the code objects alone, so a caller
    knows them before (or while) ``fn`` is compiled."""
    names, codes, seen = set(), [fn.__code__], set()
    scope = getattr(fn, "__globals__", {})
    while codes:  # nested functions, lambdas and comprehensions too, and the module's
        code = codes.pop()  # functions it calls (inlined, their globals are read here)
        if id(code) in seen:
            continue
        seen.add(id(code))
        names |= {*code.co_varnames, *code.co_names, *code.co_freevars, *code.co_cellvars}
        codes += [c for c in code.co_consts if hasattr(c, "co_varnames")]
        codes += [v.__code__ for v in map(scope.get, code.co_names)
                  if isinstance(v, types.FunctionType) and v.__globals__ is scope]
    namer = Namer(names)
    return {w: namer.tangent(w) for w in wrt}
