"""Binomial checkpointing of a loop: what ``checkpoint(range(n), snapshots=s)`` compiles to.

Rather than taping every iteration, the gradient of a checkpointed loop keeps a few states of
the forward sweep (snapshots) and recomputes the others from them in the reverse sweep. With
``snapshots=s`` and a known trip count the snapshots follow Griewank and Walther's binomial
schedule (revolve), which reverses ``n`` steps with the fewest recomputations any schedule with
``s`` snapshots can achieve; with ``every=k`` the state before every ``k``-th step is kept and a
segment is re-run, storing all its states, when it is reversed.

The compiler lifts the loop body into a step function, so the scheduler only sees callables and
opaque states: ``step(item, state) -> (state, done)`` runs one iteration (``done`` is the body's
``break``) and ``step_adjoint(item, state, cotangent)`` reruns one iteration taping and returns
the cotangent of its input state. The scheduler never copies, compares or mutates a state;
the calls the compiler makes (at the end) hand the step copies of the entries it writes into.

Counting: a snapshot is a state the scheduler keeps for later; the initial state is one of them.
Besides its snapshots the scheduler holds one live state: the one being advanced, and between
``forward`` and ``reverse`` the state before the last step, which ``reverse`` needs first.
"""

from __future__ import annotations

import copy
import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from runtime.broadcast import zeros_like_grad

Step = Callable[[Any, Any], tuple[Any, bool]]
StepAdjoint = Callable[[Any, Any, Any], Any]


def _count(name: str, value, caller: str = "checkpoint") -> int:
    """``value`` as a positive int, or a clear TypeError / ValueError naming ``name``."""
    if isinstance(value, bool):
        raise TypeError(f"{caller}(): {name}= must be an int, got a bool")
    try:
        count = operator.index(value)
    except TypeError:
        raise TypeError(f"{caller}(): {name}= must be an int, "
                        f"got {type(value).__name__}") from None
    if count < 1:
        raise ValueError(f"{caller}(): {name}= must be a positive int, got {count}")
    return count


def _mode(snapshots, every) -> tuple[int | None, int | None]:
    """The validated ``(snapshots, every)``: exactly one of them, a positive int."""
    if (snapshots is None) == (every is None):
        got = "both" if snapshots is not None else "neither"
        raise ValueError(f"checkpoint() takes exactly one of snapshots= or every=, got {got}")
    if snapshots is not None:
        return _count("snapshots", snapshots), None
    return None, _count("every", every)


def _sized(items) -> Sequence:
    """``items`` as an indexable sequence of known length (snapshots= needs the trip count)."""
    if isinstance(items, Sequence):
        return items
    if not hasattr(items, "__len__"):
        raise TypeError(f"checkpoint(..., snapshots=) needs a loop with a known trip count "
                        f"(a range or a sequence), got a {type(items).__name__}; "
                        f"use every= for an iterator")
    return list(items)


def checkpoint(iterable, snapshots: int | None = None, every: int | None = None):
    """The loop marker: in the plain function it returns `iterable` unchanged (validating the
    arguments: exactly one of snapshots/every, each a positive int; snapshots >= 1).

    ``snapshots=s`` reverses the loop by the binomial schedule with ``s`` stored states (its
    gradient then needs the trip count: a range, or a sequence, which the compiler walks by
    index); ``every=k`` keeps the state before every ``k``-th step."""
    _mode(snapshots, every)
    return iterable


def _split(n: int, s: int) -> int:
    """How many steps to advance before the next snapshot, to reverse ``n >= 2`` steps with
    ``s >= 2`` snapshots (the first at the start) by the fewest recomputations.

    Revolve's rule: with ``beta(s, t) = C(s + t, s)`` and ``t`` the least with
    ``n <= beta(s, t)``, one of the optimal split points in closed form, O(t) arithmetic."""
    t, beta = 0, 1  # beta = C(s + t, s)
    while beta < n:
        t += 1
        beta = beta * (s + t) // t
    b1 = beta * t // (s + t)  # C(s + t - 1, s)
    b2 = b1 * s // (s + t - 1)  # C(s + t - 2, s - 1)
    b3 = b2 * (s - 1) // (s + t - 2) if s > 2 else 1  # C(s + t - 3, s - 2)
    b4 = b2 * (t - 1) // s  # C(s + t - 3, s)
    b5 = 0 if s < 3 else b3 * (s - 2) // t if s > 3 else 1  # C(s + t - 3, s - 3)
    if n <= b1 + b3:
        m = b4
    elif n >= beta - b5:
        m = b1
    else:
        m = n - b2 - b3
    return max(m, 1)


class Sweep:
    """What `forward` leaves for `reverse`: the items run (``items``), how many steps ran
    (``steps``), the stored states by the index of the step they come before (``snapshots``),
    the state before the last step (``last``) and the sub-schedules still to reverse
    (``pending``: ``(start, stop, slots)`` triples, the last one first). `reverse` consumes it."""

    __slots__ = ("items", "steps", "snapshots", "last", "pending")

    def __init__(self, items: Sequence, steps: int, snapshots: dict[int, Any], last,
                 pending: list[tuple[int, int, int]]):
        self.items = items
        self.steps = steps
        self.snapshots = snapshots
        self.last = last
        self.pending = pending

    def __repr__(self) -> str:
        kept = "reversed" if self.snapshots is None else f"{len(self.snapshots)} snapshots"
        return f"Sweep({self.steps} steps, {kept})"


class _Executor:
    """Runs a schedule's actions on real states (the counterpart of `_Trace`)."""

    __slots__ = ("step", "step_adjoint", "items", "snapshots", "live", "result", "cotangent")

    def __init__(self, step: Step, items: Sequence, live, snapshots: dict[int, Any],
                 step_adjoint: StepAdjoint | None = None, cotangent=None):
        self.step = step
        self.step_adjoint = step_adjoint
        self.items = items
        self.snapshots = snapshots
        self.live = live
        self.result = None
        self.cotangent = cotangent

    def store(self, k: int) -> None:
        self.snapshots[k] = self.live

    def restore(self, k: int) -> None:
        self.live = self.snapshots[k]

    def free(self, k: int) -> None:
        del self.snapshots[k]

    def advance(self, start: int, stop: int) -> int | None:
        """Run steps ``start..stop-1`` from the live state; the index of a step that returned
        done (the live state is then the state before it, its result in ``result``), else
        None."""
        step, items, live = self.step, self.items, self.live
        self.live = None
        for k in range(start, stop):
            new, done = step(items[k], live)
            if done:
                self.live, self.result = live, new
                return k
            live = new
        self.live = live
        return None

    def output(self, k: int) -> None:
        """Run the last step ``k`` of the forward sweep: its result is the loop's, and the
        state before it stays live for the first adjoint."""
        self.result, _ = self.step(self.items[k], self.live)

    def adjoint(self, k: int) -> None:
        self.cotangent = self.step_adjoint(self.items[k], self.live, self.cotangent)
        self.live = None


class _Trace:
    """Records a schedule's actions instead of running them (for `schedule`)."""

    __slots__ = ("actions",)

    def __init__(self):
        self.actions: list[tuple[str, int]] = []

    def store(self, k: int) -> None:
        self.actions.append(("store", k))

    def restore(self, k: int) -> None:
        self.actions.append(("restore", k))

    def free(self, k: int) -> None:
        self.actions.append(("free", k))

    def advance(self, start: int, stop: int) -> None:
        self.actions.extend(("advance", k) for k in range(start, stop))

    def output(self, k: int) -> None:
        self.actions.append(("advance", k))

    def adjoint(self, k: int) -> None:
        self.actions.append(("adjoint", k))


def _descend(run: _Executor | _Trace, n: int, s: int) -> list[tuple[int, int, int]]:
    """The first sweep over ``n >= 1`` steps with ``s`` snapshots: store the start, advance
    to each split point of the binomial recursion and store it, then run to the last step.

    Returns the sub-schedules left to reverse, ``(start, stop, slots)``, the last on top: the
    left part of every split, and the final one whose last step's input is the live state. A
    step that returns done cuts the sweep there: the sub-schedule being advanced through ends
    after that step, and those below keep their plan."""
    pending: list[tuple[int, int, int]] = []
    start, slots = 0, s
    run.store(0)
    while n - start > 1 and slots > 1:
        split = start + _split(n - start, slots)
        broke = run.advance(start, split)
        if broke is not None:
            pending.append((start, broke + 1, slots))
            return pending
        run.store(split)
        pending.append((start, split, slots))
        start, slots = split, slots - 1
    broke = run.advance(start, n - 1)
    if broke is None:
        run.output(n - 1)
        broke = n - 1
    pending.append((start, broke + 1, slots))
    return pending


def _unwind(run: _Executor | _Trace, pending: list[tuple[int, int, int]]) -> None:
    """Reverse the sub-schedules left by the forward sweep, the last first.

    Each ``(start, stop, slots)`` has the state before ``start`` stored and reverses steps
    ``start..stop-1`` with at most ``slots`` snapshots (its own included): one step directly,
    with one slot by re-running from the start for every step, otherwise by advancing to the
    split point, storing it, and reversing the right part with one slot fewer, then the left.
    The stack holds at most one entry per slot in use, so there is no recursion per step."""
    start, stop, slots = pending.pop()
    run.adjoint(stop - 1)  # the live state from the forward sweep
    if stop - 1 == start:
        run.free(start)
    else:
        pending.append((start, stop - 1, slots))
    live = None  # the index of the live state, None when it is spent
    splits: dict[tuple[int, int], int] = {}
    while pending:
        start, stop, slots = pending.pop()
        if live != start:
            run.restore(start)
        if stop - start == 1:
            run.adjoint(start)
            run.free(start)
            live = None
        elif slots == 1:
            run.advance(start, stop - 1)
            run.adjoint(stop - 1)
            for k in range(stop - 2, start - 1, -1):
                run.restore(start)
                run.advance(start, k)
                run.adjoint(k)
            run.free(start)
            live = None
        else:
            key = (stop - start, slots)
            split = splits.get(key)
            if split is None:
                split = splits[key] = _split(*key)
            split += start
            run.advance(start, split)
            run.store(split)
            pending.append((start, split, slots))
            pending.append((split, stop, slots - 1))
            live = split


def _every(step: Step, items: Iterable, state, every: int) -> tuple[object, Sweep]:
    """`forward` with ``every=k``: keep the state before steps 0, k, 2k...; ``items`` may be
    any iterable (the items consumed are kept to replay the steps)."""
    sequence = items if isinstance(items, Sequence) else None
    consumed = [] if sequence is None else None
    snapshots: dict[int, Any] = {}
    end = object()
    iterator = iter(items)
    item = next(iterator, end)
    live = result = state
    steps = 0
    while item is not end:
        if steps % every == 0:
            snapshots[steps] = live
        if consumed is not None:
            consumed.append(item)
        steps += 1
        result, done = step(item, live)
        if done:
            break
        item = next(iterator, end)  # before dropping `live`: it is kept if this was the last
        if item is not end:
            live = result
    if not steps:
        return state, Sweep(consumed if sequence is None else sequence, 0, {}, None, [])
    pending = [(k, min(k + every, steps), every) for k in range(0, steps, every)]
    return result, Sweep(consumed if sequence is None else sequence, steps, snapshots, live,
                         pending)


def forward(step: Step, items, state, snapshots: int | None = None,
            every: int | None = None) -> tuple[object, Sweep]:
    """Run the loop forward without taping: for item in items: state, done = step(item, state);
    stop after a step that returns done=True (the body's `break`). Return the final state and
    the Sweep holding the stored snapshots (and the items run, or enough to recover them), for
    `reverse`. With snapshots=s the states kept are chosen by the binomial (revolve) schedule for
    the trip count len(items) (items is then a range or a sequence with len); with every=k the
    state before every k-th step is kept (items may be any iterable, trip count unknown)."""
    snapshots, every = _mode(snapshots, every)
    if every is not None:
        return _every(step, items, state, every)
    items = _sized(items)
    n = len(items)
    if n == 0:
        return state, Sweep(items, 0, {}, None, [])
    run = _Executor(step, items, state, {})
    pending = _descend(run, n, snapshots)
    return run.result, Sweep(items, pending[-1][1], run.snapshots, run.live, pending)


def reverse(step: Step, step_adjoint: StepAdjoint, sweep: Sweep, cotangent):
    """Reverse the loop: given the cotangent of the final state, return the cotangent of the
    state before the first step. step_adjoint(item, state, cotangent) -> cotangent of `state`
    (it reruns that one step taping and reverses it); states it needs that are not stored are
    recomputed with `step` from the nearest stored snapshot.

    It frees the snapshots as it goes, so a Sweep is reversed once. After a `break` the
    sub-schedules before the one it cut are reversed as planned; the cut one reverses its last
    step from the live state and the rest by a fresh binomial schedule with the same slots."""
    if sweep.pending is None:
        raise RuntimeError("this Sweep was already reversed (reverse() frees its snapshots)")
    pending = sweep.pending
    if not pending:
        sweep.pending = None
        return cotangent
    run = _Executor(step, sweep.items, sweep.last, sweep.snapshots, step_adjoint, cotangent)
    sweep.snapshots = sweep.last = sweep.pending = None
    _unwind(run, pending)
    return run.cotangent


def schedule(n: int, snapshots: int) -> list[tuple[str, int]]:
    """The revolve schedule for n steps with `snapshots` slots as a list of actions, for
    reading and tests: ("advance", k) run step k plainly, ("store", k) keep the state before
    step k, ("restore", k), ("adjoint", k), ("free", k).

    It is what `forward` then `reverse` do: ("advance", k) turns the live state (the one before
    step k) into the one after it, ("restore", k) makes snapshot k live, ("adjoint", k) spends
    the live state, except that the forward sweep's last advance is the loop's result and
    leaves the state before it live for the first adjoint."""
    snapshots = _count("snapshots", snapshots, "schedule")
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"schedule(): n must be an int, got {type(n).__name__}")
    if n < 0:
        raise ValueError(f"schedule(): n must be >= 0, got {n}")
    trace = _Trace()
    if n:
        _unwind(trace, _descend(trace, n, snapshots))
    return trace.actions


# --- the calls the compiler makes of a marked loop (transpiler/passes/checkpoint.py) ---


def checkpointed_loop(step, items, *state, snapshots=None, every=None, written=()):
    """The plain loop, where no gradient flows through it: ``state, done = advance(item,
    state)`` for each item until ``done`` (the body's ``break``); the final state. The step is
    given copies of what it writes into (an entry may be an argument's array)."""
    advance, state = _plain(step, written), tuple(state)
    for item in items:
        state, done = advance(item, state)
        if done:
            break
    return state


def _plain(step, written: tuple):
    """``step`` in the scheduler's convention, ``(item, state) -> (state, done)``, given fresh
    copies of the state's entries it writes into (``written``), so no snapshot changes: an
    array's copy, a deep copy of anything else (an object whose array field it writes into)."""
    def advance(item, state):
        if written:
            state = tuple(_fresh(s) if i in written else s for i, s in enumerate(state))
        done, *out = step(item, *state)
        return tuple(out), done
    return advance


def _fresh(value):
    return value.copy() if type(value) is np.ndarray else copy.deepcopy(value)


def checkpoint_forward(step, items, state: tuple, snapshots=None, every=None, written=()):
    """The primal of a checkpointed loop: the final state, and what ``checkpoint_reverse`` needs
    (the scheduler's snapshots, the plain step, the options)."""
    final, sweep = forward(_plain(step, written), items, tuple(state), snapshots, every)
    return final, (sweep, step, written, snapshots, every)


def checkpoint_reverse(pair, saved, cotangent: tuple, active: tuple):
    """The adjoint of a checkpointed loop: the cotangents of the ``active`` entries of the
    initial state, from the final state's ``cotangent``. Each step is rerun taping by the
    step's compiled forward (``pair.forward``) and reversed by its backward."""
    sweep, step, written, _, _ = saved

    def step_adjoint(item, state, ct):
        _, residuals = pair.forward(item, *(_fresh(s) if i in written else s
                                            for i, s in enumerate(state)))
        grads = pair.backward(residuals, (0.0, *ct))
        out = [zeros_like_grad(s) for s in state]
        for k, i in enumerate(active):
            out[i] = grads[k]
        return tuple(out)

    first = reverse(_plain(step, written), step_adjoint, sweep, tuple(cotangent))
    return tuple(first[i] for i in active)
