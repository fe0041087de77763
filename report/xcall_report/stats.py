"""Statistics: mean and stddev over repeats, and Welch's t-test (two-sided), in pure Python."""
import math

ALPHA = 0.05
TEST_NAME = "Welch's t-test, two-sided"


def mean(xs):
    return sum(xs) / len(xs)


def stddev(xs):
    """Sample standard deviation (n - 1); 0 for a single value."""
    if len(xs) < 2:
        return 0.0
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def _betacf(a, b, x):
    """Continued fraction for the regularised incomplete beta (modified Lentz)."""
    tiny, eps = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((a + m2 - 1) * (a + m2)),
                    -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


def betainc(a, b, x):
    """Regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t, df):
    """P(|T| >= |t|) for Student's t with df degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def welch_summary(m1, s1, n1, m2, s2, n2):
    """Welch's t-test from means, standard deviations and counts; returns the p-value,
    or None when it cannot be computed (fewer than two values on a side)."""
    if n1 < 2 or n2 < 2:
        return None
    v1, v2 = s1 * s1 / n1, s2 * s2 / n2
    if v1 + v2 == 0.0:
        return 1.0 if m1 == m2 else 0.0          # no variance: equal or surely different
    t = (m1 - m2) / math.sqrt(v1 + v2)
    den = (v1 * v1 / (n1 - 1) if v1 else 0.0) + (v2 * v2 / (n2 - 1) if v2 else 0.0)
    if den == 0.0:
        return None                              # variances so small their squares underflow
    df = (v1 + v2) ** 2 / den
    return t_two_sided_p(t, df)


def welch(xs, ys):
    """Welch's t-test on two samples; p-value or None."""
    return welch_summary(mean(xs), stddev(xs), len(xs), mean(ys), stddev(ys), len(ys))


def aggregate(runs):
    """Average each statistic of the repeats of one case: {stat: value}."""
    keys = set.intersection(*(set(r.stats) for r in runs))
    return {k: mean([r.stats[k] for r in runs]) for k in keys}


def t_critical(df, alpha=ALPHA):
    """The two-sided critical value of Student's t: P(|T| >= t) = alpha (bisection)."""
    lo, hi = 0.0, 1.0
    while t_two_sided_p(hi, df) > alpha:
        lo, hi = hi, hi * 2.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        if t_two_sided_p(mid, df) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def mean_interval(m, s, n, alpha=ALPHA):
    """The (1 - alpha) confidence interval of a mean from its values' mean, stddev and count,
    or None with fewer than two values. A positive mean's interval is computed on a log scale
    (m ×÷ exp(t · (s / m) / sqrt(n)), the delta method), so that it stays above zero as a time
    does, and a mean carried by a few huge samples gets a wide interval that still excludes
    the small values those samples did not touch; otherwise m ± t · s / sqrt(n)."""
    if n < 2:
        return None
    t = t_critical(n - 1, alpha)
    if m > 0:
        spread = math.exp(min(t * (s / m) / math.sqrt(n), 700.0))
        return m / spread, m * spread
    half = t * s / math.sqrt(n)
    return m - half, m + half


def overlap(a, b):
    """Whether two intervals (lo, hi) share a point."""
    return a[0] <= b[1] and b[0] <= a[1]
