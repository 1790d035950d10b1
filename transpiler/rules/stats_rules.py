"""``scipy.stats`` distributions as fitting code calls them: ``norm.logpdf(x, mu, sigma)``,
``gamma.cdf(x, a, scale=s)``, ``poisson.logpmf(k, mu)``, registered only where SciPy is.

Every method of every distribution takes the same rule, written once below as a template and
instantiated for each (distribution, method) with the distribution's parameters (its shapes from
``dist.shapes``, then ``loc`` and ``scale``; a discrete one has no ``scale``): one partial per
argument from ``runtime/stats.py``, where the derivatives of each distribution's standard
density are a table. A derivative that has no closed form (a cdf's in a shape parameter) or no
meaning (an integer count) raises when it is asked for.

Before (the user's line) and after (its adjoint, for ``mu`` and ``sigma``)::

    ll = norm.logpdf(y, mu, sigma)

    bmu = rt.stats_partial(bll, 'norm', 'logpdf', 1, ll, y, (), mu, sigma)
    bsigma = rt.stats_partial(bll, 'norm', 'logpdf', 2, ll, y, (), mu, sigma)
"""

import linecache

import runtime as rt  # noqa: F401  (the templates' rt)
from runtime.stats import (
    CONTINUOUS,
    CONTINUOUS_METHODS,
    DISCRETE,
    DISCRETE_METHODS,
    MOMENT_METHODS,
    MOMENTS,
    QUANTILES,
)
from transpiler.rules.registry import adjoint, d, tangent  # noqa: F401  (the templates' d)

try:
    import scipy.stats as stats
except ImportError:  # no SciPy: no rules
    stats = None

PARAMETERS = ("median", "entropy", *MOMENT_METHODS)  # methods of the parameters alone
_ADJOINT = '''
def adj_{name}({params}):
{partials}
'''
_TANGENT = '''
def tan_{name}({params}):
    d[ans] = rt.stats_tangent(({tangents},), "{dist}", "{method}", ans, {call})
'''


def _instantiate(dist: str, method: str, shapes: list[str], discrete: bool) -> None:
    """Register the adjoint and tangent templates of ``<dist>.<method>``: its first argument
    the values (``x``, ``k``), a quantile's probabilities (``q``) or none (``median``,
    ``entropy``: functions of the parameters alone), then the shapes, ``loc`` and ``scale``."""
    first = None if method in PARAMETERS else "q" if method in QUANTILES \
        else "k" if discrete else "x"
    tail = ["loc=0"] if discrete else ["loc=0.0", "scale=1.0"]
    names = [first, *shapes, "loc"] + ([] if discrete else ["scale"])
    params = ", ".join(["ans", *([first] if first else []), *shapes, *tail])
    packed = f"({', '.join(shapes)}{',' if shapes else ''})"
    call = f"{first}, {packed}, loc" + ("" if discrete else ", scale")
    name = f"{dist}_{method}"
    partials = "\n".join(
        f'    d[{p}] = rt.stats_partial(d[ans], "{dist}", "{method}", {i}, ans, {call})'
        for i, p in enumerate(names) if p)
    tangents = ", ".join(f"d[{p}]" if p else "0.0" for p in names)
    source = _ADJOINT.format(name=name, params=params, partials=partials) + _TANGENT.format(
        name=name, params=params, tangents=tangents, dist=dist, method=method, call=call)
    filename = f"<scipy.stats rules: {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = {"rt": rt, "d": d, "__name__": __name__}  # (a built-in rule: parsed when used)
    exec(compile(source, filename, "exec"), scope)
    key = getattr(getattr(stats, dist), method)
    adjoint(key)(scope[f"adj_{name}"])
    tangent(key)(scope[f"tan_{name}"])


if stats is not None:
    for _dist in CONTINUOUS:
        for _method in CONTINUOUS_METHODS + QUANTILES + ("entropy",) \
                + (MOMENT_METHODS if _dist in MOMENTS else ()):
            _shapes = (getattr(stats, _dist).shapes or "").replace(" ", "").split(",")
            _instantiate(_dist, _method, [s for s in _shapes if s], False)
    for _dist in DISCRETE:
        for _method in DISCRETE_METHODS + QUANTILES:
            _shapes = (getattr(stats, _dist).shapes or "").replace(" ", "").split(",")
            _instantiate(_dist, _method, [s for s in _shapes if s], True)

    # the multivariate normal (its covariance read as SciPy reads it: its lower triangle)
    @adjoint(stats.multivariate_normal.logpdf)
    def adj_mvn_logpdf(ans, x, mean=None, cov=1, allow_singular=False):
        d[x] = rt.mvn_partial(d[ans], "logpdf", 0, ans, x, mean, cov)
        d[mean] = rt.mvn_partial(d[ans], "logpdf", 1, ans, x, mean, cov)
        d[cov] = rt.mvn_partial(d[ans], "logpdf", 2, ans, x, mean, cov)

    @tangent(stats.multivariate_normal.logpdf)
    def tan_mvn_logpdf(ans, x, mean=None, cov=1, allow_singular=False):
        d[ans] = rt.mvn_tangent((d[x], d[mean], d[cov]), "logpdf", ans, x, mean, cov)

    @adjoint(stats.multivariate_normal.pdf)
    def adj_mvn_pdf(ans, x, mean=None, cov=1, allow_singular=False):
        d[x] = rt.mvn_partial(d[ans], "pdf", 0, ans, x, mean, cov)
        d[mean] = rt.mvn_partial(d[ans], "pdf", 1, ans, x, mean, cov)
        d[cov] = rt.mvn_partial(d[ans], "pdf", 2, ans, x, mean, cov)

    @tangent(stats.multivariate_normal.pdf)
    def tan_mvn_pdf(ans, x, mean=None, cov=1, allow_singular=False):
        d[ans] = rt.mvn_tangent((d[x], d[mean], d[cov]), "pdf", ans, x, mean, cov)
