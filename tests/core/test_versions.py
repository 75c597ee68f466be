"""Version order (core/versions.py): SemVer 2.0.0 precedence, and the order of harness
versions, which need not be semantic versions (the version a store's marketplace lists)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from horon_bundle.core.versions import release_order


def test_semantic_versions_follow_precedence_and_rank_above_every_other_string() -> None:
    ordered = ["9.0", "2024.01.15", "v10", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta",
               "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.2.0", "1.10.0"]
    assert sorted(ordered[1::2] + ordered[::2], key=release_order) == ordered
    assert max(["1.9.0", "1.10.0", "1.10.0-rc.1"], key=release_order) == "1.10.0"


@pytest.mark.parametrize(("low", "high"), [("1.2", "1.10"), ("1.2_beta", "1.2_rc"),
                                           ("2024.1.9", "2024.1.10"), ("7", "beta")])
def test_other_versions_by_their_parts_numbers_numerically(low: str, high: str) -> None:
    assert release_order(low) < release_order(high)


def test_build_metadata_never_ties() -> None:
    assert release_order("1.0.0+a") < release_order("1.0.0+b")


@given(st.lists(st.from_regex(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,12}", fullmatch=True),
                min_size=2, max_size=6))
def test_no_two_versions_tie(versions: list[str]) -> None:
    assert len({release_order(v) for v in versions}) == len(set(versions))
