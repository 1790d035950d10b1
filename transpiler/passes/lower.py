"""What the reverse and the forward pass share: lowering one statement to its derivative.

The seam is ``Lowering``. It dispatches a statement by kind (a branch, a loop, an assignment),
an assignment by the kind of its value (a name, a container literal, an operator, an element
write, a call, a subscript, an attribute), looks up the value's rule and binds the call site to
the rule's template, and calls the user's own functions through their compiled callee. A mode
subclasses it and implements only what is its own:

- ``rules``, ``mode``, ``derivative``: its rule table (ADJOINTS, TANGENTS), its name for
  ``no_rule`` ("reverse", "forward") and for errors ("gradient", "tangent");
- ``branch(stmt)`` and ``loop(stmt)``: what control flow becomes;
- ``assignment(target, value, stmt)``, ``copy(target, value)``, ``container(target, value)``
  and ``apply_rule(rule, bound, target, node)``: the derivative statements of ``target =
  value`` (reverse: partials of the arguments; forward: the target's tangent);
- ``compile_callee(...)`` and ``call_callee(...)``: which function of a user callee it
  compiles (calls.py) and how it calls it;
- optionally ``before(target, value)`` (forms it lowers its own way, first), ``element_write``
  (``y_1 = <setitem>(y, i, v)``; by default its rule, like a call) and ``differentiated(name)``
  (whether an argument carries a derivative; by default whether it is active).

The primal of every statement is ``primal_of(stmt)``: the statement itself, a write into a copy
for an element write, or what a user call's lowering put in ``primal_for``. A new mode (batching,
a second order) is a new subclass with these hooks, run by a pass of its own in pipeline.py.
"""

from __future__ import annotations

import inspect
import operator

import gast
import numpy as np

import runtime
from transpiler import ast_util as A
from transpiler.analysis.activity import SHAPE_ATTRIBUTES
from transpiler.analysis.reporting import only_reports
from transpiler.anno import Anno, getanno, setanno
from transpiler.errors import NoRuleError, TranspileError, error_at
from transpiler.passes import tape
from transpiler.passes.checkpoint import is_checkpointed_loop
from transpiler.passes.functions import bound_names
from transpiler.passes.stars import vararg_names
from transpiler.rules.complex_rules import COMPLEX_READY
from transpiler.rules.methods import METHODS, PACKED
from transpiler.rules.nondiff import NONDIFF, reports
from transpiler.rules.registry import (
    ADJOINTS,
    SparseMethod,
    is_user_function,
    key_name,
    no_rule,
)
from transpiler.templates import bind_call


class Lowering:
    """The statement-by-statement lowering of one function, in the mode a subclass gives."""

    rules: dict = {}  # the mode's rule table
    complex_rules: dict = {}  # its rules for complex arguments (rules/complex_rules.py)
    mode = ""  # for no_rule: "reverse" or "forward"
    derivative = ""  # in errors: "the <derivative> rule of ..."

    def __init__(self, ctx, active: set[str]):
        self.ctx, self.active = ctx, active
        self.scalars, self.shapes = ctx.facts.scalars, ctx.facts.shapes
        self.primal_for: dict[int, list] = {}  # statements whose primal the lowering rewrites
        self.at = None  # the statement being lowered

    # --- statements ---

    def statement(self, stmt):
        if isinstance(stmt, gast.If):
            return self.branch(stmt)
        if isinstance(stmt, (gast.For, gast.While)):
            return self.loop(stmt)
        return self.simple(stmt)

    def primal_of(self, stmt) -> list:
        """The primal statements of a simple statement, once its derivative is lowered."""
        primal = self.primal_for.pop(id(stmt), None)
        return primal or (write(stmt) if is_setitem(stmt) else [stmt])

    def derivatives(self, stmt) -> list | None:
        """The derivative statements of ``stmt``; None when it has none (it is no assignment,
        or assigns nothing active)."""
        if not isinstance(stmt, gast.Assign):
            return None
        targets = [n.id for t in stmt.targets for n in A.walk(t) if isinstance(n, gast.Name)]
        if not any(t in self.active for t in targets):
            return None
        self.at = stmt  # (where a refusal points when a rewritten value has no line)
        target = stmt.targets[0]
        if is_checkpointed_loop(stmt.value):
            return self.checkpointed_loop(stmt)
        func, value = user_callee(stmt.value)
        if func is not None:
            return self.user_call(func, value, target, stmt)
        if not isinstance(target, gast.Name):
            raise error_at(stmt, self.ctx, "unpacking a differentiated value is not supported yet",
                           "assign each element separately")
        return self.assignment(target.id, value, stmt)

    def checkpointed_loop(self, stmt) -> list:
        """``u, D = checkpointed_loop(step, items, u, D, ...)`` (passes/checkpoint.py): only
        reverse mode makes these."""
        raise error_at(stmt, self.ctx, f"a checkpointed loop has no {self.derivative} here",
                       "remove the checkpoint marker")

    # --- values ---

    def value(self, target: str, value) -> list:
        """The derivative statements of ``target = value``, by the kind of ``value``."""
        own = self.before(target, value)
        if own is not None:
            return own
        if isinstance(value, gast.Name):
            return self.copy(target, value)
        if isinstance(value, (gast.Tuple, gast.List, gast.Dict)):
            if isinstance(value, gast.Dict) and any(k is None for k in value.keys):
                raise error_at(value, self.ctx, "'**' in a dict of differentiated values is not "
                               "supported", "write the keys out")
            if self.is_complex(target, value) and not all(  # (a mixed one: its real items'
                    self.is_complex(e) or not (isinstance(e, gast.Name) and e.id in self.active)
                    for e in (value.values if isinstance(value, gast.Dict) else value.elts)):
                raise self.complex_refusal(value, "a tuple, list or dict of real and complex "
                                           "values")  # gradients would not be projected)
            return self.container(target, value)
        if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Mult) \
                and isinstance(value.left, gast.Name) and isinstance(value.right, gast.Name) \
                and value.left.id == value.right.id:  # x * x: as x ** 2
            return self.rule(gast.Pow, [value.left, A.const(2.0)], {}, target, value)
        if isinstance(value, gast.BinOp):
            return self.rule(type(value.op), [value.left, value.right], {}, target, value)
        if isinstance(value, gast.UnaryOp):
            return self.rule(type(value.op), [value.operand], {}, target, value)
        if is_setitem_value(value):
            return self.element_write(target, value)
        if isinstance(value, gast.Call):
            return self.call(target, value)
        if isinstance(value, gast.Subscript):
            index = A.index_expression(value.slice)
            return self.rule(operator.getitem, [value.value, index], {}, target, value)
        if isinstance(value, gast.Attribute) and value.attr not in SHAPE_ATTRIBUTES:
            if self.is_sparse(value.value):  # (A.T: rules/sparse_rules.py)
                return self.rule(SparseMethod(value.attr), [value.value], {}, target, value,
                                 f".{value.attr}")
            key = getattr(np.ndarray, value.attr, None)
            data = isinstance(value.value, gast.Name) and (
                value.value.id in self.ctx.arrays or value.value.id in self.ctx.scalars)
            if (key is None and not data) or self.ctx.facts.receivers.may_be_object(value.value):
                return self.rule(runtime.field, [value.value, A.const(value.attr)], {},
                                 target, value)  # an object's field (runtime/objects.py)
            return self.rule(key, [value.value], {}, target, value, f".{value.attr}")
        raise error_at(value, self.ctx, unsupported(value),
                       "rewrite it with functions that have rules (see transpiler.supported())")

    def before(self, target: str, value) -> list | None:
        """The mode's own lowering of ``target = value``, tried first; None: none."""
        return None

    def element_write(self, target: str, value) -> list:
        """``target = <setitem>(array, index, item)``: by default, as the call it is."""
        return self.call(target, value)

    def call(self, target: str, value) -> list:
        func, args, keywords = rule_call(value, self.ctx)
        if func is runtime.appended and len(args) == 2 and isinstance(args[1], gast.Name):
            item = args[1].id  # (what the list holds: a backend may need it to type the list)
            kind = "number" if item in self.scalars else self.ctx.facts.ranks.get(item)
            if kind is not None:
                setanno(value, Anno.ITEM, kind)
        return self.rule(func, args, keywords, target, value, gast.unparse(value.func))

    # --- rules ---

    def rule(self, key, args, keywords, target: str, node, spelled: str = "") -> list:
        """The rule of ``key`` bound to the call site, then instantiated by the mode (where a
        value it reads or makes may be complex, its rule for complex values: ``of_complex``,
        or its own where that serves them, ``COMPLEX_READY``; else refused here)."""
        if self.is_sparse(target, *args, *keywords.values()):
            rule = _get(self.sparse_rules, key)
            if rule is None:
                raise self.sparse_refusal(node, spelled or key_name(key))
            return self.apply_rule(rule, self.bind(rule, key, args, keywords, node),
                                   target, node)
        try:
            rule = self.rules.get(key)
            ready = rule is not None and key in COMPLEX_READY
        except TypeError:  # unhashable
            rule = None
        if rule is None:
            raise no_rule(node, self.ctx, key, spelled, self.mode)
        if self.is_complex(target, *args, *keywords.values()):
            rule = self.complex_rules.get(key) or (rule if ready else None)
            if rule is None:
                raise self.complex_refusal(node, spelled or key_name(key))
        return self.apply_rule(rule, self.bind(rule, key, args, keywords, node), target, node)

    def bind(self, rule, key, args, keywords, node):
        """The rule's parameters bound to the call site's arguments (as the call binds them)."""
        try:
            return bind_call(rule, args, keywords)
        except TypeError as e:
            raise error_at(node, self.ctx, f"the {self.derivative} rule of {key_name(key)} does "
                           f"not accept these arguments: {e}", "pass only the arguments the "
                           f"rule lists ({', '.join(rule.params[1:])})") from e

    def is_sparse(self, *values) -> bool:
        """Whether one of ``values`` (names, or expressions) may be a scipy.sparse matrix
        (facts.sparse)."""
        return self._may_be(self.ctx.facts.sparse, values)

    def is_complex(self, *values) -> bool:
        """Whether one of ``values`` (names, or expressions) may be complex (facts.complex)."""
        return self._may_be(self.ctx.facts.complex, values, complex)

    @staticmethod
    def _may_be(found: frozenset[str], values: tuple, literal: type | None = None) -> bool:
        """Whether one of ``values`` reads a name in ``found`` (or is a ``literal`` constant)."""
        return bool(found) and any(
            isinstance(n, gast.Name) and n.id in found or literal is not None
            and isinstance(n, gast.Constant) and isinstance(n.value, literal) for v in values
            for n in (A.walk(v) if isinstance(v, gast.AST) else [A.name(v)]))

    def sparse_refusal(self, node, what: str) -> TranspileError:
        """The error for ``what`` (an operation, a helper) given or making a sparse matrix."""
        return self._kind_refusal(
            node, what, "through scipy.sparse matrices",
            f"{what} is not differentiated for scipy.sparse matrices: a value it reads or makes "
            "may be one here, and its rule is written for arrays", "use the operations that have "
            "sparse rules (see the README's sparse section: A @ x, A.T, A.multiply, A.toarray(), "
            "spsolve, sums), or make the matrix dense first (A.toarray())", NoRuleError)

    def complex_refusal(self, node, what: str) -> TranspileError:
        """The error for ``what`` (an operation, a helper) given or making a complex value."""
        return self._kind_refusal(
            node, what, "of complex values", f"complex numbers are not supported yet by {what}: "
            "a value it reads or makes may be complex here, and its rule is written for real "
            "values", "compute with the operations that take complex values (arithmetic, "
            "np.exp, np.abs, np.real, np.imag, np.conj, np.angle, sums, indexing, the np.fft "
            "transforms: see the README), or on the real and imaginary parts as two real values")

    def _kind_refusal(self, node, what: str, of: str, message: str, hint: str,
                      cls=TranspileError) -> TranspileError:
        """A refusal at ``node`` (the statement's line where it has none); a gradient's helper
        (``rt.``) reached here is a second derivative ``of`` the kind."""
        if not getattr(node, "lineno", 0) and self.at is not None:
            node = self.at
        if what.startswith("rt."):  # (a helper of a gradient, differentiated again)
            return error_at(node, self.ctx, "second derivatives (hvp, hessian, a gradient "
                            f"differentiated again) {of} are not supported yet ({what})",
                            "grad, value_and_grad, jvp and vjp of the function work",
                            cls=NoRuleError)
        return error_at(node, self.ctx, message, hint, cls=cls)

    # --- calls of the user's functions ---

    def differentiated(self, name: str) -> bool:
        """Whether the argument ``name`` carries a derivative into a callee."""
        return name in self.active

    def user_call(self, func, call, target, stmt) -> list:
        """``y = helper(a, b)``: the helper compiled for the arguments that carry derivatives
        (compile_callee), called as the mode calls it (call_callee)."""
        if not (isinstance(target, gast.Name) or (isinstance(target, gast.Tuple) and all(
                isinstance(e, gast.Name) for e in target.elts))):
            raise error_at(stmt, self.ctx, "assign the result of a call to a name or a tuple of "
                           "names", "y = helper(x)  or  a, b = helper(x)")
        classes = frozenset((getanno(call, Anno.CLASSES) or getanno(
            getattr(stmt, "value", None), Anno.CLASSES) or {}).items())  # passes/objects.py
        known = getanno(stmt.value, Anno.KNOWN, ())  # (a method call: rewritten, unmarked)
        if known:  # what the functions it is given bind: parameters of its compiled form only
            arguments, varargs, call = self.bind_known(func, call, known)
        else:
            arguments, varargs, call = bind_helper(self.ctx, func, call)
        active = [p for p, node in arguments.items()
                  if any(self.differentiated(n.id) for n in A.walk(node)
                         if isinstance(n, gast.Name))]
        if self.is_complex(target, *arguments.values()) and tape.is_generated(func):
            raise self.complex_refusal(call, "rt.<a helper given complex values>")
        if self.is_complex(target):  # (check_kinds: the helper's source may return one)
            raise self.complex_refusal(call, f"a call of {func.__qualname__} (not inlined), "
                                       "whose result")
        for p in active:
            if not isinstance(arguments[p], gast.Name):
                raise error_at(call, self.ctx, f"argument '{p}' of {func.__name__} must be a "
                               "name to be differentiated through", "assign it to a variable")
        objects = frozenset(p for p, node in arguments.items()
                            if self.ctx.facts.receivers.may_be_object(node)) | classes
        sparse = frozenset(p for p, node in arguments.items() if self.is_sparse(node))
        complex_values = frozenset(p for p, node in arguments.items() if self.is_complex(node))
        try:
            callee = self.compile_callee(func, tuple(active), varargs, objects, known, sparse,
                                         complex_values)
        except TranspileError as e:
            raise TranspileError(f"{e.message}\n(in {func.__qualname__}, called from "
                                 f"{self.ctx.filename}:{call.lineno})", e.filename, e.lineno,
                                 e.col, e.hint) from e
        return self.call_callee(func, callee, call, arguments, active, target, stmt)


    def bind_known(self, func, call, known: tuple) -> tuple[dict, tuple | None, gast.Call]:
        """bind_helper for a call passing known functions (passes/functions.py), whose extra
        keywords carry what those functions bind."""
        bound = {n for param, _, npos, keys in known for n in bound_names(param, npos, keys)}
        passed = [kw for kw in call.keywords if kw.arg in bound]
        arguments, varargs, call = bind_helper(self.ctx, func, gast.copy_location(gast.Call(
            func=call.func, args=call.args, keywords=[kw for kw in call.keywords
                                                      if kw.arg not in bound]), call))
        arguments.update((kw.arg, kw.value) for kw in passed)
        return arguments, varargs, gast.copy_location(gast.Call(
            func=call.func, args=call.args, keywords=call.keywords + passed), call)


def refuse_discarded_calls(body: list, varied: set[str], ctx, allowed=frozenset()) -> None:
    """A call on differentiated values whose result is dropped can only matter through what it
    does to its arguments (``xs.append(x)``, ``np.add(a, b, out=c)``): refuse it (unless the
    statement's id is ``allowed``)."""
    nodes = [n for s in body for n in A.walk(s)]
    for call in (n for n in nodes if isinstance(n, gast.Call)):
        func = getanno(call, Anno.FUNC)
        if any(kw.arg == "out" for kw in call.keywords) or (
                isinstance(func, np.ufunc) and len(call.args) > func.nin):
            if any(n in varied for n in A.load_names(call)):
                raise error_at(call, ctx, "writing a result into an existing array (out=) "
                               "cannot be differentiated", "assign the result: y = np.floor(y)")
    for stmt in nodes:
        if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)) \
                or id(stmt) in allowed:
            continue
        call = stmt.value
        if not any(n in varied for n in A.load_names(call)):
            continue
        func = getanno(call, Anno.FUNC)
        try:
            harmless = reports(func) or (func in NONDIFF) or (func in ADJOINTS) \
                or only_reports(func)
        except TypeError:
            harmless = False
        if func is runtime.record and call.args[0].id not in _read_back(nodes):
            continue  # (the value appended to a history outside; nothing reads it back)
        if func is runtime.record:
            raise error_at(call, ctx, f"appending a differentiated value to "
                           f"'{call.args[0].id}', which is not the function's own and which it "
                           "reads back, is not supported: the gradient does not follow state "
                           "outside the function", f"copy it first ({call.args[0].id} = "
                           f"list({call.args[0].id})), or return the value")
        if func is runtime.store:
            raise error_at(call, ctx, f"writing a differentiated value into "
                           f"'{gast.unparse(call.args[0])}', which is not the function's own "
                           "(its module's or a closure's), is not supported: the gradient does "
                           "not follow state outside the function", "return the value, or "
                           "store only values that do not depend on the differentiated "
                           "arguments (a memo of constants)")
        if not harmless:
            raise error_at(call, ctx, "the result of this call is discarded, so it could only "
                           "matter by changing its arguments in place, which cannot be "
                           "differentiated", "assign the result and use it (c = np.add(a, b)); "
                           "build lists in one literal or with np.stack")


def _read_back(nodes: list) -> set[str]:
    """The names read other than as the list ``rt.record`` appends to."""
    recorded = {id(n.args[0]) for n in nodes if isinstance(n, gast.Call)
                and getanno(n, Anno.FUNC) is runtime.record}
    return {n.id for n in nodes if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
            and id(n) not in recorded}


def _get(table: dict, key):
    try:
        return table.get(key)
    except TypeError:  # unhashable
        return None


def rule_call(call, ctx) -> tuple:
    """(key, arguments, keywords) under which a call finds its rule: ``x.sum(axis=0)`` is
    ``np.sum(x, axis=0)`` (of a sparse matrix ``A``, ``A.sum()`` is ``SparseMethod("sum")``);
    an index argument is an index expression."""
    func = getanno(call, Anno.FUNC)
    args = list(call.args)
    receiver = call.func.value if isinstance(call.func, gast.Attribute) else None
    if isinstance(receiver, gast.Name) and receiver.id in ctx.facts.sparse:
        func, args = SparseMethod(call.func.attr), [receiver] + args  # (a global's too)
    if isinstance(call.func, gast.Name) and call.func.id in ctx.facts.sparse:
        func, args = SparseMethod("__call__"), [call.func] + args  # (solve = factorized(A))
    if func is operator.setitem:
        args[1] = A.index_expression(args[1])
    if func is None and isinstance(call.func, gast.Attribute) and call.func.attr in METHODS:
        func, method = METHODS[call.func.attr], call.func.attr
        refuse_object_receiver(call.func.value, call, ctx, method)
        if method in PACKED and len(args) > 1:
            args = [gast.Tuple(elts=args, ctx=gast.Load())]
        args = [call.func.value] + args
    if func is None and not isinstance(call.func, gast.Attribute):
        spelled = gast.unparse(call.func).strip()
        spelled = ctx.facts.variable(spelled) if isinstance(call.func, gast.Name) else spelled
        raise error_at(call, ctx, f"calling {spelled}, a function not known when the gradient "
                       "is compiled (a variable assigned more than once, or an argument given "
                       "an object with __call__ or a class), is not supported", "pass a "
                       "function (a def, lambda, functools.partial or method): the gradient is "
                       "compiled for the function it is given")
    if func is None:
        spelled = gast.unparse(_as_written(call.func, ctx)).strip()
        raise error_at(call, ctx, f"the method call {spelled}(...) on a differentiated "
                       "value is not supported", "supported methods: " + ", ".join(
                           sorted(METHODS)) + "; or call the NumPy function")
    if any(kw.arg is None for kw in call.keywords):
        raise error_at(call, ctx, "'**kwargs' in a call is not supported yet",
                       "pass keyword arguments explicitly")
    return func, args, {kw.arg: kw.value for kw in call.keywords}


def _as_written(node, ctx):
    """A copy of ``node`` spelling the user's variables, not the versions the passes made."""
    node = A.copy_node(node)
    for n in A.walk(node):
        if isinstance(n, gast.Name):
            n.id = ctx.facts.variable(n.id)
    return node


def refuse_object_receiver(receiver, node, ctx, name: str, method: bool = True) -> None:
    """A method or attribute differentiated by NumPy's rule (``x.sum()`` as ``np.sum(x)``,
    ``x.T`` as ``np.ndarray.T``) needs a receiver that is data (analysis/receivers.py): refuse
    one that may be an object, whose ``sum`` may mean anything."""
    if not ctx.facts.receivers.may_be_object(receiver):
        return
    what = gast.unparse(receiver).strip()
    if isinstance(receiver, gast.Name):  # the user's variable, or a value the line computes
        what = ctx.facts.variable(what)
        what = what if what in ctx.locals else ""
    of_dict = name in ("get", "values", "items", "keys")
    owner = "a dict's" if of_dict else "NumPy's"
    spelled = f"{what}.{name}" + ("(...)" if method else "")
    use = f"{'dict' if of_dict else 'np'}.{name}({what or 'array'}, ...)" if method \
        else "an array's attribute"
    raise error_at(node, ctx, f"{spelled} would be differentiated as {owner} {name}, but "
                   f"{what or 'its receiver'} may not be an array, a number or a container of "
                   "them: it is (or comes from) an argument of another type or the result of a "
                   "call that may return an object", f"call the function on the array ({use}); "
                   "objects are not differentiated yet: pass their float or array fields as "
                   "arguments")


def user_callee(value):
    """The user function a call statement's value calls (None for rules): ``m.loss(x)`` is
    ``Model.loss(m, x)``. Returns (function, call) with the call rewritten accordingly."""
    func = getanno(value, Anno.FUNC) if isinstance(value, gast.Call) else None
    if inspect.ismethod(func) and is_user_function(func.__func__) \
            and isinstance(value.func, gast.Attribute):
        value = gast.copy_location(gast.Call(func=value.func, args=[value.func.value]
                                             + value.args, keywords=value.keywords), value)
        func = func.__func__
    return (func, value) if is_user_function(func) else (None, value)


def bind_helper(ctx, func, call) -> tuple[dict, tuple | None, gast.Call]:
    """Each parameter of helper ``func`` and the argument node a call passes to it.

    A helper with ``*args``/``**kwargs`` is compiled for this call's pattern: its extra
    arguments bind to spelled-out parameters (``args_0``, ``kwargs_key``; passes/stars.py),
    which the returned call passes by keyword."""
    if any(isinstance(a, gast.Starred) for a in call.args) or any(
            kw.arg is None for kw in call.keywords):
        raise error_at(call, ctx, f"calling {func.__name__} with *args or **kwargs "
                       "of unknown contents is not supported", "pass the arguments one by "
                       "one, or a tuple/dict written out in this function")
    signature = inspect.signature(func)
    try:
        bound = signature.bind(*call.args, **{kw.arg: kw.value for kw in call.keywords})
    except TypeError as e:
        raise error_at(call, ctx, f"this call does not match {func.__name__}'s "
                       f"parameters: {e}", "check the arguments") from e
    kinds = {p.name: p.kind for p in signature.parameters.values()}
    if not any(k in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
               for k in kinds.values()):
        return dict(bound.arguments), None, call
    star = next((p for p, k in kinds.items() if k is inspect.Parameter.VAR_POSITIONAL), "")
    dstar = next((p for p, k in kinds.items() if k is inspect.Parameter.VAR_KEYWORD), "")
    extra = bound.arguments.get(star, ())
    keys = tuple(bound.arguments.get(dstar, {}))
    positional, keyword = vararg_names(func, len(extra), keys)
    arguments = {}
    for p, node in bound.arguments.items():
        if p == star:
            arguments.update(zip(positional, node, strict=True))
        elif p == dstar:
            arguments.update(zip(keyword, node.values(), strict=True))
        else:
            arguments[p] = node
    leading = [a for a, (p, k) in zip(call.args, kinds.items(), strict=False)
               if k is inspect.Parameter.POSITIONAL_ONLY]
    call = gast.copy_location(gast.Call(func=call.func, args=leading, keywords=[
        gast.keyword(arg=p, value=node) for p, node in list(arguments.items())[len(leading):]]),
        call)
    return arguments, (len(extra), keys), call


# --- element writes ---

def is_setitem_value(value) -> bool:
    return isinstance(value, gast.Call) and getanno(value, Anno.FUNC) is operator.setitem


def is_setitem(stmt) -> bool:
    return isinstance(stmt, gast.Assign) and is_setitem_value(stmt.value)


def write(stmt) -> list:
    """``y_1 = <setitem>(y, i, v)`` -> ``y_1 = y.copy()`` and ``y_1[i] = v``: the old array (maybe
    the caller's) is never written, and the adjoint can still read it."""
    target = A.target_name(stmt)
    array, index, value = stmt.value.args
    copy = A.assign(target, A.call(A.attr(array, "copy")), like=stmt)
    setanno(copy, Anno.WRITE_COPY, stmt)  # (the write it came from: its adjoint's RESTORE)
    put = gast.Assign(targets=[gast.Subscript(value=A.name(target), slice=index,
                                              ctx=gast.Store())], value=value, type_comment=None)
    return [copy, gast.copy_location(put, stmt)]


def unsupported(value) -> str:
    kinds = {gast.IfExp: "a conditional expression on differentiated values is not supported yet",
             gast.ListComp: "a list comprehension over differentiated values is not supported"}
    return kinds.get(type(value), f"{type(value).__name__} expressions cannot be differentiated")
