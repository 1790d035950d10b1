"""The compile cache: function -> {(code, wrt, mode, options, ...): Compiled}, thread-safe.

Each function's entries live on the function itself (in its ``__dict__``), so they go away with
it, even though a compiled gradient refers back to the function's module globals (a weakly keyed
global table would keep such functions alive forever). Keying on the code object too means an
edited and re-executed function (new code) is compiled afresh.
"""

from __future__ import annotations

import threading
import weakref

_ATTR = "__transpiler_cache__"
_FUNCTIONS: weakref.WeakSet = weakref.WeakSet()  # functions holding entries: for clear and size
LOCK = threading.RLock()
BOUNDED = 32
_BOUNDED = "bounded"  # entry: the keys of bounded entries, oldest first


def _entries(fn, create: bool = False) -> dict:
    entries = fn.__dict__.get(_ATTR)
    if entries is None:
        entries = {}
        if create:
            fn.__dict__[_ATTR] = entries
            _FUNCTIONS.add(fn)
    return entries


def get_or_compile(fn, key: tuple, compile_, bounded: bool = False):
    """The cached result for ``(fn, key)``; compile it once (under the lock) on a miss.
    Of the entries compiled ``bounded`` (variants for functions given as arguments, which a
    caller may make anew at each call) only the ``BOUNDED`` latest stay."""
    full = (fn.__code__,) + key
    found = _entries(fn).get(full)
    if found is not None and not _stale(fn, found):
        return found
    with LOCK:
        entries = _entries(fn, create=True)
        if full not in entries or _stale(fn, entries[full]):
            entries[full] = compile_()
            if bounded:
                latest = entries.setdefault(_BOUNDED, [])
                latest[:] = [k for k in latest if k != full] + [full]
                for old in latest[:-BOUNDED]:
                    entries.pop(old, None)
                del latest[:-BOUNDED]
        return entries[full]


def _stale(fn, entry) -> bool:
    """An entry compiled against globals the user has since rebound (see passes/resolve)."""
    return hasattr(entry, "stale") and entry.stale(fn)


def lookup(fn, key: tuple):
    return _entries(fn).get((fn.__code__,) + key)


def store(fn, key: tuple, value) -> None:
    with LOCK:
        _entries(fn, create=True)[(fn.__code__,) + key] = value


def forget(fn, key: tuple) -> None:
    with LOCK:
        _entries(fn).pop((fn.__code__,) + key, None)


def size() -> int:
    """How many functions have cached compiles."""
    return len(_FUNCTIONS)


def clear() -> None:
    with LOCK:
        for fn in list(_FUNCTIONS):
            fn.__dict__.pop(_ATTR, None)
        _FUNCTIONS.clear()
