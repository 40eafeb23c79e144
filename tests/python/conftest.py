"""Shared fixtures: small devices so that the whole suite runs in seconds."""

from __future__ import annotations

import os
from typing import Any

import pytest

# Plots must work without a display.
os.environ.setdefault("MPLBACKEND", "Agg")

SMALL: dict[str, Any] = {"device.blocks": 64, "device.pages_per_block": 16}
"""A 64-block device of 16 pages: a run takes about a millisecond."""


@pytest.fixture
def small() -> dict[str, Any]:
    return dict(SMALL)


# MSR Cambridge lines (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime): 64 writes
# of 64 KiB spread over 64 erase-block-sized chunks 1 MiB apart, then 16 reads. Sized from the
# trace, the device has enough blocks for the cleaner's reserve.
MSR_LINES = [
    f"{128166372003061629 + 10_000 * i},hm,0,Write,{3221225472 + i * 1048576},65536,1000"
    for i in range(64)
] + [
    f"{128166372004061629 + 10_000 * i},hm,0,Read,{3221225472 + i * 1048576},4096,1000"
    for i in range(16)
]


@pytest.fixture
def msr_trace(tmp_path: Any) -> Any:
    path = tmp_path / "hm_0.csv"
    path.write_text("\n".join(MSR_LINES) + "\n")
    return path
