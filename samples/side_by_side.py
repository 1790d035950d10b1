"""Show a function and the gradient code generated from it, side by side.

The left column is the source of ``damped_iterate`` (read with ``inspect.getsource``), a small
function with a loop and a branch; the right column is the source of ``grad(damped_iterate)``
as compiled for the call below (``.source_for(*args)``): the forward computation with a tape of
the values the loop overwrites, then the loop run backwards, the branch mirrored.

Run:  python samples/side_by_side.py
"""

import inspect
import itertools
import math

from transpiler import grad


def damped_iterate(x, steps):
    y = x
    for _ in range(steps):
        if y > 1.0:
            y = math.sqrt(y)
        else:
            y = 0.5 * y * y + x
    return y


def side_by_side(left: str, right: str, gap: int = 4) -> str:
    """Two blocks of text as two columns."""
    left_lines, right_lines = left.rstrip().splitlines(), right.rstrip().splitlines()
    width = max(len(line) for line in left_lines) + gap
    rows = itertools.zip_longest(left_lines, right_lines, fillvalue="")
    return "\n".join((a.ljust(width) + b).rstrip() for a, b in rows)


def main() -> None:
    args = (0.8, 6)
    dy = grad(damped_iterate)  # with respect to x
    left = "# your function\n\n" + inspect.getsource(damped_iterate)
    right = f"# grad(damped_iterate).source_for{args}\n\n" + dy.source_for(*args)
    print(side_by_side(left, right))
    print()

    value = dy(*args)
    h = 1e-6
    x, steps = args
    central = (damped_iterate(x + h, steps) - damped_iterate(x - h, steps)) / (2 * h)
    print(f"damped_iterate{args}      = {damped_iterate(*args):.10f}")
    print(f"d/dx damped_iterate{args} = {value:.10f}")
    print(f"central finite difference   = {central:.10f}")


if __name__ == "__main__":
    main()
