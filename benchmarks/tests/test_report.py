"""Failure kinds and the table's averages, on hand-made episode records."""

from __future__ import annotations

import pytest

from benchmarks.harness.report import FAILURE_KINDS, failure_kind, failure_report, markdown_table, summarize

MANIFEST = "ab" * 32


def record(
    success=False,
    purchased=True,
    actions=("search[x]", "click[b0]", "click[buy now]"),
    invalid=0,
    manifest=MANIFEST,
    **parts,
):
    breakdown = (
        {"r_type": 1.0, "r_att": 1.0, "r_option": 1.0, "r_price": True, **parts} if purchased else None
    )
    return {
        "agent": "a",
        "env": "e",
        "catalogue": "mini",
        "goal_source": "human",
        "split": "test",
        "split_manifest": manifest,
        "goal_index": 0,
        "seed": 0,
        "instruction": "red shoes",
        "goal": {
            "asin": "B0",
            "category": "shoes",
            "attributes": ["x"],
            "options": ["red"],
            "price_upper": 50.0,
        },
        "trajectory": [{"page": "search"}]
        + [{"action": a, "page": "item", "action_error": ""} for a in actions],
        "steps": len(actions),
        "invalid_actions": invalid,
        "purchased": purchased,
        "success": success,
        "score": 1.0 if success else 0.5,
        "reward_breakdown": breakdown,
        "purchased_asin": "B0" if purchased else None,
        "purchased_options": {},
    }


@pytest.mark.parametrize(
    ("episode", "kind"),
    [
        (record(success=True), None),
        (
            record(purchased=False, actions=["search[a]", "click[back to search]"] * 7 + ["search[b]"]),
            "search loop",
        ),
        (record(purchased=False, actions=["click[next >]"] * 15), "ran out of steps"),
        (record(purchased=False, actions=["click[nonsense]"] * 15, invalid=15), "invalid actions"),
        (record(r_type=0.5), "wrong product"),
        (record(r_att=0.5, r_option=0.0), "wrong product"),
        (record(r_option=0.5), "wrong option"),
        (record(r_price=False), "over budget"),
    ],
)
def test_failure_kinds(episode, kind):
    assert failure_kind(episode) == kind
    assert kind is None or kind in FAILURE_KINDS


def test_components_count_no_purchase_as_zero_and_skip_goals_without_the_part():
    no_options = record(success=True)
    no_options["goal"] = {**no_options["goal"], "options": [], "price_upper": 1000000.0}
    rows = summarize([record(success=True), record(purchased=False), no_options])
    (row,) = rows
    assert (
        row["episodes"] == 3
        and row["success"] == pytest.approx(200 / 3)
        and row["bought"] == pytest.approx(200 / 3)
    )
    assert row["attribute"] == pytest.approx(2 / 3)  # 1, 0 (no purchase), 1
    assert row["option"] == pytest.approx(1 / 2)  # the goal without options is left out
    assert row["price"] == pytest.approx(1 / 2)
    assert "| a | e | mini | human | test | abababababab | 3 |" in markdown_table(rows)
    assert row["split_manifest"] == MANIFEST  # all of it in summary.json


def test_episodes_on_other_goals_never_share_a_row():
    other = record(success=True, manifest="cd" * 32)
    old = {k: v for k, v in record().items() if k not in ("catalogue", "goal_source", "split_manifest")}
    rows = summarize([record(), other, record(), old])
    assert [(r["split_manifest"], r["episodes"]) for r in rows] == [(MANIFEST, 2), ("cd" * 32, 1), (None, 1)]
    table = markdown_table(rows)
    assert "| a | e | mini | human | test | cdcdcdcdcdcd | 1 | 100.0 |" in table
    # Episodes recorded before runs named their goals say so.
    assert "| a | e | not recorded | not recorded | test | not recorded | 1 |" in table
    report = failure_report([record(), other])
    assert "a on e, test split (manifest abababababab): 1 of 1 episodes failed" in report
    assert "a on e, test split (manifest cdcdcdcdcdcd): 0 of 1 episodes failed" in report


def test_failure_report_shows_example_trajectories():
    text = failure_report([record(r_option=0.5), record(success=True)])
    assert "1 of 2 episodes failed" in text and "| wrong option | 1 | 100% |" in text
    assert "`click[buy now]`" in text and "bought B0" in text
