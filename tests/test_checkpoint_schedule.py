"""The binomial checkpointing scheduler (``runtime.checkpoint``): exactness against a
stored-everything reversal, the optimal number of recomputations, the memory bound, the
``schedule`` listing and the ``checkpoint`` marker's argument checks.

Counting convention: ``R(n, s)`` is the fewest plain steps that reverse ``n`` steps from the
stored initial state with ``s`` snapshots (the initial one included) besides the live state,
where each adjoint reruns its own step: it counts the first sweep's ``n - 1`` advances up to
the state before the last step, ``R(1, s) = 0`` and ``R(n, 1) = n(n - 1)/2``. Griewank and
Walther's closed form ``t*n - C(s + t, t - 1)`` is this ``R``. ``forward`` must also produce the
final state, one more plain step that a reversal never needs, so forward + reverse together make
exactly ``R(n, s) + 1`` plain steps for ``n >= 1`` (and none for ``n == 0``).
"""

import heapq
import math
import time
import weakref
from math import comb

import numpy as np
import pytest

from runtime.checkpoint import Sweep, checkpoint, forward, reverse, schedule

# --- the toy loops: a step and its hand-written exact adjoint --------------------------------


def scalar_step(item, x):
    return math.sin(x) * 1.25 + 0.1 * item


def scalar_adjoint(item, x, c):
    return c * (math.cos(x) * 1.25)


def vector_step(item, state):
    a, v = state
    return math.sin(a) + 0.1 * float(v @ v), np.tanh(v * a) + 0.01 * item


def vector_adjoint(item, state, cotangent):
    a, v = state
    ca, cv = cotangent
    d = 1.0 - np.tanh(v * a) ** 2
    return ca * math.cos(a) + float(cv @ (d * v)), ca * 0.2 * v + cv * d * a


LOOPS = {
    "scalar": (scalar_step, scalar_adjoint, 0.3, 1.0),
    "tuple": (vector_step, vector_adjoint, (0.3, np.array([0.5, -0.25, 1.0])),
              (1.0, np.array([0.5, 1.0, -2.0]))),
}


def same(x, y) -> bool:
    """Bit-for-bit equality of two states or cotangents."""
    if isinstance(x, tuple):
        return len(x) == len(y) and all(same(a, b) for a, b in zip(x, y, strict=True))
    if isinstance(x, np.ndarray):
        return x.dtype == y.dtype and np.array_equal(x, y)
    return type(x) is type(y) and x == y


def reference(f, adjoint, items, x0, seed, stop=None):
    """The final state, the input cotangent and the items run, by taping every state."""
    states, run = [x0], []
    for item in items:
        run.append(item)
        states.append(f(item, states[-1]))
        if item == stop:
            break
    c = seed
    for k in reversed(range(len(run))):
        c = adjoint(run[k], states[k], c)
    return states[-1], c, run


class Counted:
    """A loop's step and adjoint that count plain steps and record the adjoints' order."""

    def __init__(self, f, adjoint, stop=None):
        self.f, self.adjoint, self.stop = f, adjoint, stop
        self.steps = 0
        self.adjoints = []

    def step(self, item, state):
        self.steps += 1
        return self.f(item, state), item == self.stop

    def step_adjoint(self, item, state, cotangent):
        self.adjoints.append(item)
        return self.adjoint(item, state, cotangent)


def run_loop(kind, items, make_items=None, stop=None, **mode):
    """forward + reverse of a toy loop, checked bit for bit against the taped reversal."""
    f, adjoint, x0, seed = LOOPS[kind]
    expected_y, expected_c, run = reference(f, adjoint, make_items() if make_items else items,
                                            x0, seed, stop)
    loop = Counted(f, adjoint, stop)
    y, sweep = forward(loop.step, items, x0, **mode)
    assert isinstance(sweep, Sweep) and sweep.steps == len(run)
    assert same(y, expected_y)
    forward_steps = loop.steps
    assert forward_steps == len(run)
    c = reverse(loop.step, loop.step_adjoint, sweep, seed)
    assert same(c, expected_c)
    assert loop.adjoints == run[::-1]  # once per step run, the last first
    return loop


# --- the optimum, computed independently ------------------------------------------------------


def optimal_reversal(n_max: int, s_max: int) -> list[list[int]]:
    """``R[n][s]`` by dynamic programming over the first split point (see the module docstring):
    advance m steps, store, reverse the last n - m with s - 1 slots, then the first m with s;
    or do without the extra slot altogether."""
    R = [[0] * (s_max + 1) for _ in range(n_max + 1)]
    for n in range(2, n_max + 1):
        R[n][1] = n * (n - 1) // 2
        for s in range(2, s_max + 1):
            R[n][s] = min(R[n][s - 1], min(m + R[n - m][s - 1] + R[m][s] for m in range(1, n)))
    return R


def closed_form(n: int, s: int) -> int:
    """Griewank and Walther: t*n - C(s + t, t - 1) with C(s + t - 1, s) < n <= C(s + t, s)."""
    t = 0
    while comb(s + t, s) < n:
        t += 1
    return t * n - comb(s + t, t - 1) if t else 0


def fewest_steps_by_search(n: int, s: int) -> int:
    """The fewest plain steps of forward + reverse over every schedule whatsoever, by a
    shortest-path search over configurations (stored positions, live position, steps left to
    reverse, final state made): store, free and restore are free, a plain step costs 1, the
    step that makes the final state keeps its input live, and an adjoint needs the final
    state and the live state before the last step not yet reversed."""
    start = (frozenset(), 0, n, False)
    best = {start: 0}
    queue = [(0, 0, start)]
    tie = 0
    while queue:
        cost, _, node = heapq.heappop(queue)
        if cost > best[node]:
            continue
        stored, live, left, made = node
        if left == 0:
            return cost
        moves = [(0, (stored - {p}, live, left, made)) for p in stored]
        moves += [(0, (stored, p, left, made)) for p in stored]
        if live >= 0:
            if live not in stored and len(stored) < s:
                moves.append((0, (stored | {live}, live, left, made)))
            if live < n - 1:
                moves.append((1, (stored, live + 1, left, made)))
            elif not made:
                moves.append((1, (stored, live, left, True)))
            if made and live == left - 1:
                moves.append((0, (stored, -1, left - 1, made)))
        for step_cost, nxt in moves:
            if cost + step_cost < best.get(nxt, math.inf):
                best[nxt] = cost + step_cost
                tie += 1
                heapq.heappush(queue, (cost + step_cost, tie, nxt))
    raise AssertionError("no schedule")


def test_the_dynamic_programme_is_the_true_optimum():
    R = optimal_reversal(8, 4)
    for n in range(1, 9):
        for s in range(1, 4 if n > 6 else 5):
            assert fewest_steps_by_search(n, s) == R[n][s] + 1, (n, s)


def test_the_closed_form_agrees_with_the_dynamic_programme():
    R = optimal_reversal(200, 8)
    for n in range(1, 201):
        for s in range(1, 9):
            assert closed_form(n, s) == R[n][s], (n, s)


# --- exactness --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(LOOPS))
def test_snapshots_reverse_exactly(kind):
    for n in (0, 1, 2, 3, 4, 7, 12, 25):
        for s in (1, 2, 3, 5, n, n + 1, 40):
            if s >= 1:
                run_loop(kind, range(n), snapshots=s)
    run_loop(kind, [0.5 * k for k in range(9)], snapshots=3)  # a list of items


@pytest.mark.parametrize("kind", sorted(LOOPS))
def test_snapshots_break_reverses_exactly(kind):
    n = 20
    for s in (1, 2, 3, 4, 8, 25):
        for m in range(n):
            run_loop(kind, range(n), stop=m, snapshots=s)


@pytest.mark.parametrize("kind", sorted(LOOPS))
def test_every_reverses_exactly(kind):
    for n in (0, 1, 2, 3, 7, 20):
        for k in (1, 2, 3, 7, n + 5):
            run_loop(kind, range(n), every=k)
            run_loop(kind, list(range(n)), every=k)
            items = lambda n=n: (0.5 * j for j in range(n))  # noqa: E731
            loop = run_loop(kind, items(), make_items=items, every=k)
            # plain steps: n forward, then each segment's but the last's states re-run, and the
            # last segment's but for the state before the last step, which forward keeps
            segments, last = -(-n // k), n - k * (-(-n // k) - 1)
            assert loop.steps == (n + (n - segments) - (last >= 2) if n else 0)


@pytest.mark.parametrize("kind", sorted(LOOPS))
def test_every_break_reverses_exactly(kind):
    n = 15
    for k in (1, 2, 4, 20):
        for m in (0, 1, 3, 4, 8, 14):
            items = lambda: (0.5 * j for j in range(n))  # noqa: E731
            run_loop(kind, items(), make_items=items, stop=0.5 * m, every=k)


def test_every_consumes_a_generator_like_the_plain_loop():
    pulled = []

    def items():
        for j in range(6):
            pulled.append(j)
            yield j

    def step(item, x):
        pulled.append(("step", item))
        return x + item, item == 3

    y, sweep = forward(step, items(), 0.0, every=2)
    assert y == 6.0 and sweep.steps == 4
    assert pulled == [0, ("step", 0), 1, ("step", 1), 2, ("step", 2), 3, ("step", 3)]


def test_no_steps_return_the_cotangent_unchanged():
    seed = object()
    for mode in ({"snapshots": 3}, {"every": 2}):
        y, sweep = forward(lambda i, x: (x, False), iter(()) if "every" in mode else [], 5, **mode)
        assert y == 5 and sweep.steps == 0
        assert reverse(None, None, sweep, seed) is seed


def test_a_sweep_is_reversed_once():
    loop = Counted(scalar_step, scalar_adjoint)
    _, sweep = forward(loop.step, range(5), 0.3, snapshots=2)
    reverse(loop.step, loop.step_adjoint, sweep, 1.0)
    with pytest.raises(RuntimeError, match="already reversed"):
        reverse(loop.step, loop.step_adjoint, sweep, 1.0)


# --- the number of recomputations -------------------------------------------------------------


def test_snapshots_make_the_fewest_plain_steps():
    R = optimal_reversal(60, 6)
    for n in range(0, 61):
        for s in range(1, 7):
            loop = run_loop("scalar", range(n), snapshots=s)
            assert loop.steps == (R[n][s] + 1 if n else 0), (n, s)


def test_many_steps_without_recursion():
    n = 100_000
    for s in (8, 16):
        counts = [0, 0]

        def step(item, x, counts=counts):
            counts[0] += 1
            return x + 1, False

        def step_adjoint(item, x, c, counts=counts):
            counts[1] += 1
            return c + x

        y, sweep = forward(step, range(n), 0, snapshots=s)
        assert y == n and len(sweep.snapshots) <= s
        assert reverse(step, step_adjoint, sweep, 0) == n * (n - 1) // 2
        assert counts == [closed_form(n, s) + 1, n]


def test_planning_a_million_steps_is_cheap():
    start = time.perf_counter()
    y, sweep = forward(lambda item, x: (x, False), range(10**6), 0.0, snapshots=16)
    assert time.perf_counter() - start < 3.0  # the steps alone take a fraction of that
    assert sweep.steps == 10**6 and len(sweep.snapshots) == 16


# --- memory -----------------------------------------------------------------------------------


class State:
    """A state whose liveness the test can observe."""

    __slots__ = ("value", "__weakref__")

    def __init__(self, value, alive: weakref.WeakSet):
        self.value = value
        alive.add(self)


def peak_alive(n, stop=None, **mode):
    """The most states alive at any step or adjoint call of forward + reverse."""
    alive = weakref.WeakSet()
    peak = [0]

    def step(item, x):
        peak[0] = max(peak[0], len(alive))
        return State(scalar_step(item, x.value), alive), item == stop

    def step_adjoint(item, x, c):
        peak[0] = max(peak[0], len(alive))
        return scalar_adjoint(item, x.value, c)

    y, sweep = forward(step, range(n), State(0.3, alive), **mode)
    expected_y, expected_c, _ = reference(scalar_step, scalar_adjoint, range(n), 0.3, 1.0, stop)
    assert y.value == expected_y
    del y  # the final state belongs to the caller
    peak[0] = max(peak[0], len(alive))
    assert reverse(step, step_adjoint, sweep, 1.0) == expected_c
    assert len(alive) == 0
    return peak[0]


def test_snapshots_hold_at_most_s_states_besides_the_live_one():
    for n in (1, 2, 5, 17, 40):
        for s in (1, 2, 3, 4, 6, 50):
            assert peak_alive(n, snapshots=s) <= s + 1, (n, s)
            for stop in (0, n // 3, n // 2, n - 2):
                assert peak_alive(n, stop=stop, snapshots=s) <= s + 1, (n, s, stop)
    assert peak_alive(40, snapshots=4) == 5  # and the slots are used


def test_every_holds_one_state_per_segment_and_one_segment():
    for n in (1, 2, 9, 30):
        for k in (1, 2, 3, 5, 40):
            for stop in (None, n // 2):
                ran = n if stop is None else stop + 1
                assert peak_alive(n, stop=stop, every=k) <= -(-ran // k) + k, (n, k, stop)


# --- schedule ---------------------------------------------------------------------------------


def replay(actions, n, s) -> int:
    """Check that ``actions`` reverse ``n`` steps with at most ``s`` snapshots, following the
    documented meaning of each action; the most snapshots held at once."""
    stored, live, left, made, peak = set(), 0, n, False, 0
    for action, k in actions:
        if action == "store":
            assert live == k and k not in stored
            stored.add(k)
            peak = max(peak, len(stored))
        elif action == "free":
            stored.remove(k)
        elif action == "restore":
            assert k in stored
            live = k
        elif action == "advance":
            assert live == k
            if k == n - 1 and not made:  # the forward sweep's last step: the loop's result
                made = True
            else:
                live = k + 1
        elif action == "adjoint":
            assert made and live == k == left - 1
            left, live = k, None
        else:
            raise AssertionError(action)
    assert left == 0 and not stored
    return peak


def test_schedule_is_a_valid_reversal_within_the_slots():
    R = optimal_reversal(40, 5)
    for n in range(0, 41):
        for s in range(1, 6):
            actions = schedule(n, s)
            assert replay(actions, n, s) <= s
            assert sum(a == "advance" for a, _ in actions) == (R[n][s] + 1 if n else 0)


def test_schedule_is_what_forward_and_reverse_do():
    for n, s in ((1, 1), (2, 1), (6, 1), (10, 2), (10, 3), (23, 3), (30, 4), (8, 20)):
        trace = []

        def step(item, x, trace=trace):
            trace.append(("advance", item))
            return scalar_step(item, x), False

        def step_adjoint(item, x, c, trace=trace):
            trace.append(("adjoint", item))
            return scalar_adjoint(item, x, c)

        _, sweep = forward(step, range(n), 0.3, snapshots=s)
        reverse(step, step_adjoint, sweep, 1.0)
        assert trace == [a for a in schedule(n, s) if a[0] in ("advance", "adjoint")]


def test_schedule_small_case():
    assert schedule(3, 2) == [
        ("store", 0), ("advance", 0), ("store", 1), ("advance", 1), ("advance", 2),
        ("adjoint", 2), ("restore", 1), ("adjoint", 1), ("free", 1),
        ("restore", 0), ("adjoint", 0), ("free", 0),
    ]
    assert schedule(0, 3) == []


def test_schedule_refuses_bad_arguments():
    with pytest.raises(ValueError, match="n must be >= 0"):
        schedule(-1, 2)
    with pytest.raises(TypeError, match="n must be an int"):
        schedule(2.0, 2)
    with pytest.raises(ValueError, match="snapshots= must be a positive int"):
        schedule(4, 0)


# --- the loop marker --------------------------------------------------------------------------


def test_checkpoint_returns_its_iterable():
    r, xs, gen = range(4), [1, 2], iter([3])
    assert checkpoint(r, snapshots=2) is r
    assert checkpoint(xs, snapshots=1) is xs
    assert checkpoint(gen, every=3) is gen
    assert checkpoint(r, snapshots=np.int64(4)) is r


@pytest.mark.parametrize("kwargs,error,message", [
    ({}, ValueError, "exactly one of snapshots= or every=, got neither"),
    ({"snapshots": 2, "every": 3}, ValueError, "exactly one of snapshots= or every=, got both"),
    ({"snapshots": 0}, ValueError, "snapshots= must be a positive int, got 0"),
    ({"snapshots": -3}, ValueError, "snapshots= must be a positive int, got -3"),
    ({"every": 0}, ValueError, "every= must be a positive int, got 0"),
    ({"snapshots": 2.5}, TypeError, "snapshots= must be an int, got float"),
    ({"snapshots": "4"}, TypeError, "snapshots= must be an int, got str"),
    ({"every": True}, TypeError, "every= must be an int, got a bool"),
])
def test_checkpoint_refuses_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        checkpoint(range(3), **kwargs)
    with pytest.raises(error, match=message):
        forward(lambda i, x: (x, False), range(3), 0.0, **kwargs)


def test_snapshots_need_a_trip_count():
    with pytest.raises(TypeError, match="known trip count .* use every= for an iterator"):
        forward(lambda i, x: (x, False), iter(range(3)), 0.0, snapshots=2)
