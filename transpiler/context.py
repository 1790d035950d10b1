"""The state one compilation carries from pass to pass."""

from __future__ import annotations

import builtins
import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from transpiler.naming import Namer


class Mode(str, enum.Enum):
    """What one compilation makes (a string too: ``Mode.GRAD == "grad"``)."""

    GRAD = "grad"  # the gradient
    VALUE_AND_GRAD = "value_and_grad"  # the value and the gradient
    SPLIT = "split"  # a forward/backward pair, for a call from compiled code (calls.py)
    JVP = "jvp"  # forward mode: the value and the tangent
    TANGENT = "tangent"  # forward mode of a function called from compiled code

    __str__ = str.__str__  # "grad", as the names of generated functions spell it
    __format__ = str.__format__

    @property
    def forward(self) -> bool:
        """Whether the pipeline is forward mode's."""
        return self in (Mode.JVP, Mode.TANGENT)


@dataclass(frozen=True)
class Options:
    """Compile options; part of the cache key."""

    optimize: bool = True
    value: bool = True  # forward mode: return the value with the tangent (hvp: the tangent)
    backend: str = "python"  # the module of transpiler/backends/ that prints, loads and calls
    checkpoint: bool = True  # reverse marked loops by checkpointing (off: tape them whole)
    aux: bool = False  # grad: the function returns (value, aux); aux is passed through as is


@dataclass
class Context:
    fn: Callable
    filename: str  # the user's file, for error messages
    indent: int  # columns removed by dedent, added back to col offsets in errors
    wrt: tuple[str, ...]  # parameter names to differentiate with respect to
    mode: Mode
    options: Options
    namer: Namer = field(default_factory=lambda: Namer(set()))
    # Objects the generated function needs by name (modules used by rules, snapshots of called
    # globals); bound as closure cells, so they never touch the user's globals.
    bindings: dict[str, Any] = field(default_factory=dict)
    locals: set[str] = field(default_factory=set)  # parameters and assigned names of the function
    scalars: frozenset[str] = frozenset()  # parameters known to be Python numbers
    complex_numbers: frozenset[str] = frozenset()  # those of them known to be complex
    complex_values: frozenset[str] = frozenset()  # other parameters known to be complex: a
    # Dask array's (its variant has no array kind), vjp's (its forward/backward pair, none)
    sparse_values: frozenset[str] = frozenset()  # parameters given scipy.sparse matrices
    arrays: Mapping[str, tuple[int, str]] = field(default_factory=dict)  # parameters known to
    # be NumPy arrays -> (ndim, dtype.str), the variant's (gradient.ArrayKind)
    objects: frozenset[str] = frozenset()  # parameters that may hold objects (arguments.py)
    classes: dict = field(default_factory=dict)  # parameter -> its object's known class
    written_params: set[str] = field(default_factory=set)  # check_writes: params written into
    gradient_aliases: bool = False  # reverse: a partial is a parameter's array (finalize)
    # names the passes gave the user's variables (a comprehension's ``s`` is ``_s``), for
    # messages: analysis.facts folds them into ``Facts.variable``
    spelled: dict[str, str] = field(default_factory=dict)
    snapshots: dict[str, Any] = field(default_factory=dict)  # resolve: global root -> object
    # a helper compiled for one call pattern: (number of extra positional arguments, extra
    # keyword names) its *args and **kwargs receive (see passes/stars.py)
    varargs: tuple[int, tuple[str, ...]] | None = None
    # a helper compiled for the functions a call passes it (see passes/functions.py):
    # (parameter, function, number of bound positional arguments, bound keyword names)
    known: tuple = ()
    views: Any = None  # the writes through views to spell out (passes/views.Views), if asked
    called: bool = False  # compiled for a call from a compiled function (its writes would show)
    # what the analyses know of the SSA form (analysis.facts.Facts), computed once in the
    # pipeline before the mode's pass and read-only after
    facts: Any = None
    residuals: str = ""  # split mode: the backward's parameter holding the saved primal values
    cotangent: str = ""  # split mode: the backward's parameter holding the result's gradient
    # compiles a user function a differentiated one calls (pipeline.compile_function; calls.py)
    compile_callee: Callable | None = None

    def lookup(self, name: str):
        """Resolve a free name of the user function: closure, then globals, then builtins."""
        code = self.fn.__code__
        if name in code.co_freevars:
            cell = self.fn.__closure__[code.co_freevars.index(name)]
            return cell.cell_contents
        if name in self.fn.__globals__:
            return self.fn.__globals__[name]
        return getattr(builtins, name)

    def means_builtin(self, name: str) -> bool:
        """Whether ``name`` in the user's function is Python's builtin of that name (not a
        local, a closure's or the module's own ``reversed``)."""
        if name in self.locals:
            return False
        try:
            return self.lookup(name) is getattr(builtins, name)
        except (AttributeError, ValueError):
            return False

    def bind(self, preferred: str, obj) -> str:
        """A name under which the generated code sees ``obj``: ``preferred`` when it is free or
        already means ``obj`` in the user's function, else a fresh variant (``np_1``)."""
        if preferred in self.bindings:
            if self.bindings[preferred] is obj:
                return preferred
        elif preferred not in self.namer.taken and preferred not in getattr(
                self.fn, "__globals__", {}) or self._means(preferred, obj):  # (a global of the
            # module's, which a helper inlined later may read, is not shadowed either)
            self.namer.taken.add(preferred)
            self.bindings[preferred] = obj
            return preferred
        for name, value in self.bindings.items():
            if value is obj and name.startswith(preferred + "_"):
                return name
        name = self.namer.fresh(preferred)
        while name in getattr(self.fn, "__globals__", {}):  # (a global an inlined helper of
            name = self.namer.fresh(preferred)  # the module may read: not shadowed)
        self.bindings[name] = obj
        return name

    def _means(self, name: str, obj) -> bool:
        if name in self.locals:
            return False
        try:
            return self.lookup(name) is obj
        except (AttributeError, ValueError):
            return False
