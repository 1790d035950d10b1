"""scipy.stats as fitting code calls it: likelihoods of data in the distributions' parameters,
as functions and as frozen distributions, against finite differences in both modes; the
derivatives that do not exist refused when asked for. (Every method of every distribution is
in the spec table, tests/rule_specs/stats.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from tests.util import run_readme_block
from transpiler import check_grad, grad, hvp, jvp
from transpiler.errors import NoRuleError

stats = pytest.importorskip("scipy.stats")
Y = np.array([0.4, 1.3, 2.2, 0.9, 3.1])


def _tangent_check(f, args, tangents):
    h = 1e-6
    _, tangent = jvp(f, args, tangents)
    up = f(*[a + h * t for a, t in zip(args, tangents, strict=True)])
    down = f(*[a - h * t for a, t in zip(args, tangents, strict=True)])
    np.testing.assert_allclose(tangent, (up - down) / (2 * h), rtol=1e-6, atol=1e-9)


def test_a_likelihood_as_functions_and_frozen_distributions():
    def nll(mu, sigma, shape):
        frozen = stats.norm(mu, sigma)
        ll = np.sum(frozen.logpdf(Y)) + np.sum(stats.gamma.logpdf(Y, shape, scale=sigma))
        censored = stats.norm(loc=mu, scale=sigma).logsf(4.0)  # one value beyond 4
        return -(ll + censored)

    check_grad(nll, 1.1, 0.8, 2.3, wrt=(0, 1, 2))
    _tangent_check(nll, (1.1, 0.8, 2.3), (1.0, 0.5, -0.3))
    source = grad(nll, wrt=(0, 1, 2)).source
    assert "norm.logpdf(Y, mu, sigma)" in source  # (the frozen distribution's call, unfolded)


def test_counts_in_their_rates():
    counts = np.array([0, 2, 3, 7, 1])

    def nll(log_rate, p):
        rate = np.exp(log_rate)
        return -np.sum(stats.poisson.logpmf(counts, rate)) \
            - np.sum(stats.nbinom.logpmf(counts, rate, p)) - stats.binom.logcdf(3, 9, p)

    check_grad(nll, np.log(np.array([0.5, 1.5, 2.5, 6.0, 1.0])), 0.4, wrt=(0, 1))
    _tangent_check(nll, (np.zeros(5), 0.4), (np.ones(5), 0.1))


def test_a_multivariate_normal_in_its_mean_and_covariance():
    rng = np.random.default_rng(3)
    samples = rng.normal(size=(6, 3))

    def nll(mean, factor):
        cov = factor @ factor.T + 0.3 * np.eye(3)
        return -np.sum(stats.multivariate_normal.logpdf(samples, mean, cov))

    check_grad(nll, rng.normal(size=3), rng.normal(size=(3, 3)), wrt=(0, 1))


def test_derivatives_that_do_not_exist_are_refused():
    def shape_of_cdf(a):
        return stats.gamma.cdf(1.5, a)

    def count(n):
        return stats.binom.logpmf(2, n, 0.3)

    with pytest.raises(NotImplementedError, match="gamma.cdf is not differentiated with "
                       "respect to its shape"):
        grad(shape_of_cdf)(2.0)
    with pytest.raises(NotImplementedError, match="binom.logpmf is not differentiated"):
        grad(count)(7.0)
    assert grad(lambda x: stats.gamma.cdf(x, 2.0))(1.5) == pytest.approx(
        stats.gamma.pdf(1.5, 2.0), rel=1e-12)


def _laplace_objective(theta):
    mu, log_s, shape = theta[0], theta[1], theta[2]
    s = np.exp(log_s)
    ll = np.sum(stats.t.logpdf(Y, shape, mu, s)) + np.sum(stats.lognorm.logcdf(Y, s, scale=2.0))
    ll = ll + np.sum(stats.nbinom.logpmf([0, 3, 5], shape, 0.4)) + stats.norm.logsf(4.0, mu, s)
    cov = np.array([[s, 0.2], [0.2, 1.0 + mu * mu]])
    ll = ll + np.sum(stats.multivariate_normal.logpdf(np.stack([Y[:2], Y[2:4]]), [mu, 0.5], cov))
    return -ll + stats.multivariate_normal.pdf([mu, log_s], [0.9, 0.1], [[1.0, 0.3], [0.3, 2.0]])


def _frozen_mvn(mu, s):
    model = stats.multivariate_normal(mu, cov=np.array([[s, 0.3], [0.3, 2.0]]))
    points = np.stack([Y[:3], Y[2:]], axis=1)
    return -np.sum(model.logpdf(points)) + model.pdf(mu * 0.5)


def test_a_frozen_multivariate_normal_in_every_mode():
    mu = np.array([0.2, 0.1])
    check_grad(_frozen_mvn, mu, 1.5, wrt=(0, 1))
    assert "multivariate_normal.logpdf(points, mu, cov=" in grad(_frozen_mvn).source
    _tangent_check(_frozen_mvn, (mu, 1.5), (np.array([0.3, -1.0]), 0.2))
    gradient, h, v = grad(_frozen_mvn), 1e-5, np.array([1.0, -0.5])
    np.testing.assert_allclose(hvp(_frozen_mvn)(mu, 1.5, v),
                               (gradient(mu + h * v, 1.5) - gradient(mu - h * v, 1.5)) / (2 * h),
                               rtol=1e-6, atol=1e-9)


def test_second_derivatives_of_a_likelihood_match_differences_of_its_gradient():
    theta = np.array([1.1, -0.2, 3.5])
    gradient, h = grad(_laplace_objective), 1e-5
    for v in np.eye(3):
        np.testing.assert_allclose(
            hvp(_laplace_objective)(theta, v),
            (gradient(theta + h * v) - gradient(theta - h * v)) / (2 * h), rtol=1e-6, atol=1e-8)


def test_a_tail_s_second_derivative_in_a_shape_is_refused_when_asked_for():
    def f(x):
        return np.sum(stats.gamma.logsf(Y, 2.0, scale=x))  # (its first derivative in x exists)

    gradient, h = grad(f), 1e-5
    assert hvp(f)(1.3, 1.0) == pytest.approx((gradient(1.3 + h) - gradient(1.3 - h)) / (2 * h),
                                             rel=1e-6)
    with pytest.raises(NotImplementedError, match="t.cdf is not differentiated with respect to "
                       "its shape"):
        hvp(lambda df: stats.t.cdf(1.0, df))(3.0, 1.0)


def _quantiles_and_entropies(theta):
    """Quantiles (a value-at-risk, a lognormal's upper tail, a median), entropies (a maximum
    entropy prior's terms) and moments (a moment match) in every parameter at once."""
    q, mu, s, a, b = theta
    levels = np.array([0.05, q, 0.9])
    var = np.sum(stats.norm.ppf(levels, mu, s) ** 2) + np.sum(stats.lognorm.isf(levels, s, mu))
    var = var + stats.lognorm.ppf(q, s, scale=a) * stats.gamma(2.0, mu, scale=a).median()
    spread = stats.beta.entropy(a, b) + stats.t(a + b, loc=mu, scale=s).entropy()
    moments = stats.beta(a, b).var() * 3.0 + stats.lognorm(s, loc=mu, scale=a).std() \
        + stats.t.var(a + 2.0, scale=s) + stats.gamma(a, scale=s).mean() * stats.beta.std(a, b)
    return var + spread * stats.gamma.entropy(a, scale=s) + stats.t.isf(q, 4.0, mu, s) + moments


def test_quantiles_entropies_and_moments_in_every_mode():
    theta = np.array([0.3, 1.1, 0.7, 2.5, 1.8])
    check_grad(_quantiles_and_entropies, theta)
    _tangent_check(_quantiles_and_entropies, (theta,), (np.array([0.1, 1.0, -0.5, 0.3, 0.2]),))
    gradient, h = grad(_quantiles_and_entropies), 1e-5
    for v in np.eye(5):  # (every pair of parameters: lognorm's quantile in its shape, too)
        np.testing.assert_allclose(
            hvp(_quantiles_and_entropies)(theta, v),
            (gradient(theta + h * v) - gradient(theta - h * v)) / (2 * h), rtol=1e-6, atol=1e-8)


def test_a_quantile_in_a_shape_without_a_closed_form_is_refused_a_discrete_one_is_a_step():
    with pytest.raises(NotImplementedError, match="gamma.ppf is not differentiated with "
                       "respect to its shape"):
        grad(lambda a: stats.gamma.ppf(0.3, a))(2.0)
    with pytest.raises(NotImplementedError, match="t.median is not differentiated"):
        grad(lambda df: stats.t.median(df))(3.0)
    assert grad(lambda q, mu: stats.poisson.ppf(q, mu), wrt=(0, 1))(0.4, 3.2) == (0.0, 0.0)
    with pytest.raises(NoRuleError, match="cauchy.mean"):  # (it does not exist)
        grad(lambda s: stats.cauchy.mean(scale=s))(2.0)
    assert grad(lambda q: stats.norm.ppf(q))(0.975) == pytest.approx(
        1.0 / stats.norm.pdf(stats.norm.ppf(0.975)), rel=1e-12)


def test_readme_stats_example(capsys):
    run_readme_block("# Likelihoods with scipy.stats", capsys)
