"""The block-recycling paper's cost models (docs/PAPERS.md; docs/ALGORITHMS.md §4), for plotting
and checking.

A *merge* consolidates a full log block with its data block: 2 erases and N_p page copies buy
N_p free pages. A *migration* copies only the p valid pages of the log block into a fresh one:
1 erase and p copies buy N_p - p free pages. Per available page::

    W_merge  = (2 C_E + N_p C_cp) / N_p
    W_mig(p) = (C_E + p C_cp) / (N_p - p)             (= W_merge at p = N_p / 2)
    W(n)     = [2 C_E + N_p C_cp + n C_E + a C_cp n(n+1)/2] / [(n+1)(N_p - a n / 2)]

where W(n) is the cost of a period of n migrations copying a, 2a, ..., na pages and a closing
merge. ``n0 = argmin W(n)`` is how many migrations the ``optimal`` recycling policy
(``ftl.recycling = "optimal"``) allows before a merge. The numbers come from the same Rust code
the simulator runs.

Example (the paper's check values)::

    >>> from nandlab.recycling import optimal_migrations
    >>> r = optimal_migrations(alpha=0.1, pages_per_block=128, erase_cost=1.5, copy_cost=1.128)
    >>> r.n0, round(r.ratio, 3), r.equilibrium_p
    (49, 0.05, 64.0)
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from . import _native
from ._errors import argument_error, check_int, native_arguments

__all__ = ["RecyclingCosts", "optimal_migrations"]

N_MAX_LIMIT = 10_000_000
"""The longest W(n) curve the native model computes (``n_max``)."""

MAX_PAGES_PER_BLOCK = 32_768
"""The largest ``pages_per_block`` (as ``device.pages_per_block``)."""


@dataclass(frozen=True)
class RecyclingCosts:
    """The cost model evaluated for one (alpha, N_p, C_E, C_cp). Costs are per available
    page, in the unit of ``erase_cost`` and ``copy_cost``."""

    alpha: float
    pages_per_block: int
    erase_cost: float
    copy_cost: float
    n0: int
    """Optimal number of migrations before a merge."""
    w_merge: float
    """Merge-only cost per available page."""
    equilibrium_p: float
    """The p where migration and merge cost the same (always N_p / 2)."""
    w_mig: list[float]
    """``w_mig[p]``: migration cost per available page, p = 0 .. N_p - 1."""
    w: list[float]
    """``w[n]``: migration/merge sequence cost per available page, n = 0 .. n_max."""

    @property
    def w_n0(self) -> float:
        """W(n0), the minimal sequence cost."""
        return self.w[self.n0] if self.n0 < len(self.w) else self._w(self.n0)

    @property
    def ratio(self) -> float:
        """W(n0) / W_merge (the paper: about 0.05 at alpha = 0.1)."""
        # `optimal_migrations` refuses costs that are both 0, the only way to a zero W_merge.
        return self.w_n0 / self.w_merge

    def _w(self, n: int) -> float:
        _, _, _, _, w = _native.recycling_costs(
            self.alpha, self.pages_per_block, self.erase_cost, self.copy_cost, n
        )
        return w[n]


def optimal_migrations(
    *,
    alpha: float,
    pages_per_block: int,
    erase_cost: float,
    copy_cost: float,
    n_max: int | None = None,
) -> RecyclingCosts:
    """Evaluates the cost model and finds n0 = argmin W(n).

    Args:
        alpha: growth of the pages a migration copies per migration since the last merge.
        pages_per_block: N_p.
        erase_cost: C_E, block erase cost (any unit, e.g. ms).
        copy_cost: C_cp, page copy cost (copyback, or read + program), same unit.
        n_max: last n of the returned W(n) curve; default max(2 n0, 100), capped where
            migrations stop freeing pages.

    Raises:
        ArgumentError: (a ValueError) negative or non-finite inputs, costs that are both 0,
            pages_per_block not in 1 ..= 32,768, n_max not in 0 ..= 10,000,000; the
            message names the argument.
    """
    # The model returns a list of N_p costs: bounded as `device.pages_per_block` is (a
    # 2**32-page block would ask for 32 GiB and abort the interpreter).
    pages_per_block = check_int(
        pages_per_block, "pages_per_block", minimum=1, maximum=MAX_PAGES_PER_BLOCK
    )
    if n_max is not None:
        n_max = check_int(n_max, "n_max", minimum=0, maximum=N_MAX_LIMIT)
    for name, value in (("alpha", alpha), ("erase_cost", erase_cost), ("copy_cost", copy_cost)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise argument_error(name, f"expected a number, not {value!r}", wrong_type=True)
    if erase_cost == 0 and copy_cost == 0:
        raise argument_error(
            "erase_cost", "erase_cost and copy_cost are both 0: every cost would be 0"
        )
    with native_arguments():
        n0, _, _, _, _ = _native.recycling_costs(
            alpha, pages_per_block, erase_cost, copy_cost, 0
        )
        if n_max is None:
            n_max = max(2 * n0, 100)
            if alpha > 0:
                n_max = min(n_max, max(math.ceil(pages_per_block / alpha), n0))
            n_max = min(n_max, 1_000_000)
        n0, w_merge, eq, w_mig, w = _native.recycling_costs(
            alpha, pages_per_block, erase_cost, copy_cost, n_max
        )
    return RecyclingCosts(
        alpha=alpha,
        pages_per_block=pages_per_block,
        erase_cost=erase_cost,
        copy_cost=copy_cost,
        n0=n0,
        w_merge=w_merge,
        equilibrium_p=eq,
        w_mig=w_mig,
        w=w,
    )
