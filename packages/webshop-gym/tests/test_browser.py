"""The web shop in a real browser: headless Chromium (Debian's) driven by Playwright.

A whole episode by clicking, as a person shops: type the query and press Search, open
the product, pick each option, press Buy Now; the done page must show the reward the env
gives for the same actions, the session's recorded trajectory must replay to it, and
product text with markup must stay text. Screenshots of every page go to
``artifacts/browser/`` at the repository root (git-ignored). ``nox -s tests_browser`` installs
Chromium (``apt-get install chromium``) and Playwright when they are missing.
"""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright

from webshop_gym.envs import WebShopEnv
from webshop_gym.scripted import ExpertPolicy
from webshop_gym.trajectories import read_trajectories, replay
from webshop_gym.web import ServerConfig, create_app
from webshop_gym.web.server import ServerThread

from .test_web import HOSTILE_NAME, write_hostile_catalogue

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[3] / "artifacts" / "browser"


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: run `nox -s tests_browser` (installs it) or apt-get install chromium"
        )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    config = ServerConfig(catalog="mini", split="test", log_dir=tmp_path_factory.mktemp("browser-logs"))
    with ServerThread(create_app(config)) as running:
        yield running


class Tab:
    """A browser page that only reaches the server and remembers what went wrong."""

    def __init__(self, browser, base_url: str) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        # The catalogue's image hosts are not reachable from tests: answer them at once.
        self.context.route(
            "**/*",
            lambda route: route.continue_() if route.request.url.startswith(base_url) else route.abort(),
        )
        self.page: Page = self.context.new_page()
        self.dialogs: list[str] = []
        self.script_errors: list[str] = []
        self.policy_violations: list[str] = []
        self.page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        self.page.on("pageerror", lambda error: self.script_errors.append(str(error)))
        self.page.on(
            "console",
            lambda message: (
                "Content Security Policy" in message.text and self.policy_violations.append(message.text)
            ),
        )
        self.shots = 0

    def screenshot(self, detail: str = "", prefix: str = "") -> Path:
        """Saves the page as ``NN-<prefix><page kind>[-detail].png`` (kind: search-page, item-page, ...)."""
        self.shots += 1
        kind = next(
            c
            for c in self.page.locator("body > .container").get_attribute("class").split()
            if c != "container"
        )
        slug = re.sub(r"[^a-z0-9]+", "-", detail.lower()).strip("-")
        path = ARTIFACTS / f"{self.shots:02d}-{prefix}{kind}{'-' + slug if slug else ''}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def click_and_wait(self, locator) -> None:
        with self.page.expect_navigation():
            locator.click()

    def close(self) -> None:
        self.context.close()


def expert_plan(max_goals: int = 100) -> tuple[int, list[str], float]:
    """A test goal the expert solves with options chosen: its actions and reward."""
    env = WebShopEnv(observation_mode="html", split="test", max_steps=100)
    for goal in range(max_goals):
        observation, info = env.reset(seed=0, options={"goal_index": goal})
        expert, actions = ExpertPolicy(env), []
        while info["page"] != "done" and len(actions) < 20:
            actions.append(expert.act(observation, info))
            observation, reward, _, _, info = env.step(actions[-1])
        option_clicks = [
            a
            for a in actions
            if info.get("purchased_options") and a[6:-1] in info["purchased_options"].values()
        ]
        if info.get("success") and option_clicks and "click[next >]" not in actions:
            return goal, actions, reward
    raise AssertionError("no test goal with options that the expert solves on the first results page")


def exactly(text: str) -> re.Pattern[str]:
    return re.compile(f"^{re.escape(text)}$", re.IGNORECASE)


def test_a_whole_episode_by_clicking(browser, server) -> None:
    goal, actions, expected_reward = expert_plan()
    tab = Tab(browser, server.url)
    page = tab.page
    page.goto(f"{server.url}/?goal={goal}")
    assert re.fullmatch(rf"{re.escape(server.url)}/s/[A-Za-z0-9_-]{{43}}/", page.url)
    session_url = page.url
    for action in actions:
        kind, argument = action[: action.index("[")], action[action.index("[") + 1 : -1]
        if kind == "search":
            page.fill("#search_input", argument)
            tab.screenshot("query typed")
            tab.click_and_wait(page.get_by_role("button", name="Search"))
            tab.screenshot()
        elif page.locator("a.product-link").filter(has_text=exactly(argument)).count():
            tab.click_and_wait(page.get_by_role("link", name=exactly(argument)))
            tab.screenshot()
        elif page.locator(".radio-toolbar label").filter(has_text=exactly(argument)).count():
            tab.click_and_wait(page.locator(".radio-toolbar label").filter(has_text=exactly(argument)))
            assert (
                page.locator("input[type=radio]:checked + label").filter(has_text=exactly(argument)).count()
                == 1
            )
            tab.screenshot(f"chose {argument}")
        else:
            tab.click_and_wait(page.get_by_role("button", name=exactly(argument)))
            last = tab.screenshot()
    assert last.name.endswith("-done-page.png")
    print(f"browser screenshots: {ARTIFACTS} (the done page: {last.name})")

    assert page.url == session_url
    assert page.locator("#thankyou h1").inner_text() == "Thank you for shopping with us!"
    assert page.locator("#reward pre.score").inner_text() == str(float(expected_reward))
    rows = dict(
        zip(
            page.locator("#reward-breakdown th").all_inner_texts(),
            page.locator("#reward-breakdown td").all_inner_texts(),
            strict=True,
        )
    )
    assert rows["Reward R"] == f"{expected_reward:.3f}" and rows["Attributes matched (r_att)"] == "1.000"
    assert page.locator("#shop-again").is_visible()
    assert tab.dialogs == [] and tab.script_errors == [] and tab.policy_violations == []

    # What the browser was served is the env's HTML for the same actions.
    local = WebShopEnv(observation_mode="html", split="test", max_steps=100)
    local.reset(options={"goal_index": goal})
    for action in actions:
        final_html, *_ = local.step(action)
    with urllib.request.urlopen(session_url) as response:
        assert response.read().decode() == final_html

    # The session was recorded action by action and replays to the same reward.
    session = server.app.extensions["webshop_gym"].visitors.get(session_url.rstrip("/").rsplit("/", 1)[1])
    [episode] = read_trajectories(session.recorder.path).episodes
    assert episode.actions == actions
    result = replay(episode)
    assert result.matches and result.replayed_return == expected_reward
    tab.close()


def test_markup_in_product_text_stays_text_in_the_browser(browser, tmp_path: Path) -> None:
    catalogue = write_hostile_catalogue(tmp_path / "hostile")
    with ServerThread(create_app(ServerConfig(catalog=str(catalogue), split="all"))) as hostile:
        tab = Tab(browser, hostile.url)
        page = tab.page
        page.goto(f"{hostile.url}/?goal=0")
        page.fill("#search_input", "zyzzyva <script>alert('query')</script>")
        tab.click_and_wait(page.get_by_role("button", name="Search"))
        tab.click_and_wait(page.locator("a.product-link").first)
        tab.shots = 90
        tab.screenshot(prefix="hostile-")
        assert page.locator("h2").inner_text() == HOSTILE_NAME.replace("  ", " ")
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert tab.dialogs == [] and tab.script_errors == []
        tab.close()
