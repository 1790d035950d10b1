"""Every refusal is a TranspileError naming file, line, column and construct, with a hint."""

import numpy as np
import pytest

from tests.util import make
from transpiler import NoRuleError, TranspileError, grad

REFUSED = [
    ("for v in x.tolist():\n        y = v", "method call x.tolist", 2),
    ("if np.sum(x) > 0:\n        return", "'return' without a value", 3),
    ("try:\n        x = x * 2\n    finally:\n        return x", "'return' inside 'finally'", 5),
    ("try:\n        x = x * 2\n    except ValueError:\n        pass\n    except KeyError:\n"
     "        pass", "more than one 'except'", 6),
    ("with open(str(x)) as fh:\n        x = x * 2", "context manager built from differentiated", 2),
    ("global G\n    G = x", "'global'", 2),
    ("def inner(y):\n        return y\n    g = inner\n    x = g(x)", "may only be called", 4),
    ("def inner(y):\n        return inner(y)\n    x = inner(x)", "calls itself", 2),
    ("y = (lambda t: t)(x)", "lambda is supported only as", 2),
    ("y = yield x", "generators", 2),
    ("x.attr = 1.0", "assignment to an attribute", 2),
    ("v = np.reshape(x, (3,))\n    x[1] = 5.0\n    y = v", "would also change 'v'", 3),
    ("b = x * 1.0\n    c = [b]\n    b += 1.0\n    y = c[0]", "would also change 'c'", 4),
    ("c = np.zeros(3)\n    np.multiply(x, 2.0, out=c)\n    y = c", "into an existing array", 3),
    ("xs = [x]\n    xs.insert(0, x)\n    y = np.sum(xs)", "result of this call is discarded", 3),
    ("xs = [x]\n    ys = [xs]\n    xs.append(x)\n    y = np.sum(ys[0])", "would also change 'ys'",
     4),
    # the loop walks rows of x while x changes in place: each row seen is the updated one in
    # NumPy (a 1-D array's items are numbers, read as the loop reaches them, and rows of an
    # array of two axes, views: differentiated; here its number of axes is not known)
    ("y = 0.0\n    x = np.reshape(np.outer(x, x), x.shape * 2)\n    for r in x:\n"
     "        x += 0.5\n        y = y + np.sum(r)", "would also change", 5),
    ("y = x.tolist()", "method call x.tolist(...)", 2),
    ("import math\n    y = x", "'import' inside the function", 2),
    ("y = undefined_function(x)", "name 'undefined_function' is not defined", 2),
]


@pytest.mark.parametrize("body,construct,line", REFUSED, ids=[r[1] for r in REFUSED])
def test_refused_construct(body, construct, line):
    result = "y" if "y =" in body or "y[" in body else "x"
    f = make(f"def f(x):\n    {body}\n    return np.sum({result})\n")
    with pytest.raises(TranspileError) as info:
        grad(f)(np.ones(3))
    err = info.value
    text = str(err)
    assert construct in text
    assert err.lineno == line, text
    assert err.filename.startswith("<test source")
    assert f"{err.filename}:{line}:" in text
    assert "^" in text and "hint:" in text


def test_caret_points_at_the_construct():
    f = make("def f(x):\n    y = 2.0 * np.i0(x)\n    return y\n")
    with pytest.raises(NoRuleError) as info:
        grad(f)(1.0)
    text = str(info.value)
    line, caret = text.splitlines()[1:3]
    assert line.strip() == "y = 2.0 * np.i0(x)"
    assert line[caret.index("^"):].startswith("np.i0")


def test_missing_rule_names_the_function_and_the_recipe():
    f = make("def f(x):\n    return npx.i0(x) * 2.0\n", npx=np)
    with pytest.raises(NoRuleError) as info:
        grad(f)(1.5)
    text = str(info.value)
    assert "no gradient rule for npx.i0" in text
    assert "@adjoint(npx.i0)" in text and "d[x] = d[ans]" in text


def test_inactive_use_of_a_function_without_rule_is_fine():
    f = make("def f(x):\n    n = np.argmax(x)\n    k = np.floor(x)\n    return np.sum(x * k) + n\n")
    np.testing.assert_allclose(grad(f)(np.array([1.5, 2.5])), [1.0, 2.0])


def test_unknown_keyword_is_refused_not_ignored():
    f = make("def f(x):\n    return np.sum(x, where=x > 0)\n")
    with pytest.raises(TranspileError, match="does not accept"):
        grad(f)(np.ones(3))


def test_error_is_a_syntax_error_subclass_with_location():
    f = make("def f(x):\n    y = x.foo\n    return y\n")
    with pytest.raises(SyntaxError) as info:
        grad(f)(np.ones(3))
    assert info.value.lineno == 2 and info.value.offset == 9


def test_helper_writing_into_its_argument_is_refused():
    f = make("""
def fill(a, v):
    a[0] = v
    return np.sum(a)

def f(x):
    y = x * 2.0
    return fill(y, x[1])
""")
    with pytest.raises(TranspileError, match="changes its argument 'a' in place") as info:
        grad(f)(np.ones(3))
    assert info.value.lineno == 7  # (the call: y may be an array, whose views would see it)


def test_a_write_into_the_argument_itself_works_on_a_copy():
    f = make("def f(x):\n    x[0] = x[1] * 3.0\n    x += 1.0\n    return np.sum(x * x)\n")
    x = np.array([0.5, 1.0, 2.0])
    before = x.copy()
    g = grad(f)(x)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(g, [0.0, 2 * 2.0 + 2 * 4.0 * 3.0, 2 * 3.0])
