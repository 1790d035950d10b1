"""Specs of the container rules: list(...), tuple(...), xs.extend(ys), xs.pop(i), d.pop(k),
mapping.get(k, v),
mapping.values()/.items(), and the sequence a loop walks (a list, an array's rows, a dict)."""

import runtime
from tests.rule_specs.common import OpSpec

SPECS = [
    OpSpec(list, "list(a)[1] * b", 2, shapes=(((3,), ()), ((3, 2), (2,)))),
    OpSpec(list, "first, *rest = (a, b, a * b); first * rest[1]", 2,
           shapes=(((), ()), ((3,), (3,)))),
    OpSpec(list, "first, *rest, z = a; np.sum(rest[1] * first) + np.sum(z * rest[0])", 1,
           shapes=(((4, 2),),)),
    OpSpec(tuple, "sum(tuple([a, b * a]))", 2, shapes=(((), ()), ((2, 3), (3,)))),
    OpSpec(runtime.extended, "xs = [a]; xs.extend([b, a * b]); xs[2] * xs[0] + xs[1]", 2,
           shapes=(((), ()), ((3,), (3,)), ((2, 3), (3,)))),
    OpSpec(runtime.extended, "xs = [b]; xs.extend(a); np.stack(xs) * 2.0", 2,
           shapes=(((2, 3), (3,)),)),
    OpSpec(runtime.popped, "xs = [a, b * a, b]; v = xs.pop(0); xs.pop(); v * xs[0] + xs[-1]",
           2, shapes=(((), ()), ((3,), (3,)), ((2, 3), (3,)))),
    OpSpec(runtime.popped, "p = {'u': a, 'v': b}; w = p.pop('u'); w * sum(p.values())", 2,
           shapes=(((), ()), ((3,), (3,)))),
    OpSpec(runtime.sequence, "sum(r * b for r in a)", 2, shapes=(((2, 3), (3,)), ((4,), ()))),
    OpSpec(runtime.sequence, "xs = [a, b * a]; sum(np.sum(x * x) for x in xs)", 2,
           shapes=(((3,), (3,)), ((), ()))),
    OpSpec(runtime.values, "p = {'u': a, 'v': b}; sum(np.sum(w * w) for w in p.values())", 2,
           shapes=(((3,), (2,)), ((), ()))),
    OpSpec(runtime.values, "p = {'u': a, 'v': b * a}; sum(p.values()) * a", 2,
           shapes=(((3,), (3,)),)),
    OpSpec(runtime.items, "p = {'uu': a, 'v': b}; sum(np.sum(w) * len(k) for k, w in p.items())",
           2, shapes=(((3,), (2,)), ((), ()))),
    OpSpec(dict.get, "p = {'u': a, 'v': b}; p.get('u', b) * p.get('w', a) + p.get('v')", 2,
           shapes=(((), ()), ((3,), (3,)), ((2, 3), (3,)))),
]
