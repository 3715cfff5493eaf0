"""`ServerConfig`: what one web-shop server serves and the limits it keeps."""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webshop_gym.envs import GOAL_SOURCES, REWARD_VARIANTS, SPLITS, WebShopEnv
from webshop_gym.web.sessions import INSTANCE_PATTERN

__all__ = ["AUDIENCES", "LOOPBACK_HOSTS", "PRODUCT_IMAGES", "ServerConfig", "is_loopback"]

# Names under which a server on a loopback address is reached (Host header, port aside).
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1", "[::1]")
PRODUCT_IMAGES = ("generated", "catalog")
AUDIENCES = ("research", "crowd")  # ServerConfig.audience


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address to listen on) only takes connections from this machine."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class ServerConfig:
    """Settings of one server process.

    Attributes:
        catalog: The catalogue every env of this server uses (``"mini"``, ``"1k"``,
            ``"full"`` or a folder); loaded once and shared.
        search_engine: The search engine every env uses (default: `WebShopEnv`'s).
        goals: Goal source of the shop's visitors (``"human"`` or ``"synthetic"``).
        split: The split visitors' goals come from; ``?goal=i`` picks goal i of it.
        show_attributes: Whether item pages have the Attributes tab (visitors).
        max_steps: Actions per visitor episode. People browse longer than the 15 steps
            agents get; the log records the limit so replay uses the same.
        reward: Reward variant of visitor episodes.
        log_dir: Where visitors' trajectories go (one JSON-lines file per session);
            ``None`` records nothing.
        log_api: Also record episodes of API envs.
        max_sessions: Live visitor sessions (and, separately, API envs) at most; when
            full, never-used API envs and then sessions idle longer than
            ``idle_timeout`` make room, else 503 (with ``Retry-After``). A visitor's
            session starts at their first action: opening pages costs nothing.
        max_sessions_per_client: Live visitor sessions per client address at most (a
            client at the limit gives up its least recently used one); None: no limit
            (behind a reverse proxy every visitor has the proxy's address).
        max_envs_per_client: Live API envs per client address at most; a client at its
            limit gives up its oldest never-used env, else gets 429 until it closes one (or
            one expires). None: half of ``max_sessions`` (at least 2, at most 100), so that
            no client holds every env of a server.
        idle_timeout: Seconds after which an untouched session may be dropped.
        max_request_bytes: Larger request bodies get 413.
        instance: A name (1-16 letters or digits) that starts every session id of this
            process (``<instance>.<token>``), for routing by id when several processes
            serve one address; ``None``: plain ids.
        allowed_hosts: Host names requests may be addressed to (the ``Host`` header;
            ``".example.org"`` also allows its subdomains); others get 400. ``("*",)``
            allows any. The default allows the loopback names only.
        product_images: ``"generated"``: a picture drawn by the shop for each product
            (works offline); ``"catalog"``: the catalogue's image addresses, as the
            original showed them.
        audience: Who the pages are for: ``"research"`` shows which goal of which split
            a page is ("Goal 3 of 100 (test split)"); ``"crowd"`` (crowd workers) shows
            no goal numbers or split names.
        costly_actions_per_minute: How often one client (address) may do what costs the
            server more than a page: start a visitor session, or act on a page that is
            not its session's newest (Back, a second tab), which restores the env there
            and records a branch. A burst of this many, then this many a minute; more get
            429 with ``Retry-After``. None: no limit (behind a reverse proxy every visitor
            has the proxy's address).
        max_pages_per_visit: Pages one visitor session may make (every action makes one,
            and acting on earlier pages makes new ones too); then the visitor is asked to
            start a new session. Bounds a session's memory.
    """

    catalog: str = "mini"
    search_engine: str = inspect.signature(WebShopEnv).parameters["search_engine"].default
    goals: str = "human"
    split: str = "test"
    show_attributes: bool = False
    max_steps: int = 100
    reward: str = "original"
    log_dir: Path | None = None
    log_api: bool = False
    max_sessions: int = 10_000
    max_sessions_per_client: int | None = 100
    max_envs_per_client: int | None = None
    idle_timeout: float = 3600.0
    max_request_bytes: int = 64 * 1024
    instance: str | None = None
    allowed_hosts: tuple[str, ...] = LOOPBACK_HOSTS
    product_images: str = "generated"
    audience: str = "research"
    costly_actions_per_minute: int | None = 120
    max_pages_per_visit: int = 300

    def __post_init__(self) -> None:
        for name, value, choices in (
            ("goals", self.goals, GOAL_SOURCES),
            ("split", self.split, SPLITS),
            ("reward", self.reward, REWARD_VARIANTS),
        ):
            if value not in choices:
                raise ValueError(f"{name}={value!r} is not one of {', '.join(map(repr, choices))}")
        if self.max_sessions < 1 or self.idle_timeout <= 0 or self.max_request_bytes < 1024:
            raise ValueError("max_sessions >= 1, idle_timeout > 0 and max_request_bytes >= 1024 are needed")
        if self.max_sessions_per_client is not None and self.max_sessions_per_client < 1:
            raise ValueError("max_sessions_per_client must be None or at least 1")
        if self.max_envs_per_client is not None and self.max_envs_per_client < 1:
            raise ValueError("max_envs_per_client must be None or at least 1")
        if self.costly_actions_per_minute is not None and self.costly_actions_per_minute < 1:
            raise ValueError("costly_actions_per_minute must be None or at least 1")
        if self.max_pages_per_visit < 2:
            raise ValueError("max_pages_per_visit must be at least 2 (the search page and one more)")
        if self.product_images not in PRODUCT_IMAGES:
            raise ValueError(
                f"product_images={self.product_images!r} is not one of {', '.join(map(repr, PRODUCT_IMAGES))}"
            )
        if self.audience not in AUDIENCES:
            raise ValueError(f"audience={self.audience!r} is not one of {', '.join(map(repr, AUDIENCES))}")
        if isinstance(self.allowed_hosts, str) or not all(
            isinstance(h, str) and h for h in self.allowed_hosts
        ):
            raise ValueError(f"allowed_hosts must be a tuple of host names, got {self.allowed_hosts!r}")
        object.__setattr__(self, "allowed_hosts", tuple(self.allowed_hosts))
        if self.instance is not None and not INSTANCE_PATTERN.fullmatch(self.instance):
            raise ValueError(f"instance must be 1-16 letters or digits, got {self.instance!r}")
        if isinstance(self.catalog, os.PathLike):
            object.__setattr__(self, "catalog", os.fspath(self.catalog))

    @property
    def envs_per_client(self) -> int:
        """`max_envs_per_client`, with None's default worked out."""
        if self.max_envs_per_client is not None:
            return self.max_envs_per_client
        return max(2, min(100, self.max_sessions // 2))

    def make_env(self, **arguments: Any) -> WebShopEnv:
        """An env over this server's catalogue and engine; ``arguments`` set the rest."""
        return WebShopEnv(catalog=self.catalog, search_engine=self.search_engine, **arguments)

    def make_visitor_env(self) -> WebShopEnv:
        """The env of one visitor of the shop: HTML pages, the configured goals and limits."""
        return self.make_env(
            observation_mode="html",
            goals=self.goals,
            split=self.split,
            reward=self.reward,
            max_steps=self.max_steps,
            show_attributes=self.show_attributes,
        )
