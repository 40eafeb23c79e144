"""The block-recycling paper's cost model as exposed to Python: the paper's check values, the
equilibrium, the shape of W(n), and argument validation."""

import math
from typing import Any

import pytest

from nandlab.recycling import optimal_migrations


def test_paper_check_values() -> None:
    r = optimal_migrations(alpha=0.1, pages_per_block=128, erase_cost=1.5, copy_cost=1.128)
    assert r.n0 == 49
    assert r.ratio == pytest.approx(0.050, abs=0.0015)
    assert r.equilibrium_p == pytest.approx(64.0)
    # W(0) is a merge every N_p pages.
    assert r.w[0] == pytest.approx(r.w_merge)
    assert r.w_merge == pytest.approx((2 * 1.5 + 128 * 1.128) / 128)


def test_curves_have_the_expected_shape() -> None:
    r = optimal_migrations(alpha=0.1, pages_per_block=128, erase_cost=1.5, copy_cost=1.128)
    assert len(r.w_mig) == 128
    assert r.w_mig[64] == pytest.approx(r.w_merge)
    assert all(a < b for a, b in zip(r.w_mig, r.w_mig[1:]))
    assert min(r.w) == r.w[r.n0] == r.w_n0
    assert r.w[:r.n0 + 1] == sorted(r.w[:r.n0 + 1], reverse=True)
    assert len(r.w) == 101  # default n_max = max(2 n0, 100)


def test_a_steeper_growth_rate_means_earlier_merges() -> None:
    n0s = [
        optimal_migrations(alpha=a, pages_per_block=128, erase_cost=1.5, copy_cost=1.128).n0
        for a in (0.05, 0.1, 0.5, 2.0, 10.0)
    ]
    assert n0s == sorted(n0s, reverse=True)
    assert n0s[0] > n0s[-1]


def test_no_page_is_freed_past_the_block() -> None:
    r = optimal_migrations(
        alpha=64, pages_per_block=128, erase_cost=1.5, copy_cost=1.128, n_max=3
    )
    assert math.isinf(r.w[2])
    assert math.isinf(r.w[3])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"alpha": -1.0},
        {"alpha": float("nan")},
        {"pages_per_block": 0},
        {"erase_cost": -1.0},
    ],
)
def test_bad_arguments_raise_value_error(kwargs: dict[str, Any]) -> None:
    args: dict[str, Any] = {
        "alpha": 0.1, "pages_per_block": 128, "erase_cost": 1.5, "copy_cost": 1.128
    }
    args.update(kwargs)
    with pytest.raises((ValueError, OverflowError)):
        optimal_migrations(**args)
