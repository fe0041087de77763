"""Statistics against values from Student's t tables."""
import math

import pytest

from xcall_report import stats


def test_mean_and_sample_stddev():
    assert stats.mean([1, 2, 3, 4]) == 2.5
    assert stats.stddev([2, 4, 4, 4, 5, 5, 7, 9]) == pytest.approx(math.sqrt(32 / 7))
    assert stats.stddev([5.0]) == 0.0


@pytest.mark.parametrize("t, df, p", [
    (1.0, 1, 0.5),                 # Cauchy: P(|T| > 1) = 1/2
    (2.228, 10, 0.05),             # two-sided 5% critical value, df 10
    (2.571, 5, 0.05),
    (4.604, 4, 0.01),
    (1.96, 1e7, 0.05),             # the normal limit
    (0.0, 3, 1.0),
])
def test_t_two_sided_p(t, df, p):
    assert stats.t_two_sided_p(t, df) == pytest.approx(p, abs=2e-4)


def test_welch_on_samples():
    xs, ys = [1, 2, 3, 4, 5], [2, 4, 6, 8, 10]
    # t = -3 / sqrt(0.5 + 2) = -1.897, df = 2.5^2 / (0.5^2/4 + 2^2/4) = 5.882
    t = -3 / math.sqrt(2.5)
    df = 2.5 ** 2 / (0.25 / 4 + 4 / 4)
    assert stats.welch(xs, ys) == pytest.approx(stats.t_two_sided_p(t, df))
    assert 0.10 < stats.welch(xs, ys) < 0.12


def test_welch_zero_variance_and_too_few():
    assert stats.welch([3, 3, 3], [3, 3]) == 1.0
    assert stats.welch([3, 3, 3], [4, 4]) == 0.0
    assert stats.welch([3], [4, 5]) is None


def test_welch_summary_matches_samples():
    xs, ys = [10, 11, 12, 13], [20, 22, 19, 25]
    assert stats.welch_summary(stats.mean(xs), stats.stddev(xs), 4,
                               stats.mean(ys), stats.stddev(ys), 4) == \
        pytest.approx(stats.welch(xs, ys))
