"""The compile cache: function object -> {(code, wrt, mode, options): Compiled}, thread-safe.

Entries are weakly keyed on the user's function, so they go away with it; keying on the code
object too means an edited and re-executed function (new code) is compiled afresh.
"""

from __future__ import annotations

import threading
import weakref

_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
LOCK = threading.RLock()


def get_or_compile(fn, key: tuple, compile_):
    """The cached result for ``(fn, key)``; compile it once (under the lock) on a miss."""
    full = (fn.__code__,) + key
    entries = _CACHE.get(fn)
    if entries is not None and full in entries:
        return entries[full]
    with LOCK:
        entries = _CACHE.setdefault(fn, {})
        if full not in entries:
            entries[full] = compile_()
        return entries[full]


def lookup(fn, key: tuple):
    return _CACHE.get(fn, {}).get((fn.__code__,) + key)


def store(fn, key: tuple, value) -> None:
    with LOCK:
        _CACHE.setdefault(fn, {})[(fn.__code__,) + key] = value


def forget(fn, key: tuple) -> None:
    with LOCK:
        _CACHE.get(fn, {}).pop((fn.__code__,) + key, None)


def clear() -> None:
    with LOCK:
        _CACHE.clear()
