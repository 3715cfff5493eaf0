"""Small real runs of the env and fidelity scripts: they measure and return their figures."""

from __future__ import annotations

import pytest

from benchmarks.env import html_render


def test_html_render_times_every_page_an_expert_visits():
    figures = html_render.main(["--goals", "2", "--repeats", "1"])
    # An expert episode searches, opens a product and buys: those pages and the item's sub-pages.
    assert {"search", "results", "item", "sub_page"} <= set(figures["renders"])
    assert all(r["timed"] >= 1 and r["median_s"] > 0 for r in figures["renders"].values())
    assert set(figures["step_median_s"]) == {"html", "text"}
    assert all(seconds > 0 for seconds in figures["step_median_s"].values())
    assert html_render.markdown(figures).startswith("| page | renders timed | median render ms |")


def test_search_agreement_counts_the_embedded_engine_against_the_reference(webshop_1k):
    import json

    from benchmarks.fidelity.search_agreement import COLUMNS, agreement
    from webshop_gym.data.catalog import load_catalog
    from webshop_gym.search.engines import build_engine

    with (webshop_1k / "reference_bm25_hits_1000.jsonl").open() as handle:
        references = [json.loads(line) for line, _ in zip(handle, range(40), strict=False)]
    counts = agreement(build_engine(load_catalog(webshop_1k), "bm25"), references)
    assert set(counts) == set(COLUMNS)
    # The embedded engine ranks as Lucene does: these queries' hits all agree (README's figure).
    assert counts["top-50 in order"] == counts["top-10 in order"] == len(references)
    assert counts["top-50 + scores"] in (None, len(references))


def test_web_slow_clients_guarded_server_serves_visitors_while_sockets_idle():
    from benchmarks.env.web_slow_clients import measure

    result = measure("guarded", "idle", sockets=20, visitors=3, timeout=10.0)
    assert result["sockets"] == 20 and result["served"] == result["visitors"] == 3
    assert result["slowest_s"] is not None and result["slowest_s"] < 10.0


def test_openenv_load_two_sessions_stay_apart():
    pytest.importorskip("openenv", reason="needs webshop-gym's openenv extra")
    from benchmarks.env.openenv_load import make_plans, measure

    figures = measure(sessions=2, steps=4, runs=1)
    (run,) = figures["runs"]
    # Every page and reward is compared with a local env's: no error in any session.
    assert run["errors"] == []
    assert len(run["step_s"]) == sum(len(plan.actions) for plan in make_plans(2, 4))
    assert run["wall_s"] > 0 and all(seconds > 0 for seconds in run["step_s"])


def test_openenv_load_report_has_a_row_per_run_and_the_errors():
    from benchmarks.env.openenv_load import report

    figures = {
        "url": "http://127.0.0.1:1",
        "sessions": 2,
        "steps": 4,
        "runs": [
            {"wall_s": 0.5, "step_s": [0.001, 0.002, 0.004, 0.003], "errors": []},
            {"wall_s": 0.1, "step_s": [], "errors": ["session 0: ConnectionRefusedError: refused"]},
        ],
    }
    lines = report(figures)
    assert lines[2:6] == [
        "| run | steps | errors | wall | steps/s | p50 ms | p95 ms | p99 ms | max ms |",
        "|---|---|---|---|---|---|---|---|---|",
        "| 1 | 4 | 0 | 0.50 s | 8 | 2.5 | 4.0 | 4.0 | 4.0 |",
        "| 2 | 0 | 1 | | | | | | |",  # nothing timed: empty cells written "| |", as always
    ]
    assert lines[6:] == ["", "error: session 0: ConnectionRefusedError: refused"]


def test_reward_agreement_samples_each_goal_own_product_hits_and_random_buys(webshop_1k):
    from benchmarks.fidelity import reward_agreement

    sample = reward_agreement.purchases(webshop_1k, seed=0)
    assert sample == reward_agreement.purchases(webshop_1k, seed=0)  # seeded: the same every run
    kinds = [kind for kind, *_ in sample]
    goals = kinds.count("goal's product")
    assert goals > 0 and kinds.count("random") == goals * reward_agreement.RANDOM_PURCHASES
    assert 0 < kinds.count("search hit") <= goals * reward_agreement.HITS
    for _, _, product, price, options in sample[:200]:
        assert price > 0 and all(value in product.options[name] for name, value in options.items())


def test_reward_agreement_says_how_to_get_spacy_where_it_is_missing():
    from benchmarks.fidelity import reward_agreement

    try:
        import spacy  # noqa: F401
    except ImportError:
        with pytest.raises(SystemExit, match="pip install 'webshop-gym\\[spacy\\]'"):
            reward_agreement.load_spacy(None)
    else:
        with pytest.raises(SystemExit, match="is installed"):
            reward_agreement.load_spacy("no-such-spacy-model")
