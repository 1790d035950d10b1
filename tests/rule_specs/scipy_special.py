"""Specs of the scipy_special rules (none without SciPy: its rules are not registered either)."""

from __future__ import annotations

from tests.rule_specs.common import AWAY, BINARY, POS, REDUCE_IN, UNARY, OpSpec

try:
    import scipy.special as special
except ImportError:
    special = None

NEG = (-0.9, -0.1)  # between the poles of gamma at -1 and 0
TINY = (-2e-3, 2e-3)  # a Box-Cox lmbda on both sides of the rules' series cut-off
ZERO = (0.0, 0.0)  # exactly 0 (a differentiated lmbda of 0)


def _unary(name, domain=(-2.0, 2.0), signed=(), shapes=UNARY, **kw):
    fn = getattr(special, name)
    return OpSpec(fn, f"special.{name}(a)", 1, domain, shapes, signed, **kw)


def _binary(name, domain=(-2.0, 2.0), signed=(), shapes=BINARY, **kw):
    fn = getattr(special, name)
    return OpSpec(fn, f"special.{name}(a, b)", 2, domain, shapes, signed, **kw)


SPECS: list = []
FLOAT32: list = []

if special is not None:
    SPECS = [
        # --- logistic ---
        _unary("expit"),
        _unary("logit", domain=(0.1, 0.9)),
        _unary("log_expit", domain=(-4.0, 4.0)),
        # --- error functions, normal distribution ---
        _unary("erf"),
        _unary("erfc"),
        _unary("erfinv", domain=(-0.9, 0.9)),
        _unary("erfcinv", domain=(0.1, 1.9)),
        _unary("erfcx"),
        _unary("ndtr", domain=(-3.0, 3.0)),
        _unary("ndtri", domain=(0.05, 0.95)),
        _unary("log_ndtr", domain=(-6.0, 3.0)),
        # --- gamma and beta ---
        _unary("gamma", domain=POS),
        OpSpec(special.gamma, "special.gamma(a) * 1.0", 1, NEG, UNARY),
        _unary("gammaln", domain=POS),
        OpSpec(special.gammaln, "special.gammaln(a) * 1.0", 1, NEG, UNARY),
        _unary("loggamma", domain=POS),
        _unary("digamma", domain=POS),
        OpSpec(special.digamma, "special.psi(a)", 1, NEG, UNARY),  # psi is digamma
        OpSpec(special.polygamma, "special.polygamma(2, a)", 1, POS, UNARY),
        OpSpec(special.polygamma, "special.polygamma(0, a)", 1, NEG, UNARY),
        OpSpec(special.polygamma, "special.polygamma(np.array([0, 1, 3]), a)", 1, POS,
               (((),), ((3,),), ((2, 3),), ((2, 1),))),
        _binary("beta", domain=POS),
        _binary("betaln", domain=POS),
        OpSpec(special.betaln, "special.betaln(a, 2.5)", 1, POS, UNARY),
        # --- logarithms, entropies ---
        _binary("xlogy", domain=((-2.0, 2.0), POS)),
        OpSpec(special.xlogy, "special.xlogy(a, 2.0) + special.xlogy(0.5, a)", 1, POS, UNARY),
        _binary("xlog1py", domain=((-2.0, 2.0), (-0.5, 2.0))),
        _unary("entr", domain=POS),
        _binary("rel_entr", domain=POS),
        _binary("kl_div", domain=POS),
        # --- logsumexp, softmax ---
        OpSpec(special.logsumexp, "special.logsumexp(a)", 1, shapes=UNARY + REDUCE_IN),
        OpSpec(special.logsumexp, "special.logsumexp(a, axis=1)", 1, shapes=REDUCE_IN),
        OpSpec(special.logsumexp, "special.logsumexp(a, -1)", 1, shapes=REDUCE_IN),
        OpSpec(special.logsumexp, "special.logsumexp(a, axis=(0, 2))", 1, shapes=REDUCE_IN),
        OpSpec(special.logsumexp, "special.logsumexp(a, axis=0, keepdims=True)", 1,
               shapes=(((3,),),) + REDUCE_IN),
        OpSpec(special.logsumexp, "special.logsumexp(a, axis=(-1, 0), keepdims=True)", 1,
               shapes=REDUCE_IN),
        OpSpec(special.logsumexp, "special.logsumexp(a, keepdims=True)", 1, shapes=REDUCE_IN),
        OpSpec(special.logsumexp, "special.logsumexp(a, b=b)", 2, ((-2.0, 2.0), POS),
               (((), ()), ((3,), (3,)), ((2, 3), (3,)), ((3,), (2, 3)), ((2, 3), ()))),
        OpSpec(special.logsumexp, "special.logsumexp(a, axis=0, b=b)", 2, ((-2.0, 2.0), POS),
               (((2, 3), (2, 3)), ((3,), (2, 3)), ((2, 3), (2, 1)), ((2, 3), ()))),
        OpSpec(special.logsumexp, "special.logsumexp(a, -1, b, True)", 2, ((-2.0, 2.0), POS),
               (((2, 3), (2, 3)), ((2, 3, 4), (3, 1)), ((4,), (2, 3, 4)))),
        OpSpec(special.logsumexp, "special.logsumexp(a, axis=1, b=np.array([0.5, 1.0, 2.0]))",
               1, shapes=(((2, 3),),)),
        OpSpec(special.softmax, "special.softmax(a)", 1, shapes=UNARY + REDUCE_IN),
        OpSpec(special.softmax, "special.softmax(a, axis=1)", 1, shapes=REDUCE_IN),
        OpSpec(special.softmax, "special.softmax(a, -1)", 1, shapes=((((3,),),) + REDUCE_IN)),
        OpSpec(special.softmax, "special.softmax(a, axis=(0, 2))", 1, shapes=REDUCE_IN),
        OpSpec(special.log_softmax, "special.log_softmax(a)", 1, shapes=UNARY + REDUCE_IN),
        OpSpec(special.log_softmax, "special.log_softmax(a, axis=0)", 1,
               shapes=(((3,),), ((2, 3),)) + REDUCE_IN),
        OpSpec(special.log_softmax, "special.log_softmax(a, -1)", 1, shapes=REDUCE_IN),
        OpSpec(special.log_softmax, "special.log_softmax(a, axis=(1, 2))", 1, shapes=REDUCE_IN),
        # --- robust losses (delta, r) ---
        _binary("huber", domain=(POS, (-3.0, 3.0))),
        OpSpec(special.huber, "special.huber(1.0, a)", 1, (-3.0, 3.0), UNARY),
        _binary("pseudo_huber", domain=(POS, (-3.0, 3.0))),
        OpSpec(special.pseudo_huber, "special.pseudo_huber(0.7, a)", 1, (-3.0, 3.0), UNARY),
        # --- Bessel functions ---
        _unary("i0"),
        _unary("i1"),
        _unary("i0e", domain=AWAY, signed=(0,)),
        _unary("i1e", domain=AWAY, signed=(0,)),
        _unary("j0", domain=(-6.0, 6.0)),
        _unary("j1", domain=(-6.0, 6.0)),
        _unary("y0", domain=(0.5, 6.0)),
        _unary("y1", domain=(0.5, 6.0)),
        _unary("k0", domain=(0.3, 4.0)),
        _unary("k1", domain=(0.3, 4.0)),
        # --- elementary ---
        _unary("expm1"),
        _unary("log1p", domain=(-0.5, 2.0)),
        _unary("exp2"),
        _unary("exp10"),
        _unary("cbrt", domain=AWAY, signed=(0,)),
        _unary("sindg", domain=(-200.0, 200.0)),
        _unary("cosdg", domain=(-200.0, 200.0)),
        # --- Box-Cox ---
        _binary("boxcox", domain=(POS, (-2.0, 2.0))),
        OpSpec(special.boxcox, "special.boxcox(a, b)", 2, ((0.2, 3.0), TINY),
               (((5,), (5,)), ((2, 2), (2, 2)), ((4,), ()))),
        OpSpec(special.boxcox, "special.boxcox(a, b) * 1.0", 2, ((0.2, 3.0), ZERO),
               (((3,), (3,)), ((), ()))),
        OpSpec(special.boxcox, "special.boxcox(a, 0.0) + special.boxcox(a, 1.5)", 1, POS, UNARY),
        _binary("inv_boxcox", domain=((-0.4, 2.0), (-0.4, 1.5))),
        OpSpec(special.inv_boxcox, "special.inv_boxcox(a, b)", 2, ((-0.4, 2.0), TINY),
               (((5,), (5,)), ((2, 2), (2, 2)), ((4,), ()))),
        OpSpec(special.inv_boxcox, "special.inv_boxcox(a, b) * 1.0", 2, ((-0.4, 2.0), ZERO),
               (((3,), (3,)), ((), ()))),
        OpSpec(special.inv_boxcox, "special.inv_boxcox(a, 0.0) + special.inv_boxcox(a, 0.5)", 1,
               (-0.4, 2.0), UNARY),
    ]

    FLOAT32 = [
        ("special.expit(a) + special.log_expit(a)", ((2, 3),)),
        ("special.erf(a) * special.erfcx(a)", ((5,),)),
        ("special.log_ndtr(a) + special.ndtr(a)", ((5,),)),
        ("special.gammaln(a) + special.digamma(a)", ((2, 3),)),
        ("special.beta(a, b)", ((3, 1), (1, 4))),
        ("special.xlogy(a, b) + special.kl_div(a, b)", ((2, 3), (3,))),
        ("special.logsumexp(a, axis=1)", ((2, 3, 4),)),
        ("special.logsumexp(a, axis=0, b=b)", ((2, 3), (2, 3))),
        ("special.softmax(a, axis=-1)", ((2, 3),)),
        ("special.log_softmax(a, axis=0)", ((2, 3),)),
        ("special.huber(a, b) + special.pseudo_huber(a, b)", ((2, 3), (3,))),
        ("special.i1(a) + special.i1e(a) + special.k1(a)", ((4,),)),
        ("special.boxcox(a, b)", ((3,), (3,))),
        ("special.inv_boxcox(a, b)", ((3,), (3,))),
    ]
