"""Specs of the object rules (runtime/objects.py): a field read, an attribute write on a copy,
dataclasses.replace, a dataclass or NamedTuple built from its fields, an argument's copy and a
field checked to be data, on a dataclass (``Rec``) and a NamedTuple (``Pair``) of common.py."""

import runtime
from tests.rule_specs.common import OpSpec

BOTH = (((), ()), ((3,), (3,)), ((2, 3), (3,)))

SPECS = [
    OpSpec(runtime.field, "p = Rec(a, b); rt.field(p, 'k') * rt.field(p, 'c')", 2, shapes=BOTH),
    OpSpec(runtime.field, "p = Pair(a, b * a); rt.field(p, 'c') - rt.field(p, 'k')", 2,
           shapes=BOTH),
    OpSpec(runtime.construct, "rt.field(rt.construct(Rec, ('k', 'c'), (a, b)), 'c') * a", 2,
           shapes=BOTH),
    OpSpec(runtime.construct, "rt.construct(Pair, ('c', 'k'), (a, b * a))[0] * a", 2,
           shapes=BOTH),
    OpSpec(runtime.with_field, "p = Rec(a, b); q = rt.with_field(p, 'k', b * a); "
           "rt.field(q, 'k') * rt.field(q, 'c') + rt.field(p, 'k')", 2, shapes=BOTH),
    OpSpec(runtime.replaced, "p = Rec(a, b); q = rt.replaced(p, ('c',), (a * b,)); "
           "rt.field(q, 'k') * rt.field(q, 'c')", 2, shapes=BOTH),
    OpSpec(runtime.replaced, "p = Pair(a, b); q = rt.replaced(p, ('k', 'c'), (b, a * b)); "
           "q.k * q.c + p.k", 2, shapes=BOTH),
    OpSpec(runtime.owned, "p = Rec(a, b); q = rt.owned(p); rt.field(q, 'k') * rt.field(q, 'c')",
           2, shapes=BOTH),
    OpSpec(runtime.data, "np.sum(rt.data(a, 'self.a') * b)", 2, shapes=BOTH),
    OpSpec(runtime.of_class, "p = rt.of_class(Rec(a, b), Rec, 'o.p'); rt.field(p, 'k') * "
           "rt.field(p, 'c')", 2, shapes=BOTH),
]
