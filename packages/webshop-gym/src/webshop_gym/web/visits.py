"""A visitor's session in the web shop: the pages they were shown, one address each.

A visit starts with the visitor's first action (until then the shop shows the goal's
search page from no state at all, so opening the site costs nothing). Every action makes
a new page with its own address, ``/s/<session id>/<n>/`` (page n after n actions), and
the visit keeps each page's state, so the browser's Back button shows the page before,
and acting on an earlier page goes on from *that* page: the visit plays the episode again
up to that page (a new episode in the trajectory file, with the same seed, goal and
actions, so every recorded episode replays) and takes the new action there. Once the
visitor has bought something or used every action, the visit is over and stays so.

Everything here runs with the session's lock held.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from webshop_gym.envs import WebShopEnv
from webshop_gym.shop import PageState
from webshop_gym.web.sessions import Session

__all__ = ["PageRecord", "Visit"]


@dataclass(frozen=True)
class PageRecord:
    """One page of a visit: what it showed and how the action that led to it went."""

    state: PageState
    action_error: str
    steps_left: int
    terminated: bool
    truncated: bool
    purchase: dict[str, Any] | None  # reward_breakdown, score, purchased_asin, purchased_options

    @classmethod
    def of(cls, env: WebShopEnv, info: dict[str, Any], terminated: bool, truncated: bool) -> PageRecord:
        """The page ``env`` is on after a step (or reset) that returned these."""
        state = env.state
        assert state is not None
        purchase = None
        if "purchased_asin" in info:
            purchase = {
                key: info[key] for key in ("reward_breakdown", "score", "purchased_asin", "purchased_options")
            }
        return cls(state, info["action_error"], info["steps_left"], terminated, truncated, purchase)

    @property
    def ended(self) -> bool:
        return self.terminated or self.truncated


@dataclass
class Visit:
    """The pages of one visitor's session and the actions between them.

    ``pages[n]`` is the page after ``actions[:n]``; the last page is the current one.
    """

    goal_index: int
    seed: int
    pages: list[PageRecord] = field(default_factory=list)
    actions: list[Any] = field(default_factory=list)

    @property
    def current(self) -> int:
        """The number of the current page."""
        return len(self.pages) - 1

    @property
    def ended(self) -> bool:
        return bool(self.pages) and self.pages[-1].ended

    def start(self, session: Session) -> None:
        """Starts (or starts again) the episode: the goal's search page."""
        _, info = session.reset(self.seed, {"goal_index": self.goal_index})
        self.pages = [PageRecord.of(session.env, info, False, False)]
        self.actions = []

    def act(self, session: Session, page: int, action: Any) -> int:
        """Takes ``action`` on page ``page`` (an earlier one: the episode goes back to it first).

        Returns:
            The number of the page the action led to (the current one if the visit is over).
        """
        if self.ended:
            return self.current
        if not 0 <= page <= self.current:
            raise ValueError(f"page {page} of a visit with {self.current + 1} pages")
        if page < self.current:
            earlier = self.actions[:page]
            self.start(session)
            for replayed in earlier:
                self._step(session, replayed)
        self._step(session, action)
        return self.current

    def _step(self, session: Session, action: Any) -> None:
        _, _, terminated, truncated, info = session.step(action)
        self.actions.append(action)
        self.pages.append(PageRecord.of(session.env, info, terminated, truncated))
