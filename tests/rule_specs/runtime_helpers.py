"""Specs of the runtime helpers' own rules (what differentiating a generated gradient needs)."""


import runtime
from tests.rule_specs.common import OpSpec

SPECS = [
    OpSpec(runtime.unbroadcast, "rt.unbroadcast(a * b, b)", 2,
           shapes=(((2, 3), (3,)), ((2, 3), ()), ((3,), (3,)))),
    OpSpec(runtime.unreduce, "rt.unreduce(a, b, 1)", 2, shapes=(((2,), (2, 3)),)),
    OpSpec(runtime.unreduce, "rt.unreduce(a, b)", 2, shapes=(((), (2, 3)),)),
    OpSpec(runtime.unreduce, "rt.unreduce(a, b, (0, 2), True)", 2,
           shapes=(((1, 3, 1), (2, 3, 4)),)),
    OpSpec(runtime.grad_like, "rt.grad_like(a * 2.0, b)", 2, shapes=(((), (2, 3)), ((3,), (3,)))),
    OpSpec(runtime.copied, "rt.copied(a * b) * a", 2, shapes=(((3,), (3,)), ((), ()))),
    OpSpec(runtime.distinct, "rt.distinct(a * b)", 2, shapes=(((3,), (3,)), ((), ()))),
    OpSpec(runtime.distinct, "rt.distinct((a * b, a + b))[1] * a", 2,
           shapes=(((3,), (3,)), ((2, 3), (3,)))),
    OpSpec(runtime.zero_index, "rt.zero_index(a, slice(1, 3, None)) * b", 2,
           shapes=(((4,), (4,)),)),
    OpSpec(runtime.written, "rt.written(a, np.array([0, 2, 0])) * b", 2,
           shapes=(((4,), (3,)),)),
    OpSpec(runtime.written, "rt.written(a, slice(1, 3, None)) * b", 2, shapes=(((4,), (2,)),)),
    OpSpec(runtime.unwritten, "rt.unwritten(a, c, np.array([1, 1, 3])) * b", 3,
           shapes=(((3,), (4,), (4,)),)),
    OpSpec(runtime.matmul_adjoint_a, "rt.matmul_adjoint_a(a, c, b)", 3,
           shapes=(((2, 4), (3, 4), (2, 3)), ((2,), (3, 2), (3,)))),
    OpSpec(runtime.matmul_adjoint_b, "rt.matmul_adjoint_b(a, b, c)", 3,
           shapes=(((2, 4), (2, 3), (3, 4)), ((4,), (3,), (3, 4)))),
    OpSpec(runtime.dot_adjoint_a, "rt.dot_adjoint_a(a, c, b)", 3,
           shapes=(((2, 4), (3, 4), (2, 3)),)),
    OpSpec(runtime.dot_adjoint_b, "rt.dot_adjoint_b(a, b, c)", 3,
           shapes=(((2, 4), (2, 3), (3, 4)),)),
    # transpiler.on_gradient with a hook that leaves the gradient as it is
    OpSpec(runtime.on_gradient, "rt.on_gradient(a * b, np.positive) * a", 2,
           shapes=(((), ()), ((3,), (3,)), ((2, 3), (3,)))),
]
