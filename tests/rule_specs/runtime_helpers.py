"""Specs of the runtime helpers' own rules (what differentiating a generated gradient needs)."""


import runtime
from tests.rule_specs.common import OpSpec

W = "(0.6 - 0.8j)"  # a complex result is read as np.real(result * W)

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
    OpSpec(runtime.fitted, "rt.fitted(a * b, np.ones(5)) * b[:5]", 2,
           shapes=(((7,), (7,)),)),
    OpSpec(runtime.fitted, "rt.fitted(a * b, np.ones((4, 6))) * 2.0", 2,
           shapes=(((3, 7), (3, 7)),)),
    OpSpec(runtime.unrfftn, "rt.unrfftn(a + 1j * b, np.ones(8), None, (0,), 'ortho')", 2,
           shapes=(((5,), (5,)),)),
    OpSpec(runtime.unrfftn, "rt.unrfftn(a * (0.6 - 0.8j), np.ones((4, 6)), (3, 7), (0, 1))", 1,
           shapes=(((3, 4),),)),
    OpSpec(runtime.unirfftn, f"np.real(rt.unirfftn(a, np.ones(5), None, (0,)) * {W})", 1,
           shapes=(((8,),),)),  # (s None: the length irfftn gives, 2 * (5 - 1))
    OpSpec(runtime.unirfftn, f"np.real(rt.unirfftn(a, np.ones(5), (9,), (0,)) * {W})", 1,
           shapes=(((9,),),)),
    OpSpec(runtime.unirfftn,
           f"np.real(rt.unirfftn(a * b, np.ones((4, 3)), (3, 6), (1, 0), 'ortho') * {W})", 2,
           shapes=(((6, 3), (6, 3)),)),
    OpSpec(runtime.complex_moduli, "rt.complex_moduli(a + 1j * b) * b", 2,
           shapes=(((3,), (3,)), ((2, 3), (2, 3)))),
    OpSpec(runtime.complex_moduli, "rt.complex_moduli(a, 1, 0) * b", 2, (0.3, 2.0),
           (((3,), (3,)),), signed=(0,)),
    OpSpec(runtime.unreal, "rt.unreal(a, np.ones(6), 'dct', 2, (4,), (0,), 'ortho') * b", 2,
           shapes=(((4,), (6,)),)),
    OpSpec(runtime.unreal, "rt.unreal(a * b, np.ones((3, 4)), 'idst', 3) * b", 2,
           shapes=(((3, 4), (3, 4)),)),
    OpSpec(runtime.real_transform,
           "rt.real_transform(a, np.ones(4), 'dst', 1, (6,), (0,)) * b", 2,
           shapes=(((4,), (6,)),)),
    # a root of x^3 - a (scipy.optimize's, passes/solvers.py): held constant, its
    # derivative the implicit function theorem's, 1 / (3 x^2)
    OpSpec(runtime.implicit_root, "rt.implicit_root(rt.stop_gradient(np.cbrt(a)), "
           "rt.stop_gradient(np.cbrt(a)) ** 3 - a, 3.0 * rt.stop_gradient(np.cbrt(a)) ** 2) * 2.0",
           1, shapes=(((),), ((3,),), ((2, 3),))),
    # the root of a linear system M x - a (fsolve's, root's): -M^-T g for a
    OpSpec(runtime.implicit_system, "rt.implicit_system(rt.stop_gradient(np.linalg.solve("
           "np.array([[2.0, 0.5, 0.0], [0.1, 3.0, 0.2], [0.0, 0.4, 1.5]]), a)), np.array([[2.0, "
           "0.5, 0.0], [0.1, 3.0, 0.2], [0.0, 0.4, 1.5]]) @ rt.stop_gradient(np.linalg.solve("
           "np.array([[2.0, 0.5, 0.0], [0.1, 3.0, 0.2], [0.0, 0.4, 1.5]]), a)) - a, np.array("
           "[[2.0, 0.5, 0.0], [0.1, 3.0, 0.2], [0.0, 0.4, 1.5]])) * np.arange(1.0, 4.0)", 1,
           shapes=(((3,),),)),
    # the minimum of sum(b cosh(x - a)) in x (minimize's, passes/solvers.py): x* = a, its
    # derivative through grad_x f = 0 from the objective's second derivatives (b drops out)
    OpSpec(runtime.implicit_minimum, "rt.implicit_minimum(rt.stop_gradient(a * 1.0), bowl, "
           "(a, b), stationary) * (2.0 + b)", 2, (0.5, 2.0),
           shapes=(((), ()), ((3,), ()), ((2, 3), (2, 3)))),
    # the integral of sum(a) t^2 + t from 0 to b (quad's, passes/solvers.py): its value held,
    # its derivative Leibniz's, b^3 / 3 for each a, sum(a) b^2 + b for b
    OpSpec(runtime.integral, "rt.integral(rt.stop_gradient(np.sum(a) * b ** 3 / 3.0 + b ** 2 / "
           "2.0), ramp, 0.0, b, (a,), None, under_integral, {'kind': 'quad'}) * (1.0 + b)", 2,
           (0.5, 2.0), shapes=(((), ()), ((3,), ()), ((2, 3), ()))),
    # y' = -b y from y(0) = a, read at t = 0.5 and 1 (solve_ivp's, passes/solvers.py): its
    # value held, its derivative the adjoint's (reverse) or the variational equation's
    OpSpec(runtime.ode_solution, "rt.ode_solution(rt.stop_gradient(np.outer(a, np.exp(-b * "
           "np.array([0.5, 1.0])))), np.array([0.5, 1.0]), shrink, 0.0, 1.0, a, (b,), "
           "np.array([0.5, 1.0]), ode, {'layout': 'ivp', 'method': 'DOP853', 'rtol': 1e-12, "
           "'atol': 1e-13}) * (1.0 + b)", 2, (0.5, 2.0), shapes=(((3,), ()), ((1,), ()))),
    # solve_ivp's sol.t without t_eval: the first time moves with t0 = a, the last with t1 = b
    OpSpec(runtime.step_times, "rt.step_times(rt.stop_gradient(np.array([a, 0.25, b])), a, b) "
           "* (1.0 + a)", 2, (0.5, 2.0), shapes=(((), ()),)),
    # a loop marked converged (passes/converged.py): x <- x / 2 + a b settles at 2 a b, its
    # derivative the implicit function theorem's on the body; and a contraction of tanh's
    OpSpec(runtime.fixed_point, "rt.fixed_point(rt.stop_gradient(2.0 * a * b), halve, (a, b), "
           "fixed_point_of, ('x',)) * (1.0 + b)", 2,
           shapes=(((), ()), ((3,), ()), ((2, 3), (2, 3)))),
    OpSpec(runtime.fixed_point, "np.sin(rt.fixed_point(rt.stop_gradient(settled(a)), settle, "
           "(a,), fixed_point_of, ('x',)))", 1, shapes=(((),), ((3,),), ((2, 3),))),
    # a root of x^3 - a, one equation per unknown (the root finders', passes/solvers.py): its
    # derivative 1 / (3 x^2) from the theorem; and the root of a coupled system in a and b
    OpSpec(runtime.root_of, "rt.root_of(rt.stop_gradient(np.cbrt(a)), cube, (a,), roots_of) "
           "** 2", 1, (0.5, 2.0), shapes=(((),), ((3,),), ((2, 3),))),
    OpSpec(runtime.root_of, "np.sin(rt.root_of(rt.stop_gradient(coupled_root(a, b)), coupled, "
           "(a, b), root_of)) * (1.0 + b)", 2, (0.5, 1.5), shapes=(((3,), ()), ((3,), (3,)))),
    # transpiler.on_gradient with a hook that leaves the gradient as it is
    OpSpec(runtime.on_gradient, "rt.on_gradient(a * b, np.positive) * a", 2,
           shapes=(((), ()), ((3,), (3,)), ((2, 3), (3,)))),
]
