"""Rules of objects read and built field by field (runtime/objects.py): ``p.k`` is
``rt.field(p, "k")``, ``o.a = v`` is ``o = rt.with_field(o, "a", v)``,
``dataclasses.replace(p, k=v)`` is ``rt.replaced(p, ("k",), (v,))``; and the tangents of
their adjoint helpers, which are linear in the gradient (forward over reverse)."""

import runtime as rt
from transpiler.rules.nondiff import NONDIFF
from transpiler.rules.registry import adjoint, d, tangent


@adjoint(rt.field)
def adj_field(ans, obj, name):
    d[obj] = rt.unfield(d[ans], obj, name)


@tangent(rt.field)
def tan_field(ans, obj, name):
    d[ans] = rt.field_tangent(d[obj], obj, name)


@adjoint(rt.with_field)
def adj_with_field(ans, obj, name, value):
    d[obj] = rt.unwith_field(d[ans], name)
    d[value] = rt.field_grad(d[ans], value, name)


@tangent(rt.with_field)
def tan_with_field(ans, obj, name, value):
    d[ans] = rt.with_field_tangent(d[obj], obj, name, d[value])


@adjoint(rt.replaced)
def adj_replaced(ans, obj, names, values):
    d[obj] = rt.replaced_grad(d[ans], obj, names)
    d[values] = rt.replaced_values_grad(d[ans], obj, names)


@tangent(rt.replaced)
def tan_replaced(ans, obj, names, values):
    d[ans] = rt.replaced_tangent(d[obj], obj, names, d[values])


@tangent(rt.unfield)
def tan_unfield(ans, g, obj, name):
    d[ans] = rt.unfield(d[g], obj, name)


@tangent(rt.field_tangent)
def tan_field_tangent(ans, t, obj, name):
    d[ans] = rt.field_tangent(d[t], obj, name)


@tangent(rt.unwith_field)
def tan_unwith_field(ans, g, name):
    d[ans] = rt.unwith_field(d[g], name)


@tangent(rt.field_grad)
def tan_field_grad(ans, g, value, name):
    d[ans] = rt.field_grad(d[g], value, name)


@tangent(rt.replaced_grad)
def tan_replaced_grad(ans, g, obj, names):
    d[ans] = rt.replaced_grad(d[g], obj, names)


@tangent(rt.replaced_values_grad)
def tan_replaced_values_grad(ans, g, obj, names):
    d[ans] = rt.replaced_values_grad(d[g], obj, names)


@adjoint(rt.construct)  # C(a, b) of a dataclass or NamedTuple
def adj_construct(ans, cls, names, values):
    d[values] = rt.replaced_values_grad(d[ans], ans, names)


@tangent(rt.construct)
def tan_construct(ans, cls, names, values):
    d[ans] = rt.constructed_tangent(ans, names, d[values])


@tangent(rt.constructed_tangent)
def tan_constructed_tangent(ans, obj, names, t):
    d[ans] = rt.constructed_tangent(obj, names, d[t])


NONDIFF.add(rt.new)  # an instance before its __init__: no values yet


@adjoint(rt.of_class)  # self.spring.force(x): the field checked to be of its class
def adj_of_class(ans, x, cls, where):
    d[x] = d[ans]


@tangent(rt.of_class)
def tan_of_class(ans, x, cls, where):
    d[ans] = d[x]


@adjoint(rt.data)  # self.u.copy(): the field checked to be data, then NumPy's method
def adj_data(ans, x, where):
    d[x] = d[ans]


@tangent(rt.data)
def tan_data(ans, x, where):
    d[ans] = d[x]


@adjoint(rt.owned)  # s = rt.owned(s): a copy of an argument that a call changes
def adj_owned(ans, obj):
    d[obj] = d[ans]


@tangent(rt.owned)
def tan_owned(ans, obj):
    d[ans] = d[obj]
