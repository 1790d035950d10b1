"""What a gradient call stores for its reverse sweep, by the user's source line.

``grad(f).memory(*args)`` runs the gradient of this call once, stopping to look at its locals
where the primal ends and the adjoint begins (the first ``# grad of:`` line of the generated
code): every loop's tape is full there, and every checkpointed loop holds its snapshots. Each
value a tape saves is traced to the user's line that computed it (the tape's ``append`` names
it; its assignment in the generated loop maps to the user's line), and measured: an array by
its buffer (a buffer saved twice, or a view of one saved, counts once), a number or small
object by its size, a tape's own lists and tuples as a row of their own. A checkpointed loop
gets a row for its snapshots (at most ``snapshots=s`` states, or one per ``every=k`` steps and
one segment's states) and one for the tape of the one step reversed at a time.
"""

from __future__ import annotations

import ast
import linecache
import math
import re
import sys
from dataclasses import dataclass

import numpy as np

from transpiler import emit


@dataclass(frozen=True)
class Row:
    """One line of the user's function that stores values for the reverse sweep."""

    filename: str
    line: int
    text: str  # the line's source
    what: str  # "tape", "tape entries" (the tape's lists and tuples), "snapshots", "one step"
    bytes_per_iteration: float
    iterations: int
    total_bytes: int

    @property
    def where(self) -> str:
        return f"{self.filename}:{self.line}"


class MemoryReport:
    """The rows of a gradient call's stored values; ``str()`` prints them as a table."""

    def __init__(self, name: str, rows: list[Row]):
        self.name, self.rows = name, sorted(rows, key=lambda r: (-r.total_bytes, r.line))

    @property
    def total_bytes(self) -> int:
        return sum(r.total_bytes for r in self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return f"<MemoryReport of {self.name}: {len(self.rows)} rows, {_size(self.total_bytes)}>"

    def __str__(self) -> str:
        head = f"memory stored by the gradient of {self.name}: {_size(self.total_bytes)}"
        if not self.rows:
            return head + "\n  (nothing: no loop saves values for the reverse sweep)"
        where = max(len(r.where) for r in self.rows)
        lines = [head, f"  {'line':{where}s}  {'stores':12s} {'per iteration':>13s} "
                       f"{'iterations':>10s} {'total':>10s}  source"]
        for r in self.rows:
            lines.append(f"  {r.where:{where}s}  {r.what:12s} {_size(r.bytes_per_iteration):>13s} "
                         f"{r.iterations:>10d} {_size(r.total_bytes):>10s}  {r.text}")
        return "\n".join(lines)


def _size(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def report(name: str, function, source: str, args: tuple, kwargs: dict) -> MemoryReport:
    """The report of one call of the generated ``function`` (whose source is ``source``)."""
    function = getattr(function, "python", function)  # (Numba's: measured as Python)
    code = function.__code__
    start = _adjoint_start(source)
    if start is None:
        return MemoryReport(name, [])
    tapes, sweeps = _layout(source)
    rows: dict[tuple, list] = {}
    seen: set[int] = set()

    def add(origin_line: int, what: str, size: int, iterations: int) -> None:
        where = emit.origin_of(code.co_filename, origin_line + 1)
        if where is None:
            return
        key = (where[0], where[1], what)
        entry = rows.setdefault(key, [0, 0])
        entry[0] += size
        entry[1] = max(entry[1], iterations)

    def measure(frame_locals: dict) -> None:  # (where the adjoint begins: before it consumes)
        for tape, (loop_line, positions) in tapes.items():
            entries = frame_locals.get(tape)
            if isinstance(entries, np.ndarray) and entries.ndim:  # preallocated (Numba's form)
                add(positions[0] if positions else loop_line, "tape", _bytes(entries, seen),
                    len(entries))
                continue
            if not isinstance(entries, list):
                continue
            overhead = sys.getsizeof(entries)
            for entry in entries:
                tupled = isinstance(entry, tuple) and len(positions) > 1
                overhead += sys.getsizeof(entry) if tupled else 0
                for part, line in zip(entry if tupled else (entry,), positions, strict=False):
                    add(line, "tape", _bytes(part, seen), len(entries))
            add(loop_line, "tape entries", overhead, len(entries))
        for name_, line in sweeps.items():
            saved = frame_locals.get(name_)
            if isinstance(saved, tuple) and len(saved) == 5:
                _sweep_rows(saved, function, line, add)

    _run_to(function, start + 1, args, kwargs, measure)  # (+1: the loader's def line)
    out = []
    for (filename, line, what), (size, iterations) in rows.items():
        text = linecache.getline(filename, line).strip()
        out.append(Row(filename, line, text, what, size / max(iterations, 1), iterations, size))
    return MemoryReport(name, out)


def _sweep_rows(saved: tuple, function, line: int, add) -> None:
    """The snapshots a checkpointed loop may hold, and one step's tape."""
    sweep, step, _, snapshots, every = saved
    states = list((sweep.snapshots or {}).values())
    last = sweep.last
    sample = last if last is not None else (states[0] if states else None)
    if sample is None:
        return
    slots = min(snapshots, sweep.steps) if snapshots else \
        math.ceil(sweep.steps / every) + min(every, sweep.steps)
    add(line, "snapshots", _bytes(sample, set()) * slots, slots)
    pair = _pair_of(function, step)
    if pair is not None and sweep.steps and last is not None:
        _, residuals = pair.forward(sweep.items[sweep.steps - 1], *last)
        add(line, "one step", _bytes(residuals, set()), 1)


def _pair_of(function, step):
    """The compiled forward/backward pair the generated code calls for ``step``."""
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or (),
                          strict=True):
        value = cell.cell_contents
        if name.endswith("_vjp") and getattr(value, "fn", None) is step:
            return value
    return None


def _bytes(value, seen: set[int]) -> int:
    """Memory ``value`` keeps alive: an array's buffer once (by its owner), a number's or
    small object's size, a tuple's or list's items and itself."""
    if isinstance(value, np.ndarray):
        owner = value
        while isinstance(owner.base, np.ndarray):
            owner = owner.base
        header = sys.getsizeof(value) - (value.nbytes if value.base is None else 0)
        if id(owner) in seen:
            return header
        seen.add(id(owner))
        return header + owner.nbytes
    if isinstance(value, (tuple, list)):
        return sys.getsizeof(value) + sum(_bytes(v, seen) for v in value)
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(_bytes(v, seen) for v in value.values())
    if value is None or isinstance(value, (bool, type)):
        return 0
    return sys.getsizeof(value)


def _adjoint_start(source: str) -> int | None:
    """The line (of ``source``, from 1) of the adjoint's first statement."""
    lines = source.splitlines()
    for i, text in enumerate(lines):
        if re.match(r"    # grad of: ", text):
            for j in range(i + 1, len(lines)):
                if lines[j].strip() and not lines[j].lstrip().startswith("#"):
                    return j + 1
    return None


def _layout(source: str) -> tuple[dict, dict]:
    """``{tape: (loop line, [line of each saved value])}`` and ``{sweep: line}``, as lines of
    ``source``: each saved value's line is its assignment in the loop (else the loop's)."""
    tree = ast.parse(source)
    tapes, sweeps = {}, {}
    for loop in ast.walk(tree):
        if isinstance(loop, ast.Assign) and isinstance(loop.value, ast.Call) \
                and ast.unparse(loop.value.func).endswith("checkpoint_forward"):
            target = loop.targets[0]
            if isinstance(target, ast.Tuple) and isinstance(target.elts[-1], ast.Name):
                sweeps[target.elts[-1].id] = loop.lineno
        if not isinstance(loop, (ast.For, ast.While)):
            continue
        assigned, copies = {}, {}  # name -> line of its assignment; a copy -> what it copies
        for node in ast.walk(loop):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            assigned.setdefault(n.id, node.lineno)
                            if isinstance(node.value, ast.Name) and t is n:
                                copies[n.id] = node.value.id  # (a loop's carried value)
        for node in ast.walk(loop):
            call = node.value if isinstance(node, ast.Expr) else None
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Subscript) \
                    and isinstance(node.targets[0].value, ast.Name) \
                    and node.targets[0].value.id.startswith("_tape"):
                tape, value = node.targets[0].value.id, node.value  # a preallocated tape
            elif (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "append" and isinstance(call.func.value, ast.Name)
                    and call.func.value.id.startswith("_tape") and len(call.args) == 1):
                tape, value = call.func.value.id, call.args[0]
            else:
                continue
            parts = value.elts if isinstance(value, ast.Tuple) else [value]
            lines = []
            for part in parts:
                names = [n.id for n in ast.walk(part) if isinstance(n, ast.Name)
                         and n.id not in ("rt",)]
                for _ in range(len(copies)):  # u_1 = u_2 at the loop's end: u_2's line
                    names = [copies.get(n, n) for n in names]
                lines.append(next((assigned[n] for n in names if n in assigned), loop.lineno))
            tapes.setdefault(tape, (loop.lineno, lines))
    return tapes, sweeps


def _run_to(function, line: int, args: tuple, kwargs: dict, measure) -> None:
    """Call ``function``, passing its locals to ``measure`` when its frame first reaches
    ``line`` (then the call runs to its end)."""
    code, done = function.__code__, []

    def in_frame(frame, event, arg):
        if event == "line" and frame.f_lineno == line and not done:
            done.append(True)
            measure(frame.f_locals)
        return in_frame

    def calls(frame, event, arg):
        return in_frame if frame.f_code is code else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        function(*args, **kwargs)
    finally:
        sys.settrace(previous)


