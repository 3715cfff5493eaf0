"""A visitor's session in the web shop: the pages they were shown, one fixed address each.

A visit starts with the visitor's first action (until then the shop shows the goal's
search page from no state at all, so opening the site costs nothing). Every action makes
a new page with its own address, ``/s/<session id>/<n>/``: page n is the n-th page the
visit made (page 0 is the goal's search page), and what it shows never changes. The
visit keeps each page's state and where it came from, so the browser's Back button shows
the page before, a reload shows the same page, and acting on an earlier page (Back, or a
second tab) goes on from *that* page: the env is put back to it (`webshop_gym.web.snapshots.restore_episode`)
and takes the action there, making a new page; the pages after it stay as they were, so a
form in another tab still acts on what that tab shows. Nothing is played again.

The trajectory file records what the visitor did as they did it: acting on the newest
page of the record goes on with its episode; acting on any other page starts a *branch*,
an episode that goes on from that page's step of an earlier one without writing the
shared start again (`webshop_gym.trajectories`), so each request writes one step.

Once the visitor has bought something or used every action, the visit is over and stays
so: acting on any of its pages raises `VisitOver`. A visit makes at most ``max_pages``
pages (`VisitFull` after that), so memory per session stays bounded.

Everything here runs with the session's lock held.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from webshop_gym.envs import WebShopEnv
from webshop_gym.shop import PageState
from webshop_gym.web.codec import state_to_json
from webshop_gym.web.sessions import Session
from webshop_gym.web.snapshots import episode_snapshot, restore_episode

__all__ = ["PageRecord", "Visit", "VisitFull", "VisitOver"]


class VisitOver(Exception):
    """The visit ended (a purchase, or every action used) on page ``page``; nothing more can be done."""

    def __init__(self, page: int, record: PageRecord) -> None:
        super().__init__(f"the visit ended on page {page}")
        self.page = page
        self.record = record


class VisitFull(Exception):
    """The visit made its ``max_pages`` pages; the visitor starts a new session to go on."""

    def __init__(self, max_pages: int) -> None:
        super().__init__(f"the visit made its limit of {max_pages} pages")
        self.max_pages = max_pages


@dataclass(frozen=True)
class PageRecord:
    """One page of a visit: what it showed, how the action that led to it went, where it came from.

    ``episode`` and ``t`` say where the step that made the page is recorded (episode
    ``episode`` of the trajectory file, step ``t``; page 0: episode 0, t 0). ``resume``
    holds what `webshop_gym.web.snapshots.restore_episode` needs besides the page's state.
    """

    state: PageState
    action_error: str
    steps_left: int
    terminated: bool
    truncated: bool
    purchase: dict[str, Any] | None  # reward_breakdown, score, purchased_asin, purchased_options
    parent: int | None = None
    action: Any = None
    episode: int = 0
    t: int = 0
    resume: dict[str, Any] | None = None

    @classmethod
    def of(
        cls, env: WebShopEnv, info: dict[str, Any], terminated: bool, truncated: bool, **where: Any
    ) -> PageRecord:
        """The page ``env`` is on after a step (or reset) that returned these.

        ``where`` sets ``parent``, ``action``, ``episode``, ``t`` and ``resume``.
        """
        state = env.state
        assert state is not None
        purchase = None
        if "purchased_asin" in info:
            purchase = {
                key: info[key] for key in ("reward_breakdown", "score", "purchased_asin", "purchased_options")
            }
        return cls(state, info["action_error"], info["steps_left"], terminated, truncated, purchase, **where)

    @property
    def ended(self) -> bool:
        return self.terminated or self.truncated


@dataclass
class Visit:
    """The pages of one visitor's session: a tree, each page made by an action on its parent.

    ``pages[n]`` is page n; pages are only ever added. ``tip`` is the page whose step ends
    the trajectory file's last episode; ``on_page`` the page the env is on (None: unknown).
    """

    goal_index: int
    seed: int
    max_pages: int = 300
    pages: list[PageRecord] = field(default_factory=list)
    tip: int = 0
    on_page: int | None = None
    episodes: int = 0
    ended_on: int | None = None

    @property
    def current(self) -> int:
        """The number of the newest page (where ``/s/<id>/`` leads)."""
        return len(self.pages) - 1

    @property
    def ended(self) -> bool:
        return self.ended_on is not None

    def start(self, session: Session) -> None:
        """Starts the episode: the goal's search page, page 0."""
        _, info = session.reset(self.seed, {"goal_index": self.goal_index})
        self.pages = [PageRecord.of(session.env, info, False, False, resume=_resume(session.env, None))]
        self.tip, self.on_page, self.episodes, self.ended_on = 0, 0, 1, None

    def branches_at(self, page: int) -> bool:
        """Whether acting on ``page`` starts a branch (it is not the newest page of the record)."""
        return page != self.tip

    def act(self, session: Session, page: int, action: Any) -> int:
        """Takes ``action`` on page ``page`` (any page of the visit) and makes a new page.

        Returns:
            The number of the new page.

        Raises:
            VisitOver: The visit has ended; nothing was taken.
            VisitFull: The visit has made ``max_pages`` pages; nothing was taken.
            RecordingError: The step could not be recorded; nothing was taken (the env
                stays on ``page``).
        """
        if self.ended_on is not None:
            raise VisitOver(self.ended_on, self.pages[self.ended_on])
        if not 0 <= page < len(self.pages):
            raise ValueError(f"page {page} of a visit with {len(self.pages)} pages")
        if len(self.pages) >= self.max_pages:
            raise VisitFull(self.max_pages)
        source = self.pages[page]
        if self.on_page != page:
            self.on_page = None  # until the restore is through
            restore_episode(session.env, self._snapshot(source))
            self.on_page = page
        branch = self.branches_at(page)
        _, _, terminated, truncated, info = session.step(
            action, branch_of=(source.episode, source.t) if branch else None
        )
        episode = self.episodes if branch else source.episode
        record = PageRecord.of(
            session.env,
            info,
            terminated,
            truncated,
            parent=page,
            action=action,
            episode=episode,
            t=source.t + 1,
            resume=_resume(session.env, source.resume),
        )
        self.pages.append(record)
        self.episodes += branch
        self.tip = self.on_page = self.current
        if record.ended:
            self.ended_on = self.current
        return self.current

    def _snapshot(self, record: PageRecord) -> dict[str, Any]:
        assert record.resume is not None
        return {"goal_index": self.goal_index, "state": state_to_json(record.state), **record.resume}


def _resume(env: WebShopEnv, parent: dict[str, Any] | None) -> dict[str, Any]:
    """What `restore_episode` needs besides the state; the parent's random state when equal (shared)."""
    snapshot = episode_snapshot(env)
    resume = {key: snapshot[key] for key in ("steps", "last_potential", "np_random", "np_random_seed")}
    if parent is not None and parent["np_random"] == resume["np_random"]:
        resume["np_random"] = parent["np_random"]  # one copy for the pages of a visit
    return resume
