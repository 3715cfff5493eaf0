"""The web shop's Flask app: the pages people shop in, plus the JSON API (`webshop_gym.web.api`).

A visitor opening ``/`` is sent to ``/?goal=<i>``, a random goal of the configured split,
whose search page is drawn from no state at all: opening (or crawling, or flooding) the
site costs no session, env or file. The visitor's first action (the search form posts back
to the same address) starts a session with its own `WebShopEnv` and goes to
``/s/<session id>/1/``. Each later action posts from page n to ``/s/<id>/<n>/`` and goes
(303) to a new page m, the next number the session has not used: every page has its own
address, and what an address shows never changes (`webshop_gym.web.visits`). Reloading
never repeats an action, the browser's Back button shows the page before, and acting on an
earlier page (Back, or a second tab) goes on from *that* page: the env is restored there,
the pages after it stay, so a Buy Now always buys the product its own page shows, and the
recorded demonstration is what the person saw. Once a visit is over (bought, or out of
actions), acting on any of its pages answers 409 with a page that says so and links to its
last page. Pages are the env's HTML pages with what a person needs on top
(`webshop_gym.web.pages`): why an action did nothing, actions left, a done page that shows
asked against bought, an out-of-actions page, and pictures drawn per product. Every episode
goes to the session's trajectory file when a log folder is set; a step that cannot be
recorded (a full disk) is not taken: the visitor gets 503 with the reason, the session
stays on its page, and ``/healthz`` answers 503 with the reason until the folder takes
writes again.

Security: pages only ever hold product text and queries as escaped template data; the
session id in the address is a 256-bit secret; requests must name an allowed host
(`ServerConfig.allowed_hosts`); responses forbid framing, sniffing, referrers and any
script or style from other origins (Content-Security-Policy). One client holds at most
``max_sessions_per_client`` visitor sessions, starts sessions or acts on earlier pages (each
costs more than a page) at most ``costly_actions_per_minute`` times a minute (429 with
``Retry-After`` after that), and a session makes at most ``max_pages_per_visit`` pages.
Requests are logged, with session ids cut short, to the ``webshop_gym.web.access`` logger.

Example:
    >>> app = create_app(ServerConfig(catalog="mini"))
    >>> client = app.test_client()
    >>> client.get("/").headers["Location"].startswith("/?goal=")
    True
    >>> b"<h2>WebShop</h2>" in client.get("/?goal=0").data
    True
    >>> first = client.post("/?goal=0", data={"search_query": "red shoes"})
    >>> first.status_code, first.headers["Location"].startswith("/s/"), first.headers["Location"][-3:]
    (303, True, '/1/')
"""

from __future__ import annotations

import logging
import math
import os
import re
import secrets
import shutil
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from flask import Blueprint, Flask, Response, jsonify, redirect, request
from werkzeug.exceptions import HTTPException

from webshop_gym.actions import search_action
from webshop_gym.render.html import STATIC_DIR, template_environment
from webshop_gym.trajectories import append_whole_lines
from webshop_gym.web.api import api
from webshop_gym.web.config import ServerConfig
from webshop_gym.web.context import WebShopServer, error_response, server_of
from webshop_gym.web.pages import landing_page, product_svg, trail_to, visit_page
from webshop_gym.web.sessions import RateLimiter, RecordingError, Session, SessionLimitError, SessionStore
from webshop_gym.web.visits import Visit, VisitFull, VisitOver

__all__ = ["ACCESS_LOGGER", "WebShopServer", "create_app", "server_of"]

# Fixed headers of every response. Pages load only this site's script, style sheet,
# pictures and forms; with product_images="catalog" images may come from product image
# hosts (https), as in the original.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; "
        "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
}
MAX_FORM_FIELD_CHARS = 4096
IMAGE_MAX_AGE = 86_400  # pictures depend on the product only
ACCESS_LOGGER = "webshop_gym.web.access"
RECORDING_RETRY_AFTER = 60  # seconds a visitor is asked to wait when records cannot be written
MIN_FREE_LOG_BYTES = 16 * 1024 * 1024  # /healthz fails below this much free space for the log
_log = logging.getLogger("webshop_gym.web")
_SESSION_IN_PATH = re.compile(r"(/(?:s|api/v1/envs)/(?:[A-Za-z0-9]{1,16}\.)?[A-Za-z0-9_-]{6})[A-Za-z0-9_-]+")

site = Blueprint("site", __name__)


@dataclass
class SiteState:
    """What the shop's pages keep besides sessions: the per-client limit on costly actions
    and the last record that failed (for ``/healthz``)."""

    costly: RateLimiter | None
    record_failure: tuple[float, str] | None = None  # (time.monotonic(), reason)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def recording_failed(self, reason: str) -> None:
        with self.lock:
            self.record_failure = (time.monotonic(), reason)


def site_state(app: Flask | None = None) -> SiteState:
    """The `SiteState` of ``app`` (default: the app of the current request)."""
    from flask import current_app

    return (app or current_app).extensions["webshop_gym.site"]  # type: ignore[no-any-return]


def create_app(config: ServerConfig | None = None) -> Flask:
    """Builds the app; loads the catalogue, goals and search index once, before serving.

    Args:
        config: What to serve and the limits to keep (default: the bundled catalogue).

    Returns:
        The Flask app (a WSGI callable; `webshop_gym.web.server.serve` runs it).
    """
    config = config or ServerConfig()
    # Fails here, at start-up, when the data is missing, and warms every shared cache.
    prototype = config.make_visitor_env()
    if config.log_dir is not None:  # fails at start-up when it cannot be made
        config.log_dir.mkdir(parents=True, exist_ok=True)
    app = Flask(__name__, static_folder=str(STATIC_DIR), static_url_path="/static")
    app.config["MAX_CONTENT_LENGTH"] = config.max_request_bytes
    app.config["MAX_FORM_MEMORY_SIZE"] = config.max_request_bytes
    app.config["SEND_FILE_MAX_AGE_DEFAULT"] = 3600
    app.extensions["webshop_gym"] = WebShopServer(
        config=config,
        visitors=SessionStore(
            config.max_sessions,
            config.idle_timeout,
            instance=config.instance,
            max_per_owner=config.max_sessions_per_client,
        ),
        api_envs=SessionStore(config.max_sessions, config.idle_timeout, instance=config.instance),
        goal_count=len(prototype.goal_indices),
        prototype=prototype,
    )
    per_minute = config.costly_actions_per_minute
    app.extensions["webshop_gym.site"] = SiteState(RateLimiter(per_minute) if per_minute else None)
    app.register_blueprint(site)
    app.register_blueprint(api)
    app.logger.addFilter(_CutSessionIds())
    app.before_request(_check_host)
    app.after_request(_add_security_headers)
    app.register_error_handler(HTTPException, _http_error)
    app.register_error_handler(SessionLimitError, _session_limit)
    app.register_error_handler(RecordingError, _recording_failed)
    app.wsgi_app = AccessLog(app.wsgi_app)  # type: ignore[method-assign]
    return app


# -- every request -------------------------------------------------------------------------


def host_name(host_header: str) -> str:
    """The host name of a ``Host`` header, lower-cased, without port or IPv6 brackets."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def host_allowed(host_header: str, allowed: Iterable[str]) -> bool:
    """Whether a request's ``Host`` names an allowed host (``"*"``: any; ``".x.org"``: x.org and below)."""
    name = host_name(host_header)
    for entry in allowed:
        entry = entry.lower()
        if entry == "*" or name == host_name(entry):
            return True
        if entry.startswith(".") and (name == entry[1:] or name.endswith(entry)):
            return True
    return False


def _check_host() -> Response | None:
    # Before routing answers anything (a redirect would put the Host header in Location).
    allowed = server_of().config.allowed_hosts
    if host_allowed(request.host, allowed):
        return None
    return error_response(
        400,
        "Bad Request",
        f"This server does not answer to the host name {host_name(request.host)[:80]!r}. Its "
        "operator can allow it with `webshop-gym serve --allowed-host NAME`.",
    )


def _add_security_headers(response: Response) -> Response:
    response.headers.update(SECURITY_HEADERS)
    if request.path.startswith("/s/") or request.path.startswith("/api/"):
        response.headers["Cache-Control"] = "no-store"
    return response


_CLEAR_MESSAGES = {
    404: "There is nothing at this address.",
    405: "This address does not take that method.",
    413: "The request is too large.",
}


def _http_error(error: HTTPException) -> Response:
    status = error.code or 500
    message = _CLEAR_MESSAGES.get(status, error.description or error.name)
    if status == 413:
        limit = server_of().config.max_request_bytes
        message = f"The request body is larger than this server allows ({limit} bytes at most)."
    if status == 405:
        message = f"{request.path} does not take {request.method}."
    return error_response(status, error.name, message)


def _session_limit(error: SessionLimitError) -> Response:
    response = error_response(503, "Service Unavailable", str(error))
    response.headers["Retry-After"] = str(error.retry_after)
    return response


def _recording_failed(error: RecordingError) -> Response:
    # The session did not move (Session.reset / step put the env back).
    site_state().recording_failed(error.reason)
    _log.error(
        "a trajectory record in %s could not be written (%s); the action was not taken",
        server_of().config.log_dir,
        error.reason,
    )
    response = error_response(
        503,
        "Service Unavailable",
        f"This server cannot save shopping sessions right now ({error.reason}), so it did not take "
        "your action: the page you were on is as it was. Try again in a minute; if this goes on, "
        "tell the shop's operator.",
    )
    response.headers["Retry-After"] = str(RECORDING_RETRY_AFTER)
    return response


def _too_often(wait: float) -> Response:
    limit = server_of().config.costly_actions_per_minute
    seconds = max(1, math.ceil(wait))
    response = error_response(
        429,
        "Too Many Requests",
        f"Starting sessions and going back to act on earlier pages cost this server more than a page, "
        f"so each visitor may do them {limit} times a minute. Wait {seconds} seconds, then send the "
        "form again (or go on from the newest page of your session, which is not limited).",
    )
    response.headers["Retry-After"] = str(seconds)
    return response


def _costly_allowed() -> Response | None:
    limiter = site_state().costly
    if limiter is None:
        return None
    wait = limiter.take(request.remote_addr or "-")
    return _too_often(wait) if wait > 0 else None


class _CutSessionIds(logging.Filter):
    """Cuts session ids in log messages to their first 6 characters (as the access log does).

    Flask logs an unexpected error as ``Exception on <path> [<method>]``, and a path holds an
    env's (or a visitor's) whole id: anyone who reads the log could act in that session.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cut = _SESSION_IN_PATH.sub(r"\1…", message)
        if cut != message:
            record.msg, record.args = cut, ()
        return True


class AccessLog:
    """WSGI middleware: one Common Log Format line per request to the ``webshop_gym.web.access`` logger.

    Session ids in paths are cut to their first 6 characters (a log reader must not be able
    to act in a session); query strings are left out.
    """

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app
        self.logger = logging.getLogger(ACCESS_LOGGER)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if not self.logger.isEnabledFor(logging.INFO):
            return self.app(environ, start_response)
        started = time.monotonic()
        status: list[str] = ["-"]

        def recording_start_response(code: str, headers: Any, *args: Any) -> Any:
            status[0] = code.split(" ", 1)[0]
            return start_response(code, headers, *args)

        try:
            return self.app(environ, recording_start_response)
        finally:
            path = _SESSION_IN_PATH.sub(r"\1…", environ.get("PATH_INFO", ""))
            self.logger.info(
                '%s - - [%s] "%s %s %s" %s - %.1fms',
                environ.get("REMOTE_ADDR", "-"),
                time.strftime("%d/%b/%Y:%H:%M:%S %z"),
                environ.get("REQUEST_METHOD", "-"),
                path[:300],
                environ.get("SERVER_PROTOCOL", "-"),
                status[0],
                1000 * (time.monotonic() - started),
            )


# -- the pages ---------------------------------------------------------------------------


def _page(html: str, status: int = 200) -> Response:
    return Response(html, status=status, mimetype="text/html")


@site.route("/", methods=["GET", "HEAD"])
def start() -> Any:
    """Goal ``?goal=i``'s search page (no session yet); without a goal, a random one."""
    server = server_of()
    goal_text = request.args.get("goal")
    if goal_text is None:
        return redirect(f"/?goal={secrets.randbelow(server.goal_count)}", code=303)
    goal_index = _goal_index(goal_text, server.goal_count, server.config.split)
    if isinstance(goal_index, Response):
        return goal_index
    return _page(
        landing_page(
            server.prototype,
            goal_index,
            server.config.product_images,
            audience=server.config.audience,
            notice=request.args.get("notice", ""),
        )
    )


@site.post("/")
def first_action() -> Any:
    """The visitor's first action (from a goal's search page) starts their session."""
    server = server_of()
    goal_text = request.args.get("goal")
    if goal_text is None:
        return error_response(400, "Bad Request", "Start from a goal's page: open / and search there.")
    goal_index = _goal_index(goal_text, server.goal_count, server.config.split)
    if isinstance(goal_index, Response):
        return goal_index
    action = _form_action()
    if isinstance(action, Response):
        return action
    refused = _costly_allowed()
    if refused is not None:
        return refused
    session = server.visitors.add(server.config.make_visitor_env(), owner=request.remote_addr, used=True)
    try:
        with session.lock:
            session.make_recorder = lambda: server.recorder("web")
            visit = Visit(goal_index, secrets.randbelow(2**31), server.config.max_pages_per_visit)
            session.visit = visit
            visit.start(session)
            page = visit.act(session, 0, action)
    except RecordingError:
        server.visitors.remove(session.id)  # nothing was taken: no session, no file
        raise
    return redirect(_page_url(session.id, page), code=303)


def _page_url(session_id: str, page: int) -> str:
    return f"/s/{session_id}/{page}/"


def _goal_index(text: str, count: int, split: str) -> int | Response:
    hint = (
        f"goal must be a whole number from 0 to {count - 1} (goals of the {split!r} split), got {text[:40]!r}"
    )
    if not text.isascii() or not text.isdigit() or len(text) > 9:
        return error_response(400, "Bad Request", hint)
    index = int(text)
    if index >= count:
        return error_response(400, "Bad Request", hint)
    return index


def _visit(session_id: str) -> tuple[Session, Visit] | Response:
    session = server_of().visitors.get(session_id)
    if session is None or not isinstance(session.visit, Visit):
        return error_response(
            404, "Not Found", "This shopping session does not exist or has expired. Start a new one."
        )
    return session, session.visit


@site.get("/s/<session_id>/")
def current_page(session_id: str) -> Any:
    """The session's current page."""
    found = _visit(session_id)
    if isinstance(found, Response):
        return found
    session, visit = found
    with session.lock:
        return redirect(_page_url(session_id, visit.current), code=303)


@site.get("/s/<session_id>/<int:number>/")
def page(session_id: str, number: int) -> Response:
    """Page ``number`` of the session (the ``number``-th page it made; page 0: the search page)."""
    found = _visit(session_id)
    if isinstance(found, Response):
        return found
    session, visit = found
    server = server_of()
    with session.lock:
        if number >= len(visit.pages):
            return error_response(404, "Not Found", "This session has no such page (yet).")
        # An earlier page of a finished visit looks live: it says that nothing on it can be done.
        over = visit.ended and number != visit.ended_on
        html = visit_page(
            session.env,
            visit.goal_index,
            visit.pages[number],
            server.config.product_images,
            trail=trail_to(visit.pages, number),  # the last action's control gets focus back
            audience=server.config.audience,
            notice="visit-over" if over else request.args.get("notice", ""),
        )
    return _page(html)


@site.post("/s/<session_id>/<int:number>/")
def act(session_id: str, number: int) -> Any:
    """Takes the action page ``number``'s form sent, then shows the page it led to."""
    return _act(session_id, number)


@site.post("/s/<session_id>/")
def act_on_current_page(session_id: str) -> Any:
    """Takes the action on whatever page is current (clients that keep one address)."""
    return _act(session_id, None)


def _act(session_id: str, number: int | None) -> Any:
    found = _visit(session_id)
    if isinstance(found, Response):
        return found
    session, visit = found
    action = _form_action()
    if isinstance(action, Response):
        return action
    with session.lock:
        number = visit.current if number is None else number
        if number >= len(visit.pages):
            return error_response(404, "Not Found", "This session has no such page (yet).")
        if visit.branches_at(number) and not visit.ended and len(visit.pages) < visit.max_pages:
            refused = _costly_allowed()
            if refused is not None:
                return refused
        try:
            next_page = visit.act(session, number, action)
        except VisitOver as over:
            return _visit_over(session, over)
        except VisitFull as full:
            return _visit_full(visit, full)
    return redirect(_page_url(session_id, next_page), code=303)


def _visit_over(session: Session, over: VisitOver) -> Response:
    """409: the visit has ended; says how, and links to its last page."""
    if over.record.purchase is not None:
        asin = over.record.purchase["purchased_asin"]
        product = session.env.catalog.get(asin)
        name = (product.title if product is not None else "") or asin
        message = (
            f"This shopping session is over: you already bought {name[:200]} (its Buy Now was "
            "pressed), so nothing more can be done in it. Its last page shows what you bought "
            "and your score; start a new session to shop again."
        )
        next_text = "See what you bought"
    else:
        message = (
            f"This shopping session is over: it used all {session.env.max_steps} of its actions, "
            "so nothing more can be done in it. Start a new session to shop again."
        )
        next_text = "See its last page"
    page = (
        template_environment()
        .get_template("visit_over.html")
        .render(
            status=409,
            title="Conflict",
            message=message,
            next_href=_page_url(session.id, over.page),
            next_text=next_text,
        )
    )
    return Response(page, status=409, mimetype="text/html")


def _visit_full(visit: Visit, full: VisitFull) -> Response:
    return error_response(
        409,
        "Conflict",
        f"This shopping session has made its limit of {full.max_pages} pages (every action, also on "
        f"an earlier page, makes one). Start a new session for this goal to go on: "
        f"/?goal={visit.goal_index}",
    )


def _form_action() -> str | Response:
    """The action a page form sent: ``action=click[...]`` or ``search_query=...``."""
    form = request.form
    if "search_query" in form:
        query = form["search_query"]
        if len(query) > MAX_FORM_FIELD_CHARS:
            return error_response(
                400, "Bad Request", f"The search query is longer than {MAX_FORM_FIELD_CHARS} characters."
            )
        if not query.strip():
            # A person's search of only spaces costs no action: back to the same page, which
            # says why (agents, through the env or /api/v1, get the env's answer as ever).
            back = f"{request.path}?{urlencode({**request.args, 'notice': 'empty-search'})}"
            return Response(status=303, headers={"Location": back})
        return search_action(query)
    if "action" in form:
        action = form["action"]
        if len(action) > MAX_FORM_FIELD_CHARS:
            return error_response(
                400, "Bad Request", f"The action is longer than {MAX_FORM_FIELD_CHARS} characters."
            )
        return action
    return error_response(
        400,
        "Bad Request",
        "The form needs an 'action' field (like click[buy now]) or a 'search_query' field.",
    )


@site.get("/img/<asin>.svg")
def product_image(asin: str) -> Response:
    """A product's picture, drawn from its colour, kind and name (``?color=`` recolours it)."""
    catalog = server_of().prototype.catalog
    if asin not in catalog:
        return error_response(404, "Not Found", "There is no product with this code.")
    svg = product_svg(catalog[asin], request.args.get("color"))
    response = Response(svg, mimetype="image/svg+xml")
    response.headers["Cache-Control"] = f"public, max-age={IMAGE_MAX_AGE}"
    response.add_etag()
    response.make_conditional(request)  # (in place: it returns the same response, typed as werkzeug's)
    return response


@site.get("/favicon.ico")
def favicon() -> Response:
    response = Response((STATIC_DIR / "favicon.svg").read_bytes(), mimetype="image/svg+xml")
    response.headers["Cache-Control"] = f"public, max-age={IMAGE_MAX_AGE}"
    return response


@site.get("/healthz")
def health() -> Any:
    """200 when the server can take actions; 503 with a reason when its log folder fails."""
    server = server_of()
    body: dict[str, Any] = {
        "status": "ok",
        "visitor_sessions": len(server.visitors),
        "api_envs": len(server.api_envs),
    }
    problem = _log_folder_problem()
    if problem is None:
        return body
    body.update(status="failing", reason=problem)
    response = jsonify(body)
    response.status_code = 503
    response.headers["Retry-After"] = str(RECORDING_RETRY_AFTER)
    return response


def _log_folder_problem() -> str | None:
    """Why trajectory records cannot be written now, or None (no log folder: nothing to write)."""
    log_dir = server_of().config.log_dir
    if log_dir is None:
        return None
    if not log_dir.is_dir():
        return "the trajectory log folder is missing (the operator must make it again)"
    if not os.access(log_dir, os.W_OK | os.X_OK):
        return "the trajectory log folder is not writable"
    free = shutil.disk_usage(log_dir).free
    if free < MIN_FREE_LOG_BYTES:
        return f"the trajectory log folder's disk is full ({free} bytes free, {MIN_FREE_LOG_BYTES} needed)"
    state = site_state()
    failure = state.record_failure
    if failure is None:
        return None
    # A record failed: a small durable write must work before the folder counts as healthy.
    probe = log_dir / f".healthz-{os.getpid()}-{secrets.token_hex(4)}.probe"
    try:
        append_whole_lines(probe, b"probe\n" * 1024)
        probe.unlink()
    except OSError as error:
        seconds = time.monotonic() - failure[0]
        return (
            f"a trajectory record failed {seconds:.0f} s ago ({failure[1]}) and a test write "
            f"fails too ({error.strerror or type(error).__name__})"
        )
    with state.lock:
        if state.record_failure == failure:
            state.record_failure = None
    return None
