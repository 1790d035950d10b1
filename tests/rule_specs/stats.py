"""Specs of the scipy.stats rules (none without SciPy): every method of every distribution,
with respect to the values and to ``loc`` and ``scale``, and to the shape parameters where the
method has a derivative in them (every density; the tails of ``lognorm``; the real parameters of
the discrete ones), on arrays of values with parameters broadcast against them.
"""

from __future__ import annotations

from runtime.stats import CONTINUOUS, CONTINUOUS_METHODS, DISCRETE_METHODS, MOMENT_METHODS, MOMENTS
from tests.rule_specs.common import OpSpec

try:
    import scipy.stats as stats
except ImportError:
    stats = None

VALUES = (((3,), (), ()), ((2, 3), (3,), ()))
LOCATED = (-0.3, -0.1)  # loc: below every value, so that (x - loc) / scale > 0
# distribution -> (values' domain with loc in LOCATED and scale in (1, 1.5), its shapes as
# numbers, (values' domain, shapes' domain) where the shapes are differentiated)
CONTINUOUS_CASES = {
    "norm": ((-2.0, 2.0), "", None),
    "expon": ((0.2, 2.0), "", None),
    "laplace": ((0.2, 2.0), "", None),
    "cauchy": ((-2.0, 2.0), "", None),
    "logistic": ((-2.0, 2.0), "", None),
    "t": ((-2.0, 2.0), "3.5, ", ((-2.0, 2.0), (2.0, 5.0))),
    "gamma": ((0.2, 2.0), "2.5, ", ((0.5, 2.0), (1.5, 3.0))),
    "beta": ((0.2, 0.8), "2.5, 1.8, ", ((0.2, 0.8), (1.5, 3.0))),
    "lognorm": ((0.2, 2.0), "0.8, ", ((0.5, 2.0), (0.5, 1.5))),
}
K = "np.array([0.0, 1.0, 3.0, 6.0])"

SPECS: list = []

if stats is not None:
    for dist, (values, numbers, shaped) in CONTINUOUS_CASES.items():
        for method in CONTINUOUS_METHODS:
            key = getattr(getattr(stats, dist), method)
            SPECS.append(OpSpec(key, f"stats.{dist}.{method}(a, {numbers}loc=b, scale=c)", 3,
                                (values, LOCATED, (1.0, 1.5)), shapes=VALUES))
            closed = method in ("logpdf", "pdf") or CONTINUOUS[dist][1] is not None
            if shaped is not None and closed:
                n = numbers.count(",")
                args = "a, b" if n == 1 else "a, b, b + 0.4"
                SPECS.append(OpSpec(key, f"stats.{dist}.{method}({args})", 2, shaped,
                                    shapes=(((3,), ()),)))
    # quantiles (probabilities in (0.05, 0.95)) and the functions of the parameters alone
    for dist, (_, numbers, shaped) in CONTINUOUS_CASES.items():
        for method in ("ppf", "isf"):
            key = getattr(getattr(stats, dist), method)
            SPECS.append(OpSpec(key, f"stats.{dist}.{method}(a, {numbers}loc=b, scale=c)", 3,
                                ((0.05, 0.95), LOCATED, (1.0, 1.5)), shapes=VALUES))
            if shaped is not None and CONTINUOUS[dist][1] is not None:
                SPECS.append(OpSpec(key, f"stats.{dist}.{method}(a, b)", 2,
                                    ((0.05, 0.95), shaped[1]), shapes=(((3,), ()),)))
        for method in ("median", "entropy") + (MOMENT_METHODS if dist in MOMENTS else ()):
            key = getattr(getattr(stats, dist), method)
            SPECS.append(OpSpec(key, f"stats.{dist}.{method}({numbers}loc=a, scale=b)", 2,
                                (LOCATED, (1.0, 1.5)), shapes=(((), ()), ((3,), ()),
                                                               ((2, 1), (3,)))))
        if shaped is not None:
            n = numbers.count(",")
            args = "a" if n == 1 else "a, a + 0.4"
            SPECS.append(OpSpec(stats.__dict__[dist].entropy, f"stats.{dist}.entropy({args})",
                                1, shaped[1], shapes=(((),), ((3,),))))
            for method in MOMENT_METHODS:  # (t's variance: df > 2)
                SPECS.append(OpSpec(getattr(getattr(stats, dist), method),
                                    f"stats.{dist}.{method}({args}, scale=1.3)", 1,
                                    (2.5, 5.0) if dist == "t" else shaped[1],
                                    shapes=(((),), ((3,),))))
            if CONTINUOUS[dist][1] is not None:
                SPECS.append(OpSpec(stats.__dict__[dist].median,
                                    f"stats.{dist}.median({args})", 1, shaped[1],
                                    shapes=(((),), ((3,),))))
    for dist, numbers, domain in (("poisson", "", (1.0, 4.0)), ("binom", "7, ", (0.2, 0.8)),
                                  ("nbinom", "2.5, ", (0.2, 0.8))):
        for method in ("ppf", "isf"):  # steps: 0 in q and in the shapes
            SPECS.append(OpSpec(getattr(getattr(stats, dist), method),
                                f"stats.{dist}.{method}(a, {numbers}b)", 2,
                                ((0.05, 0.95), domain), shapes=(((3,), ()),)))
        SPECS.append(OpSpec(getattr(stats, dist).median, f"stats.{dist}.median({numbers}a)", 1,
                            domain, shapes=(((),), ((3,),))))
    for method in DISCRETE_METHODS:
        SPECS += [
            OpSpec(getattr(stats.poisson, method), f"stats.poisson.{method}({K}, a)", 1,
                   (1.0, 4.0), shapes=(((),), ((4,),))),
            OpSpec(getattr(stats.binom, method), f"stats.binom.{method}({K}, 7, a)", 1,
                   (0.2, 0.8), shapes=(((),), ((4,),))),
            OpSpec(getattr(stats.nbinom, method), f"stats.nbinom.{method}({K}, 2.5, a)", 1,
                   (0.2, 0.8), shapes=(((),), ((4,),))),
        ]
        if method in ("logpmf", "pmf"):
            SPECS.append(OpSpec(getattr(stats.nbinom, method),
                                f"stats.nbinom.{method}({K}, a, b)", 2,
                                ((1.0, 4.0), (0.2, 0.8)), shapes=(((), ()),)))
    # the multivariate normal: a matrix covariance read by its lower triangle, a number, a
    # diagonal; one sample or rows of samples
    for method in ("logpdf", "pdf"):
        key = getattr(stats.multivariate_normal, method)
        SPECS += [
            OpSpec(key, f"stats.multivariate_normal.{method}(a, b, c @ c.T + np.eye(3))", 3,
                   shapes=(((4, 3), (3,), (3, 3)), ((3,), (3,), (3, 3)))),
            OpSpec(key, f"stats.multivariate_normal.{method}(a, b, np.tril(c @ c.T) + "
                   "np.eye(3) + np.triu(c, 1))", 3, shapes=(((2, 3), (3,), (3, 3)),)),
            OpSpec(key, f"stats.multivariate_normal.{method}(a, mean=b, cov=c)", 3,
                   ((-1.0, 1.0), (-1.0, 1.0), (0.5, 2.0)), shapes=(((2, 3), (3,), (3,)),
                                                                  ((2, 3), (3,), ()))),
        ]
