"""Issue 43: what the web shop's pages say to people (`webshop_gym.web.pages`), beyond the layout.

Notices without agents' action lists, the warning when few actions are left, a search of
only spaces that costs nothing, keyboard focus kept on the control just used, the done
page's checks explained, and a crowd mode without split jargon. The observations agents
read are pinned elsewhere (`test_render_html.test_observations_are_byte_for_byte_as_pinned`).
"""

from __future__ import annotations

import dataclasses
import re

import pytest
from bs4 import BeautifulSoup

from webshop_gym.data.catalog import load_catalog
from webshop_gym.envs import WebShopEnv
from webshop_gym.reward import original_reward
from webshop_gym.shop import Page, PageState
from webshop_gym.web import ServerConfig, create_app
from webshop_gym.web.pages import actions_warning, people_notice, purchase_outcome, score_band

PAGE = re.compile(r"/s/[A-Za-z0-9_.-]+/\d+/")


@pytest.fixture(scope="module")
def client():
    return create_app(ServerConfig(catalog="mini", split="test", max_steps=8)).test_client()


def post(client, page: str, **form: str) -> tuple[str, BeautifulSoup]:
    response = client.post(page, data=form)
    assert response.status_code == 303, response.data
    location = response.headers["Location"]
    return location, BeautifulSoup(client.get(location).get_data(as_text=True), "html.parser")


def test_notices_are_short_and_name_no_actions() -> None:
    env = WebShopEnv(split="test")
    env.reset(options={"goal_index": 0})
    messages = []
    for action in ("click[nothing here]", "click[search]", "search[   ]", "jump[x]", "", "click[]"):
        _, _, _, _, info = env.step(action)
        messages.append((info["action_error"], people_notice(info["action_error"])))
    env.step("search[shoes]")
    _, _, _, _, info = env.step("search[again]")
    messages.append((info["action_error"], people_notice(info["action_error"])))
    for agents, people in messages:
        assert "Valid actions" in agents or "No action is valid" in agents  # the env's, for agents
        assert people.startswith("That did nothing: ") and people.endswith(" It used one action.")
        assert "click[" not in people and "search[" not in people and len(people) < 130, people
    assert (
        messages[0][1]
        == "That did nothing: there is no “nothing here” to click on this page. It used one action."
    )
    assert "Back to Search" in messages[-1][1]
    assert people_notice("") == ""


@pytest.mark.parametrize(
    ("page", "left", "expected"),
    [
        (Page.ITEM, 4, ""),
        (Page.ITEM, 3, "3 actions left. Only Buy Now finishes the task"),
        (Page.ITEM, 1, "1 action left. Only Buy Now finishes the task"),
        (
            Page.SUB_PAGE,
            2,
            "2 actions left. Only Buy Now finishes the task, and from here that takes 2: < Prev",
        ),
        (
            Page.SUB_PAGE,
            1,
            "Only 1 action left: too few to buy from here (< Prev back to the product, then Buy Now takes 2)",
        ),
        (
            Page.RESULTS,
            2,
            "2 actions left. Only Buy Now finishes the task, and from here that takes 2: open a product",
        ),
        (
            Page.SEARCH,
            2,
            "Only 2 actions left: too few to buy from here (search, open a product, then Buy Now takes 3)",
        ),
        (Page.DONE, 1, ""),
    ],
)
def test_the_warning_says_what_still_fits(page: Page, left: int, expected: str) -> None:
    state = PageState(page, "x", ("q",), ("B01",), asin="B01", sub_page="Features")
    warning = actions_warning(state, left)
    assert warning.startswith(expected) and bool(warning) == bool(expected), warning


def test_the_warning_counts_the_way_back_from_an_empty_results_page() -> None:
    empty = PageState(Page.RESULTS, "x", ("q",), ())
    assert "too few" in actions_warning(empty, 3) and "Back to Search, search" in actions_warning(empty, 3)


def test_a_search_of_only_spaces_costs_nothing_on_the_first_page_too(client) -> None:
    response = client.post("/?goal=1", data={"search_query": "   "})
    assert response.status_code == 303 and response.headers["Location"] == "/?goal=1&notice=empty-search"
    soup = BeautifulSoup(client.get(response.headers["Location"]).get_data(as_text=True), "html.parser")
    assert "cost no action" in soup.select_one("#notice").get_text()
    assert "8 actions left" in soup.select_one(".site-bar").get_text()  # no session, nothing used
    # Any other notice key is ignored (the address cannot put words on the page).
    other = client.get("/?goal=1&notice=%3Cb%3Ehi").get_data(as_text=True)
    assert 'id="notice"' not in other and "hi" not in BeautifulSoup(other, "html.parser").get_text()


def test_the_warning_shows_on_the_page_when_three_actions_are_left(client) -> None:
    page, soup = post(client, "/?goal=0", search_query="leggings")  # 7 left
    assert soup.select_one("#actions-warning") is None
    product = soup.select_one("button.product-card")["value"]
    page, soup = post(client, page, action=product)  # 6
    for _ in range(3):
        page, soup = post(client, page, action="click[description]")
        page, soup = post(client, page, action="click[< prev]")
        if soup.select_one("#actions-warning"):
            break
    text = soup.select_one("#actions-warning").get_text()
    assert text.startswith("2 actions left. Only Buy Now finishes the task")
    assert soup.select_one("#actions-warning a") is None  # buying still fits: no restart link
    page, soup = post(client, page, action="click[features]")  # 1 left, on a tab: too late to buy
    warning = soup.select_one("#actions-warning")
    assert warning.get_text().startswith("Only 1 action left: too few to buy")
    assert warning.select_one("a#restart")["href"] == "/?goal=0"  # the way on: this goal again


def test_focus_stays_on_the_control_just_used() -> None:
    client = create_app(ServerConfig(catalog="mini", split="test")).test_client()

    def focused(soup: BeautifulSoup) -> str:
        [element] = soup.select("[autofocus]")
        return element.get("value") or element.get("id")

    page, soup = post(client, "/?goal=0", search_query="shoes")
    first = soup.select("button.product-card")[0]["value"]
    assert focused(soup) == first  # after a search: the first result
    page, soup = post(client, page, action="click[next >]")
    assert soup.select_one("#pager-top button[value='click[next >]']") is not None
    assert focused(soup) == "click[next >]"  # paging on
    page, soup = post(client, page, action="click[< prev]")
    assert focused(soup) == "click[next >]"  # page 1 has no < Prev: the way back to page 2
    page, soup = post(client, page, action=first)
    options = [b["value"] for b in soup.select("button.option")]
    assert focused(soup) == options[0]  # a product just opened: its first option
    page, soup = post(client, page, action=options[-1])
    assert focused(soup) == options[-1]  # an option just chosen keeps the focus
    page, soup = post(client, page, action="click[features]")
    assert focused(soup) == "click[< prev]"
    page, soup = post(client, page, action="click[< prev]")
    assert focused(soup) == "click[features]"  # back from a tab: the tab
    page, soup = post(client, page, action="click[< prev]")
    assert focused(soup) == first  # back from the product: the product


def test_done_page_rows_explain_each_check() -> None:
    catalog = load_catalog("mini")
    env = WebShopEnv(split="test")
    env.reset(options={"goal_index": 0})
    goal = env.goal  # leggings: forest green, xx-large; three attributes
    assert goal is not None
    product = catalog[goal.asin]
    chosen = {"color": "black", "size": "xx-large"}
    breakdown = original_reward(product, goal, env.prices[goal.asin], chosen).as_dict()
    rows, formula = purchase_outcome(goal, product, env.prices[goal.asin], chosen, breakdown)
    by_check = {}
    for row in rows:
        by_check.setdefault(row.check, []).append(row)
    [kind] = by_check["Product type"]
    assert "category" in kind.asked_note and "written from" in kind.asked_note
    colour, size = by_check["Option"]
    assert (colour.asked, colour.bought, colour.matched) == ("forest green", "color: black", "no")
    assert (size.asked, size.bought, size.matched) == ("xx-large", "size: xx-large", "yes")
    for row in by_check["Attribute"]:  # each says where it was looked for
        assert row.bought.startswith(("in the product's", "not found")), row
        if row.bought == "in the product's attribute list":
            assert "does not show" in row.bought_note
    assert sum(r.matched == "yes" for r in rows[1:]) == breakdown["num_attr_matches"] + breakdown[
        "num_option_matches"
    ] + bool(breakdown["r_price"])
    assert formula.endswith(f"= {breakdown['total']:.2f}")


def test_attributes_only_in_the_hidden_list_say_so() -> None:
    product = dataclasses.replace(
        load_catalog("mini").products[0],
        title="Plain shoe",
        bullet_points=("comfortable",),
        description="a shoe",
        attributes=("Slip Resistant", "comfortable"),
    )
    goal = dataclasses.replace(
        WebShopEnv(split="test").goal_at(0),
        attributes=("slip resistant", "comfortable", "waterproof"),
        goal_options=(),
    )
    breakdown = {"r_type": 1.0, "total": 0.5}
    rows, _ = purchase_outcome(goal, product, 10.0, {}, breakdown)
    hidden, visible, missing = rows[1:4]
    assert (hidden.bought, hidden.matched) == ("in the product's attribute list", "yes")
    assert "does not show" in hidden.bought_note
    assert (visible.bought, visible.matched, visible.bought_note) == ("in the product's features", "yes", "")
    assert (missing.bought, missing.matched) == (
        "not found",
        "no",
    ) and "attribute list" in missing.bought_note


@pytest.mark.parametrize(
    ("score", "band"),
    [(1.0, "full"), (0.999, "partial"), (0.5, "partial"), (0.49, "low"), (1 / 3, "low"), (0.0, "low")],
)
def test_the_score_is_coloured_by_its_value(score: float, band: str) -> None:
    assert score_band(score)[0] == band and score_band(score)[1]


def test_done_page_offers_the_same_goal_again(client) -> None:
    page, soup = post(client, "/?goal=5", search_query="shoes")
    page, soup = post(client, page, action=soup.select_one("button.product-card")["value"])
    page, soup = post(client, page, action="click[buy now]")
    assert soup.select_one("a#same-goal")["href"] == "/?goal=5"
    assert soup.select_one(".goal-recap q").get_text() == WebShopEnv(split="test").goal_at(5).instruction_text
    assert soup.select_one("#reward")["class"][0] in {"score-full", "score-partial", "score-low"}


def test_crowd_mode_has_no_split_jargon() -> None:
    research = create_app(ServerConfig(catalog="mini")).test_client().get("/?goal=3").get_data(as_text=True)
    assert "Goal 3 of 100 (test split)" in research
    crowd = create_app(ServerConfig(catalog="mini", audience="crowd")).test_client()
    text = BeautifulSoup(crowd.get("/?goal=3").get_data(as_text=True), "html.parser").select_one(".site-bar")
    assert "split" not in text.get_text() and "Goal 3" not in text.get_text()
    assert "Shopping task" in text.get_text()
    with pytest.raises(ValueError, match="audience="):
        ServerConfig(audience="students")
