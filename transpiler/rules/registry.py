"""The rule tables and the contract every rule follows.

An adjoint rule is a template: a plain Python function whose body is copied into the generated
adjoint, with its parameters replaced by the names at the call site.

- The first parameter is the primal's result, always named ``ans``. (``out`` would collide with
  NumPy's ``out=`` keyword.) The others mirror the primal's parameter names, order and keyword
  defaults, so a call site binds to the template exactly as it binds to the function.
- ``d[ans]`` reads the gradient arriving at the result. ``d[x] = expr`` states the partial
  contribution of this call to the gradient of parameter ``x``. The compiler accumulates partials
  and drops those of inactive or constant arguments; a rule never accumulates.
- ``if p is None:`` / ``if p is not None:`` on a parameter is decided at compile time, so one
  template serves optional arguments (``math.log(x[, base])``).
- Every partial of an argument that can broadcast is wrapped in ``rt.unbroadcast(..., x)``.
- Other names in the body resolve in the rule module's globals (``np``, ``math``, ``rt``).

A tangent rule (forward mode) is a template of the same shape: ``d[x]`` reads the tangent of
argument ``x`` and each ``d[ans] = term`` states one term of the result's tangent. The compiler
sums the terms, drops a term whose tangents are all of inactive or constant arguments, and gives
an inactive argument a zero tangent (``rt.zeros_tangent(x)``) in a term that reads several. Every
term has the shape of ``ans``: a term that passes an argument's tangent through unchanged, where
that argument can broadcast, is wrapped in ``rt.broadcast(term, ans)``. ``ans`` is computed before
the tangent and may be read.

Keys are callables (``np.sin``), gast operator classes (``gast.Mult``) or descriptors
(``np.ndarray.T``). A key without a rule raises NoRuleError at compile time, naming the call.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import sys
import textwrap
from collections import ChainMap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gast
import numpy as np

from transpiler import ast_util as A
from transpiler.anno import Anno, setanno
from transpiler.errors import NoRuleError, error_at
from transpiler.rules.nondiff import NONDIFF


class _GradOf:
    """The ``d`` in templates. It only exists so rule modules are valid, lint-clean Python."""

    def __getitem__(self, key):
        raise RuntimeError("d[...] is only meaningful inside a rule template")

    def __setitem__(self, key, value):
        raise RuntimeError("d[...] is only meaningful inside a rule template")


d = _GradOf()


class Rule:
    """A key's template: its body (gast statements), signature and place, parsed and checked
    against the contract above when the rule is first used. The built-in tables hold some two
    thousand templates, whose parsing would otherwise be most of the package's import time; a
    rule registered elsewhere (yours) is parsed at once, so a broken one fails where it is
    registered (and the tests parse every built-in one)."""

    __slots__ = ("key", "template", "_source", "_parsed")

    def __init__(self, key: Any, template: Callable, body: list | None = None,
                 signature: inspect.Signature | None = None, filename: str = "",
                 lineno: int = 0, *, source: Template | None = None):
        self.key, self.template, self._source = key, template, source
        self._parsed = None if body is None else (body, signature, filename, lineno)

    def _parts(self) -> tuple:
        if self._parsed is None:
            self._parsed = self._source.parts()
        return self._parsed

    @property
    def body(self) -> list:  # gast statements of the template body
        return self._parts()[0]

    @property
    def signature(self) -> inspect.Signature:
        return self._parts()[1]

    @property
    def filename(self) -> str:
        return self._parts()[2]

    @property
    def lineno(self) -> int:
        return self._parts()[3]

    @property
    def params(self) -> list[str]:
        return list(self.signature.parameters)

    @property
    def namespace(self) -> ChainMap:
        return namespace_of(self.template)


class Template:
    """A registered template function, parsed when one of its rules is first used. The objects
    its calls' dotted names mean are noted at registration (``np.cos`` -> the function): parsed
    later, while a module's function is rebound (a test's mock), its calls must still resolve
    to the functions they meant, so that the instantiation sees the rebinding and calls those.
    """

    __slots__ = ("function", "forward", "meant", "_parts")

    def __init__(self, function: Callable, forward: bool):
        self.function, self.forward, self._parts = function, forward, None
        self.meant = _meant(function)

    def parts(self) -> tuple:
        """``(body, signature, filename, lineno)``, checked against the contract, the calls
        resolved (once: the rules of the keys a template serves share it)."""
        if self._parts is None:
            template = self.function
            body, filename, lineno = _parse(template)
            signature = inspect.signature(template)
            check_template(template, body, list(signature.parameters), f"{filename}:{lineno}",
                           self.forward)
            for stmt in body:
                resolve_calls(stmt, namespace_of(template), self.meant)
            self._parts = (body, signature, filename, lineno)
        return self._parts


def _meant(function: Callable) -> dict:
    """What each name and attribute a function's code reads means now: ``(None, name)`` and
    ``(id(owner), attribute)`` -> the object, through the modules and classes it reaches."""
    names, codes = set(), [function.__code__]
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes += [c for c in code.co_consts if hasattr(c, "co_names")]
    namespace = namespace_of(function)
    meant = {(None, n): namespace[n] for n in names if n in namespace}
    pending, seen = list(meant.values()), set()
    while pending:
        owner = pending.pop()
        if id(owner) in seen or not isinstance(owner, (type(np), type)):
            continue
        seen.add(id(owner))
        module = isinstance(owner, type(np))  # (a module's own names, not its __getattr__'s,
        for name in names:  # which may warn or import, as numpy.linalg.linalg does)
            value = vars(owner).get(name, _MISSING) if module else getattr(owner, name, _MISSING)
            if value is not _MISSING:
                meant[(id(owner), name)] = value
                pending.append(value)
    return meant


_MISSING = object()


@functools.cache
def namespace_of(template: Callable) -> ChainMap:
    """Names a template body can use: its closure, then its module's globals."""
    code = template.__code__
    cells = dict(zip(code.co_freevars, template.__closure__ or (), strict=True))
    return ChainMap({k: c.cell_contents for k, c in cells.items()}, template.__globals__)


ADJOINTS: dict[Any, Rule] = {}
TANGENTS: dict[Any, Rule] = {}
# the rules of functions whose derivative differs for a complex argument (np.abs): chosen where
# an argument may be complex (transpiler/rules/complex_rules.py)
COMPLEX_ADJOINTS: dict[Any, Rule] = {}
COMPLEX_TANGENTS: dict[Any, Rule] = {}
# the rules of operations on scipy.sparse matrices (``A @ x``, ``A.T``, ``spsolve``): chosen where
# an operand or the result may be sparse (transpiler/rules/sparse_rules.py)
SPARSE_ADJOINTS: dict[Any, Rule] = {}
SPARSE_TANGENTS: dict[Any, Rule] = {}
# keywords a function's result does not depend on (to the function's own tolerance), which the
# activity analysis does not follow: an iterative solver's preconditioners (the values made
# only to precondition need no derivative, and no rule)
UNDIFFERENTIATED: dict[Any, frozenset[str]] = {}
NEEDS_NEWER: dict[str, str] = {}  # 'math.exp2' -> 'Python 3.11': rules this interpreter lacks
REQUIREMENTS: dict[str, str] = {}  # every rule registered only where its function exists


@dataclass(frozen=True)
class Newer:
    """A rule key for a function this interpreter or NumPy does not have (see ``since``)."""

    name: str
    needs: str


@dataclass(frozen=True)
class SparseMethod:
    """A rule key for a method or attribute of a scipy.sparse matrix (``A.toarray()``, ``A.T``):
    one key for every format, as the methods mean the same in all."""

    name: str


def since(module, attr: str, needs: str):
    """``module.attr`` where it exists, else a ``Newer`` stand-in: ``@adjoint(since(math,
    "exp2", "Python 3.11"))`` registers the rule only where ``math.exp2`` exists, and records
    for ``supported()`` and the README that it needs ``needs``."""
    name = f"{module.__name__}.{attr}"
    REQUIREMENTS[name] = needs
    return getattr(module, attr, None) or Newer(name, needs)


_TEMPLATE_STATEMENTS = (gast.Assign, gast.If, gast.Expr, gast.For)


class RuleError(TypeError):
    """A rule template that breaks the contract above (reported at registration)."""


def _parse(template: Callable) -> tuple[list, str, int]:
    lines, lineno = inspect.getsourcelines(template)
    node = gast.parse(textwrap.dedent("".join(lines))).body[0]
    gast.increment_lineno(node, lineno - 1)
    body = node.body
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]  # docstring
    return body, inspect.getsourcefile(template), lineno


def check_template(template: Callable, body: list, params: list[str], where: str,
                   forward: bool = False) -> None:
    """Validate a template's placeholders against its parameters and globals."""
    if not params or params[0] != "ans":
        raise RuleError(f"{where}: the first parameter of a rule must be 'ans'")
    kinds = inspect.signature(template).parameters.values()
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in kinds):
        raise RuleError(f"{where}: a rule cannot take *args or **kwargs; name each parameter "
                        "(optional ones with a default)")
    for stmt in body:
        for n in A.walk(stmt):
            if isinstance(n, gast.stmt) and not isinstance(n, _TEMPLATE_STATEMENTS):
                raise RuleError(f"{where}: '{type(n).__name__}' statements cannot appear in a "
                                "rule; call a runtime helper that raises instead")
    local = set(params) | {"d"}
    namespace = namespace_of(template)
    for stmt in body:
        for n in A.walk(stmt):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                local.add(n.id)
    for stmt in body:
        for n in A.walk(stmt):
            if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) \
                    and n.value.id == "d":
                if not (isinstance(n.slice, gast.Name) and n.slice.id in params):
                    raise RuleError(f"{where}: d[...] must name a parameter of the rule")
                reads_ans = isinstance(n.ctx, gast.Load) == (n.slice.id == "ans")
                if forward and reads_ans:
                    raise RuleError(f"{where}: a tangent rule reads d[x] of arguments and only "
                                    "writes d[ans]")
                if not forward and not reads_ans:
                    raise RuleError(f"{where}: only d[ans] can be read; d[{n.slice.id}] is "
                                    "written")
            if isinstance(n, gast.Name) and n.id not in local:
                if n.id not in namespace and not hasattr(builtins, n.id):
                    raise RuleError(f"{where}: unknown name '{n.id}' in the rule body")


def resolve_calls(stmt, namespace, meant: dict | None = None) -> None:
    """Note on each call in a template the object it calls (``rt.unreduce`` -> the function):
    what its name meant when the template was registered (``meant``, see ``Template``), else
    what it means now."""
    meant = meant or {}
    for node in A.walk(stmt):
        if isinstance(node, gast.Call):
            path, func = [], node.func
            while isinstance(func, gast.Attribute):
                path.append(func.attr)
                func = func.value
            if isinstance(func, gast.Name) and func.id in namespace:
                obj = meant.get((None, func.id), namespace[func.id])
                for part in reversed(path):
                    obj = meant[(id(obj), part)] if (id(obj), part) in meant \
                        else getattr(obj, part, None)
                setanno(node, Anno.FUNC, obj)


def _registrar(table: dict, keys: tuple, forward: bool) -> Callable[[Callable], Callable]:
    def register(template: Callable) -> Callable:
        source = Template(template, forward)
        if not (getattr(template, "__module__", "") or "").startswith("transpiler.rules."):
            source.parts()  # (not ours: checked where it is registered)
        for key in keys:
            if isinstance(key, Newer):
                NEEDS_NEWER[key.name] = key.needs
            else:
                table[key] = Rule(key, template, source=source)
        return template

    return register


def adjoint(*keys, of_complex: bool = False,
            of_sparse: bool = False) -> Callable[[Callable], Callable]:
    """Register the decorated template as the adjoint (reverse-mode) rule of every key (with
    ``of_complex``: its rule where an argument is complex, complex_rules.py; with
    ``of_sparse``: where an operand or the result is a scipy.sparse matrix, sparse_rules.py)."""
    table = SPARSE_ADJOINTS if of_sparse else COMPLEX_ADJOINTS if of_complex else ADJOINTS
    return _registrar(table, keys, forward=False)


def tangent(*keys, of_complex: bool = False,
            of_sparse: bool = False) -> Callable[[Callable], Callable]:
    """Register the decorated template as the tangent (forward-mode) rule of every key (with
    ``of_complex``: its rule where an argument is complex; ``of_sparse``: of sparse matrices)."""
    table = SPARSE_TANGENTS if of_sparse else COMPLEX_TANGENTS if of_complex else TANGENTS
    return _registrar(table, keys, forward=True)


def is_user_function(func) -> bool:
    """A Python function of the user's (not a library's) without a rule of its own: the
    compiler transforms its source instead of applying a rule."""
    if not inspect.isfunction(func):
        return False
    try:
        if func in ADJOINTS or func in TANGENTS or func in NONDIFF:
            return False
    except TypeError:
        return False
    module = getattr(func, "__module__", "") or ""
    return module.split(".")[0] not in {"numpy", "scipy", "math", "transpiler", "runtime"}


_NO_RULE = {  # mode -> (what is missing, hint with {name} and {short})
    "reverse": ("gradient rule", "register a rule for it:\n"
                "    from transpiler import adjoint, d\n"
                "    @adjoint({name})\n"
                "    def adj_{short}(ans, x):\n"
                "        d[x] = d[ans] * ...  # the partial derivative times the incoming "
                "gradient"),
    "forward": ("tangent (forward-mode) rule", "register a tangent rule for it:\n"
                "    from transpiler import tangent, d\n"
                "    @tangent({name})\n"
                "    def tan_{short}(ans, x):\n"
                "        d[ans] = d[x] * ...  # the partial derivative times the argument's "
                "tangent"),
}


def no_rule(node, ctx, key, spelled: str, mode: str):
    """The NoRuleError for a call of ``key`` (spelled ``spelled`` in the source) without a rule
    for ``mode`` ("reverse" or "forward"), located at ``node``, with the registration to add."""
    name = key_name(key) if key is not None else spelled
    short = name.rsplit(".", 1)[-1].strip("<>") or "f"
    if isinstance(key, type) and (getattr(key, "__module__", "") or "") \
            .split(".")[0] not in {"numpy", "scipy", "builtins", "transpiler", "runtime"}:
        return _constructor_refusal(node, ctx, key)
    missing, hint = _NO_RULE[mode]
    if (getattr(key, "__module__", None) or "").split(".")[0] == "runtime":  # (in a gradient)
        return error_at(node, ctx, "second derivatives (hvp, hessian, a gradient differentiated "
                        f"again) are not supported yet through {spelled or name}: it has no "
                        f"{missing}", "grad, value_and_grad, jvp and vjp of the function work; "
                        "jvp of its gradient is what is missing", cls=NoRuleError)
    return error_at(node, ctx, f"no {missing} for {spelled or name} ({name})",
                    hint.format(name=spelled or name, short=short), cls=NoRuleError)


def _constructor_refusal(node, ctx, cls: type):
    """Why building an object of a class of the user's from differentiated values is refused:
    its constructor runs as written (passes/objects.py compiles an ``__init__`` of the user's
    that calls no ``super()``)."""
    init = next((k.__dict__["__init__"] for k in cls.__mro__ if "__init__" in k.__dict__),
                None)
    if type(cls).__call__ is not type.__call__ or cls.__new__ is not object.__new__:
        why, hint = "it has a metaclass or a __new__ of its own", "build it with a function " \
            "that returns the fields, or pass them as arguments"
    elif "__class__" in getattr(getattr(init, "__code__", None), "co_freevars", ()):
        why = f"{init.__qualname__} calls super(), which is not supported yet"
        hint = "call the base class's method by name: Base.__init__(self, ...)"
    else:
        why, hint = "its __init__ is not Python source the compiler can read", \
            "use a @dataclass or an __init__ written in Python"
    return error_at(node, ctx, f"building a {cls.__name__} from differentiated values is not "
                    f"supported: {why}", hint, cls=NoRuleError)


def key_name(key) -> str:
    """A readable name for a rule key: 'numpy.sin', 'math.log', 'operator *', 'ndarray.T'."""
    ops = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**",
           gast.MatMult: "@", gast.USub: "unary -", gast.UAdd: "unary +", gast.Mod: "%"}
    if key in ops:
        return f"operator {ops[key]}"
    if key == SparseMethod("__call__"):  # (solve = factorized(A); solve(b))
        return "scipy.sparse.linalg.factorized(A)(b)"
    if isinstance(key, SparseMethod):
        return f"sparse matrix.{key.name}"
    if isinstance(key, property) or type(key).__name__ == "getset_descriptor":
        return f"{key.__objclass__.__name__}.{key.__name__}"
    owner = getattr(key, "__self__", None)
    if type(owner).__module__.startswith("scipy.stats") and isinstance(
            getattr(owner, "name", None), str):  # a distribution's method: scipy.stats.norm.cdf
        return f"scipy.stats.{owner.name}.{key.__name__}"
    if isinstance(owner, np.ufunc) and getattr(np, owner.__name__, None) is owner:
        return f"numpy.{owner.__name__}.{key.__name__}"  # a ufunc's method: np.add.reduceat
    module = getattr(key, "__module__", None) or ""
    if isinstance(key, np.ufunc):
        special = sys.modules.get("scipy.special")
        module = "numpy" if getattr(np, key.__name__, None) is key else "scipy.special" \
            if getattr(special, key.__name__, None) is key else "ufunc"
    if module == "_operator":
        module = "operator"
    module = ".".join(part for part in module.split(".") if not part.startswith("_"))
    if module.startswith("runtime."):  # generated code calls runtime helpers by flat names
        module = "runtime"
    name = getattr(key, "__qualname__", None) or getattr(key, "__name__", repr(key))
    parts = module.split(".")
    while module.startswith("scipy.sparse.") and len(parts) > 2 and getattr(
            sys.modules.get(".".join(parts[:-1])), name, None) is key:
        parts.pop()  # (scipy.sparse.linalg._dsolve.linsolve.spsolve: as it is imported)
    module = ".".join(parts)
    return f"{module}.{name}" if module and module != "builtins" else name
