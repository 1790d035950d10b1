"""What ``grad`` and ``value_and_grad`` return: a gradient compiled on first use, one variant
per pattern of argument kinds, with the argument checks of the general call path.

The public entry points live in ``api.py``; ``grad(grad(f))`` in ``higher.py``. How a compiled
variant is printed, loaded and called directly is the backend's (``backends/``)."""

from __future__ import annotations

import dataclasses
import inspect
from typing import NamedTuple

import numpy as np

from runtime import lazy
from runtime.objects import is_object
from runtime.sparse import is_sparse
from transpiler import cache, memory
from transpiler.arguments import differentiable, objects_in
from transpiler.backends import backend_for
from transpiler.backends.python import FLOAT, NUMBER, ArrayOf
from transpiler.context import Options
from transpiler.emit import note_origin
from transpiler.errors import TranspileError
from transpiler.function_args import Functions, defaults_left, functions_in, is_function, known
from transpiler.pipeline import Compiled, compile_function


def normalise_wrt(fn, wrt) -> tuple[tuple[str, ...], tuple[int, ...], bool]:
    """Parameter names and positions for ``wrt`` (int, str, or a tuple of those)."""
    signature = inspect.signature(fn).parameters.values()
    params = [p for p in signature if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    names = [p.name for p in params]
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                        p.POSITIONAL_OR_KEYWORD)]
    star = next((p.name for p in signature if p.kind == p.VAR_POSITIONAL), None)
    single = not isinstance(wrt, (tuple, list))
    out = []
    for w in ([wrt] if single else wrt):
        if isinstance(w, bool) or not isinstance(w, (int, str)):
            raise TypeError(f"wrt must be a parameter position, a name or a tuple of them, "
                            f"got {w!r}")
        if isinstance(w, int):  # a position among the positional arguments, as JAX's argnums
            if star is not None and w >= len(positional):
                raise TypeError(
                    f"wrt={w}: {fn.__name__} receives that argument in *{star}, which cannot "
                    f"be differentiated yet; give it a parameter of its own (def "
                    f"{fn.__name__}(x, y, ...)), or pass the arrays as one tuple and "
                    "differentiate that")
            if not -len(positional) <= w < len(positional):
                raise ValueError(f"wrt={w}: {fn.__name__} has {len(positional)} positional "
                                 f"parameters {positional}")
            w = positional[w]
        if w not in names:
            raise ValueError(f"wrt={w!r}: {fn.__name__} has no parameter named {w!r} "
                             f"(parameters: {', '.join(names)})")
        out.append(w)
    positions = tuple(names.index(w) if params[names.index(w)].kind != params[0].KEYWORD_ONLY
                      else -1 for w in out)
    return tuple(out), positions, single


class GradientFunction:
    """A compiled-on-first-use gradient of ``fn``; call it like ``fn``.

    ``.source`` is the generated Python source (compiling it if needed). Each pattern of which
    positional arguments are Python numbers and which NumPy arrays (with no keywords) runs its
    own variant, compiled knowing that: fewer ``rt.unbroadcast`` calls and tape entries. So does
    each set of parameters given objects (arguments.py), whose methods are never NumPy's.
    """

    def __init__(self, fn, wrt, mode: str, options: Options):
        check_function(fn)
        self.__wrapped__ = fn
        self.__name__ = f"{mode}_{fn.__name__}"
        self.__qualname__ = f"{mode}({fn.__qualname__})"
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self._given_wrt = wrt
        self._wrt, positions, self._single = normalise_wrt(fn, wrt)
        self._checks = tuple(zip(self._wrt, positions, strict=True))
        self._mode, self._options = mode, options
        self._variants: dict[tuple, Compiled] = {}  # positions of Python-number arguments -> code
        self._code = None
        # variant keys of calls with Python numbers and NumPy arrays only, whose argument
        # checks passed: they depend on those kinds alone, so such a call skips them
        self._plain: set[tuple] = set()
        self._positions = tuple(p for _, p in self._checks if p >= 0)  # (an int is no float)

    @property
    def wrt(self) -> tuple[str, ...]:
        """The names of the parameters differentiated with respect to."""
        return self._wrt

    @property
    def backend(self) -> str:
        """The backend asked for: ``"python"``, ``"numba"`` or ``"auto"``."""
        return self._options.backend

    def on_backend(self, backend: str) -> GradientFunction:
        """The same gradient compiled by another backend (``grad(grad(f))`` differentiates the
        Python code of a gradient compiled with Numba)."""
        return self.with_options(backend=backend)

    def with_options(self, **changes) -> GradientFunction:
        """The same gradient compiled with other options (``context.Options``): a gradient
        differentiated again is the Python backend's, with checkpointed loops taped whole."""
        options = dataclasses.replace(self._options, **changes)
        if options == self._options:
            return self
        return GradientFunction(self.__wrapped__, self._given_wrt, self._mode, options)

    def __reduce__(self):
        """Pickled as the call that made it (for ``multiprocessing`` and Dask workers): the
        function by reference (a module-level one), ``wrt`` and the options; compiled again
        where it is unpickled, on its first call there."""
        cls = next(k for k in type(self).__mro__ if "_own_class" not in k.__dict__)
        return cls, self._made_from()

    def _made_from(self) -> tuple:
        return self.__wrapped__, self._given_wrt, self._mode, self._options

    @property
    def has_aux(self) -> bool:
        """Whether ``f`` returns ``(value, aux)``, ``aux`` passed through (``has_aux=True``)."""
        return self._options.aux

    @property
    def mode(self) -> str:
        """``"grad"`` or ``"value_and_grad"``."""
        return self._mode

    def _compile(self, kinds: tuple = ()) -> Compiled:
        fn = self.__wrapped__
        if fn.__code__ is not self._code:
            self._variants, self._code = {}, fn.__code__
        params = inspect.getfullargspec(fn).args
        objects = next((k for k in kinds if isinstance(k, frozenset)), frozenset())
        functions = kinds[-1] if kinds and isinstance(kinds[-1], Functions) else \
            defaults_left(fn, len(kinds))  # (positional numbers and arrays only)
        scalars = frozenset(p for p, k in zip(params, kinds, strict=False)
                            if k == _NUMBER or k == _COMPLEX)
        complex_numbers = frozenset(p for p, k in zip(params, kinds, strict=False)
                                    if k == _COMPLEX)
        complex_values = frozenset(p for p, k in zip(params, kinds, strict=False)
                                   if k == _COMPLEX_ARRAY)
        sparse_values = frozenset(p for p, k in zip(params, kinds, strict=False)
                                  if k == _SPARSE)
        arrays = {p: ArrayKind(k[0], np.dtype(k[1]).str)
                  for p, k in zip(params, kinds, strict=False) if type(k) is tuple}
        key = (self._wrt, self._mode, self._options, scalars, frozenset(arrays.items()),
               complex_numbers, complex_values, sparse_values) + (
            (objects,) if objects else ()) + ((functions,) if functions else ())
        compiled = cache.get_or_compile(fn, key, lambda: compile_function(
            fn, self._wrt, self._mode, self._options, scalars, arrays=arrays, objects=objects,
            known=known(functions), complex_numbers=complex_numbers,
            complex_values=complex_values, sparse_values=sparse_values),
            bounded=bool(functions))
        if len(self._variants) >= _VARIANTS:  # (new functions given each call)
            self._variants.clear()
        self._variants[kinds] = compiled
        return compiled

    _direct_keywords: frozenset = frozenset()  # the keyword arguments a direct call passes
    _dispatched: tuple = (None, None)  # the kinds and variant of the installed dispatcher

    def _passed(self, compiled: Compiled, kinds: tuple, args: tuple,
                numbers_only: bool = False) -> None:
        """A call with Python numbers and NumPy arrays only (and exactly the keyword arguments
        ``_direct_keywords``) passed the general path's checks and gave a concrete result: its
        pattern's checks depend on those kinds alone, so later calls of the same kinds skip
        them (``_plain``). The first such pattern called again goes straight to ``compiled``'s
        function from then on, through a dispatcher of its own (the backend's ``fast_path``)
        installed as this object's ``__call__``: such calls then cost two Python calls and a
        check per global the code depends on, not the general path's argument checks. (Not on
        the first call: a gradient called once never pays for a dispatcher.)"""
        if len(kinds) != len(args) or _OTHER in kinds or _COMPLEX in kinds \
                or numbers_only and any(k != _NUMBER for k in kinds):
            return
        if kinds not in self._plain:
            self._plain.add(kinds)
            return
        if self._dispatched[0] not in (None, kinds) or self._dispatched[1] is compiled:
            return  # (another pattern has the dispatcher; or this one has it, for this variant)
        if compiled.written or not (self._single or len(self._wrt) > 1 or self._direct_keywords):
            return  # (a copy to check for shared memory; a result to arrange)
        backend = backend_for(self._options)
        differentiated = set(self._positions)
        call = backend.fast_path(self.__wrapped__, compiled, tuple(
            (FLOAT if p in differentiated else NUMBER) if k == _NUMBER else
            ArrayOf(args[p].ndim, args[p].dtype) for p, k in enumerate(kinds)),
            self._direct_keywords, self._call)
        if call is None:
            return
        self._dispatched = (kinds, compiled)
        cls = type(self)
        if "_own_class" not in cls.__dict__:  # Python finds __call__ on the type
            cls = type(cls.__name__, (cls,), {"_own_class": True, "__module__": cls.__module__,
                                              "__qualname__": cls.__qualname__})
            self.__class__ = cls
        cls.__call__ = staticmethod(call)

    @property
    def source(self) -> str:
        """The generated source of the general (any shapes) variant."""
        return (self._variants.get(()) or self._compile()).source

    def source_for(self, *args, **kwargs) -> str:
        """The generated source that a call with these arguments runs (the variant for their
        pattern of Python-number arguments)."""
        return self.compiled_for(*args, **kwargs).source

    def compiled_for(self, *args, **kwargs) -> Compiled:
        """The compiled variant a call with these arguments runs (compiling it if needed; with
        Numba, for these arguments' types, so that its ``.backend`` says which code runs)."""
        kinds = kinds_of(self.__wrapped__, args, kwargs)
        compiled = self._variants.get(kinds) or self._compile(kinds)
        native = getattr(compiled.function, "compile_for", None)
        if native is not None and not kwargs:
            native(*args)
        return compiled

    def memory(self, *args, **kwargs):
        """What the gradient of this call stores for its reverse sweep, by source line
        (``transpiler.memory.MemoryReport``; ``str()`` prints it as a table). Runs it once."""
        compiled = self._checked(kinds_of(self.__wrapped__, args, kwargs), args, kwargs)
        return memory.report(self.__wrapped__.__qualname__, compiled.function,
                             compiled.source, args, kwargs)

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def _call(self, *args, **kwargs):
        kinds = kinds_of(self.__wrapped__, args, kwargs)
        if kinds in self._plain and not _int_given(args, self._positions):
            compiled = self._variants.get(kinds)  # (numbers and NumPy arrays checked before)
            if compiled is not None and self.__wrapped__.__code__ is self._code \
                    and not compiled.written and not compiled.stale(self.__wrapped__):
                try:
                    result = compiled.function(*args)
                except Exception as e:
                    note_origin(e)
                    raise
                if self._dispatched[1] is not compiled and self._dispatched[0] in (None, kinds):
                    self._passed(compiled, kinds, args)  # (a second call: a dispatcher)
                return self._arranged(result)
        compiled = self._checked(kinds, args, kwargs)
        lazy_in = lazy.any_lazy(args) or (bool(kwargs) and lazy.any_lazy(kwargs.values()))
        try:
            if lazy_in:
                with lazy.no_fallbacks():
                    result = compiled.function(*args, **kwargs)
            else:
                result = compiled.function(*args, **kwargs)
        except Exception as e:
            note_origin(e)
            raise
        if lazy_in or lazy.any_lazy(result if isinstance(result, tuple) else (result,)):
            result = self._concrete(result, args, kwargs)
        elif not kwargs:
            self._passed(compiled, kinds, args)
        return self._arranged(result)

    def _arranged(self, result):
        """The generated function's result as the caller asked for it: one gradient, or a
        tuple of them (``value_and_grad``: the value first)."""
        if self._single:
            return result
        if self._mode == "value_and_grad":
            return result[0], result[1] if len(self._wrt) > 1 else (result[1],)
        return result if len(self._wrt) > 1 else (result,)

    def _concrete(self, result, args: tuple, kwargs: dict):
        """``result`` with what must be concrete computed in one pass (``runtime.lazy``): the
        gradient of each argument that is not lazy and the value, unless every argument
        differentiated is lazy."""
        likes = []
        for name, pos in self._checks:
            value = args[pos] if 0 <= pos < len(args) else kwargs.get(name, MISSING)
            likes.append(_default(self.__wrapped__, name, pos) if value is MISSING else value)
        grads = tuple(likes) if len(likes) > 1 else likes[0]
        if self._mode != "value_and_grad":
            return lazy.concrete(result, grads)
        value = lazy.LAZY if all(lazy.is_lazy(v) for v in likes) else lazy.CONCRETE
        return lazy.concrete(result, (value, grads))

    def _checked(self, kinds: tuple, args: tuple, kwargs: dict) -> Compiled:
        """The variant for ``kinds``, (re)compiled if needed, once the arguments pass the
        checks: differentiated ones are floats or complex numbers (a complex one given by
        position, where the variant knows it: JAX's convention, rules/complex_rules.py), none is
        an array type of its own (``_kinds``), none shares memory with one the function writes
        into."""
        def known_complex(pos: int) -> bool:  # (a complex number or array the variant knows)
            return 0 <= pos < len(kinds) and (kinds[pos] in (_COMPLEX, _COMPLEX_ARRAY)
                                              or type(kinds[pos]) is tuple)

        for name, pos in self._checks:
            value = args[pos] if 0 <= pos < len(args) else kwargs.get(name, MISSING)
            if value is MISSING:  # not passed: the default (none: the call says so)
                value = _default(self.__wrapped__, name, pos)
                if value is MISSING:
                    continue
            if is_function(value):
                raise TypeError(f"cannot differentiate with respect to '{name}': it is the "
                                f"function {value!r:.60}, and functions given as arguments are "
                                "never differentiated; leave it out of wrt (to differentiate "
                                "a value it uses, pass that value as an argument)")
            if _is_complex(value) and not known_complex(pos):
                raise TypeError(f"{self.__wrapped__.__name__} was given the complex argument "
                                f"'{name}' by keyword or as a {type(value).__name__}; complex "
                                "numbers are taken by position, as a Python complex or a "
                                "complex NumPy array")
            if type(value) is not float and not differentiable(value) and not (
                    _is_complex(value) and known_complex(pos)):
                raise TypeError(f"cannot differentiate with respect to '{name}': it is "
                                f"{_describe(value)}; pass a float, a float array, a tuple, "
                                "list or dict of those, or an object holding them"
                                f"{_object_hint(value)}")
        for pos, a in enumerate(args):
            if _holds_complex(a):
                raise TypeError(f"{self.__wrapped__.__name__} was given a container holding "
                                f"complex numbers at position {pos}; complex numbers are not "
                                "supported yet")
            if _is_complex(a):
                if not known_complex(pos):
                    raise TypeError(
                        f"{self.__wrapped__.__name__} was given a complex argument at position "
                        f"{pos} of a type it does not take ({type(a).__name__}); pass a Python "
                        "complex or a complex NumPy array")
        for name, a in kwargs.items():
            if _holds_complex(a) or _is_complex(a):
                raise TypeError(f"{self.__wrapped__.__name__} was given a complex argument "
                                f"'{name}' by keyword; complex numbers are taken by position "
                                "(a Python complex or a complex NumPy array)")
        compiled = self._variants.get(kinds)
        if compiled is None or self.__wrapped__.__code__ is not self._code \
                or compiled.stale(self.__wrapped__):
            compiled = self._compile(kinds)
        if compiled.written:
            refuse_shared_memory(self.__wrapped__, compiled.written, args, kwargs)
        return compiled

    def __repr__(self) -> str:
        return f"<{self.__qualname__}, wrt={self._wrt if not self._single else self._wrt[0]!r}>"


class BoundGradient:
    """The gradient of a bound method ``obj.method``: the function's gradient with ``obj``
    passed first (``wrt`` positions count the method's own arguments, as the caller sees them)."""

    def __init__(self, method, wrt, mode: str, options: Options):
        self._made_with = (method, wrt, mode, options)  # (what pickles it)
        self.__self__ = method.__self__
        def shift(w):  # a position past the receiver
            return w + 1 if isinstance(w, int) and not isinstance(w, bool) and w >= 0 else w

        wrt = tuple(shift(w) for w in wrt) if isinstance(wrt, (tuple, list)) else shift(wrt)
        self._gradient = GradientFunction(method.__func__, wrt, mode, options)
        self.__name__, self.__qualname__ = self._gradient.__name__, self._gradient.__qualname__
        self.__wrapped__ = method

    def __call__(self, *args, **kwargs):
        return self._gradient(self.__self__, *args, **kwargs)

    def __reduce__(self):
        return BoundGradient, self._made_with

    @property
    def source(self) -> str:
        return self._gradient.source

    def source_for(self, *args, **kwargs) -> str:
        return self._gradient.source_for(self.__self__, *args, **kwargs)


MISSING = object()  # an argument the caller did not pass


_OTHER, _NUMBER, _COMPLEX, _COMPLEX_ARRAY, _SPARSE = 0, 1, 2, 3, 4  # an argument that is
# anything else, a Python number (a float or an int), a Python complex number, a complex array
# that is not NumPy's (a Dask array: its variant has no array kind), a scipy.sparse matrix


class ArrayKind(NamedTuple):
    """What a variant knows of a NumPy array argument (as Numba specialises per signature):
    its number of dimensions and its dtype, so that ``x[i]`` of a 1-D float array is known to
    be a scalar."""

    ndim: int
    dtype: str  # np.dtype.str, e.g. '<f8'



_VARIANTS = 64  # variants one gradient keeps at hand (more: in the compile cache)


def kinds_of(fn, args: tuple, kwargs: dict) -> tuple:
    """The variant key: for each positional argument, whether it is a Python number, a NumPy
    array (``(ndim, dtype.char)``, the variant's ``ArrayKind``) or anything else (none, the
    general variant, when keywords are passed), then, if the
    call gives any parameter an object, the set of those (arguments.objects_in, which also
    refuses array types of their own), then the functions it gives (function_args)."""
    if kwargs:
        kinds: tuple = ()
    else:
        found, plain = [], True  # (a loop: a generator costs more than the rest of the path)
        for a in args:
            kind = type(a)
            if kind is float or kind is int:
                found.append(_NUMBER)
            elif kind is complex:
                found.append(_COMPLEX)
            elif kind is np.ndarray and not (dtype := a.dtype).hasobject:
                found.append((a.ndim, dtype.char))  # (an array's kind: its ndim and dtype)
            else:
                found.append(_COMPLEX_ARRAY if lazy.is_lazy(a) and a.dtype.kind == "c"
                             else _SPARSE if is_sparse(a) else _OTHER)
                plain = False
        kinds = tuple(found)
        if plain:
            return kinds
    objects = objects_in(fn, args, kwargs)
    functions = functions_in(fn, args, kwargs)
    return kinds + ((objects,) if objects else ()) + ((functions,) if functions is not None
                                                       else ())


def _int_given(args: tuple, positions: tuple) -> bool:
    """Whether an int is given at one of the differentiated ``positions`` (refused there)."""
    for p in positions:
        if p < len(args) and type(args[p]) is int:
            return True
    return False


def _default(fn, name: str, pos: int):
    """The default value of parameter ``name`` (at position ``pos``, -1 if keyword-only), or
    ``MISSING``."""
    if pos < 0:
        return (fn.__kwdefaults__ or {}).get(name, MISSING)
    defaults = fn.__defaults__ or ()
    i = pos - (fn.__code__.co_argcount - len(defaults))
    return defaults[i] if 0 <= i < len(defaults) else MISSING


def _is_complex(value) -> bool:
    """Whether an argument is a complex number or a complex NumPy (or Dask) array."""
    return type(value) is complex or isinstance(value, np.complexfloating) or (
        (type(value) is np.ndarray or lazy.is_lazy(value)) and value.dtype.kind == "c")


def _holds_complex(value) -> bool:
    """Whether a list, tuple or dict argument holds a complex number or array (one level)."""
    if isinstance(value, dict):
        value = value.values()
    elif not isinstance(value, (list, tuple)):
        return False
    return any(_is_complex(v) for v in value)


def refuse_shared_memory(fn, written: frozenset[str], args: tuple, kwargs: dict) -> None:
    """A function that writes into argument ``a`` (on a private copy) cannot be given another
    argument sharing ``a``'s memory: NumPy would show the write through it, the copy would not."""
    bound = inspect.signature(fn).bind(*args, **kwargs).arguments
    arrays = [(n, v) for n, v in bound.items() if isinstance(v, np.ndarray)]
    for name in sorted(written & bound.keys()):
        for other, value in bound.items():  # an object whose attributes it writes, given twice
            if other != name and value is bound[name] and is_object(value):
                raise ValueError(
                    f"{fn.__name__} writes attributes of its argument '{name}', which is also "
                    f"argument '{other}': Python would show the change through '{other}', the "
                    f"compiled gradient writes into a copy. Pass a copy: copy.copy({other})")
        for other, value in arrays:
            if other != name and isinstance(bound[name], np.ndarray) \
                    and np.shares_memory(bound[name], value):
                raise ValueError(
                    f"{fn.__name__} writes into its argument '{name}', which shares memory with "
                    f"argument '{other}': NumPy would show the write through '{other}', the "
                    f"compiled gradient writes into a copy. Pass a copy: {other}.copy()")


def check_function(fn) -> None:
    """Refuse, at once, what has no Python source of its own."""
    if hasattr(fn, "__wrapped__"):
        raise TranspileError(
            f"{fn.__qualname__} is wrapped by a decorator; its source is not what runs",
            *_where(fn.__wrapped__),
            hint="apply grad to the undecorated function (or put @grad below the other decorator)")
    if not inspect.isfunction(fn):
        raise TranspileError(
            f"{fn!r} is not a Python function, so it has no source to differentiate",
            hint="wrap it in a function: def f(x): return np.sin(x)")


def _where(fn) -> tuple[str, int]:
    code = getattr(fn, "__code__", None)
    return getattr(code, "co_filename", "<unknown>"), getattr(code, "co_firstlineno", 0)


def _describe(value) -> str:
    dtype = getattr(value, "dtype", None)
    if isinstance(dtype, np.dtype):
        return f"an array of dtype {dtype}"
    return f"of type {type(value).__name__} ({value!r:.60})"


def _object_hint(value) -> str:
    """For an object (not a number, array or container): what to do instead."""
    if value is None or isinstance(value, (tuple, list, dict, int, float, complex, str, bytes,
                                           np.ndarray, np.generic)):
        return ""
    return "; an object is differentiable when one of its fields is a float or a float array"
