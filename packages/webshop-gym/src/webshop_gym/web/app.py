"""The web shop's Flask app: the pages people shop in, plus the JSON API (`webshop_gym.web.api`).

A visitor opening ``/`` (or ``/?goal=<i>`` for goal i of the configured split) gets a new
session with its own `WebShopEnv` in ``html`` mode and is sent to ``/s/<session id>/``.
That page is the env's current observation, byte for byte: the same templates render it
for agents and people. The page's forms post back to the same address (``action=click[...]``
from buttons, radios and product links, or ``search_query=...`` from the search bar),
which steps the env and redirects (303) to the page again, so reloading never repeats an
action. Every step goes to the session's trajectory file when a log folder is set.

Security: pages only ever hold product text and queries as escaped template data; the
session id in the address is a 256-bit secret; responses forbid framing, sniffing,
referrers and any script or style from other origins (Content-Security-Policy).

Example:
    >>> app = create_app(ServerConfig(catalog="mini"))
    >>> client = app.test_client()
    >>> start = client.get("/?goal=0")
    >>> start.status_code, start.headers["Location"].startswith("/s/")
    (303, True)
    >>> page = client.get(start.headers["Location"])
    >>> b"<h2>WebShop</h2>" in page.data
    True
"""

from __future__ import annotations

import secrets
from typing import Any

from flask import Blueprint, Flask, Response, redirect, request, url_for
from werkzeug.exceptions import HTTPException

from webshop_gym.actions import search_action
from webshop_gym.render_html import STATIC_DIR
from webshop_gym.web.api import api
from webshop_gym.web.config import ServerConfig
from webshop_gym.web.context import WebShopServer, error_response, server_of
from webshop_gym.web.sessions import Session, SessionLimitError, SessionStore

__all__ = ["WebShopServer", "create_app", "server_of"]

# Fixed headers of every response. Pages load only this site's script, style sheet and
# forms; images may come from product image hosts (https) as in the original.
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

site = Blueprint("site", __name__)


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
    app = Flask(__name__, static_folder=str(STATIC_DIR), static_url_path="/static")
    app.config["MAX_CONTENT_LENGTH"] = config.max_request_bytes
    app.config["MAX_FORM_MEMORY_SIZE"] = config.max_request_bytes
    app.config["SEND_FILE_MAX_AGE_DEFAULT"] = 3600
    app.extensions["webshop_gym"] = WebShopServer(
        config=config,
        visitors=SessionStore(config.max_sessions, config.idle_timeout, instance=config.instance),
        api_envs=SessionStore(config.max_sessions, config.idle_timeout, instance=config.instance),
        goal_count=len(prototype.goal_indices),
    )
    app.register_blueprint(site)
    app.register_blueprint(api)
    app.after_request(_add_security_headers)
    app.register_error_handler(HTTPException, _http_error)
    app.register_error_handler(SessionLimitError, _session_limit)
    return app


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
    return error_response(503, "Service Unavailable", str(error))


# -- the pages ---------------------------------------------------------------------------


@site.get("/")
def start() -> Any:
    """A new visitor session: goal ``?goal=i`` of the split, or one drawn at random."""
    server = server_of()
    goal_text = request.args.get("goal")
    if goal_text is None:
        goal_index = secrets.randbelow(server.goal_count)
    else:
        parsed = _goal_index(goal_text, server.goal_count, server.config.split)
        if isinstance(parsed, Response):
            return parsed
        goal_index = parsed
    session = server.visitors.add(server.config.make_visitor_env())
    with session.lock:
        session.recorder = server.recorder("web")
        session.reset(seed=secrets.randbelow(2**31), options={"goal_index": goal_index})
    return redirect(url_for("site.page", session_id=session.id), code=303)


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


def _visitor(session_id: str) -> Session | Response:
    session = server_of().visitors.get(session_id)
    if session is None:
        return error_response(
            404, "Not Found", "This shopping session does not exist or has expired. Start a new one."
        )
    return session


@site.get("/s/<session_id>/")
def page(session_id: str) -> Response:
    """The session's current page: the env's HTML observation."""
    session = _visitor(session_id)
    if isinstance(session, Response):
        return session
    with session.lock:
        html = session.observation
    return Response(html, mimetype="text/html")


@site.post("/s/<session_id>/")
def act(session_id: str) -> Any:
    """Takes the action the page's form sent, then shows the page again."""
    session = _visitor(session_id)
    if isinstance(session, Response):
        return session
    action = _form_action()
    if isinstance(action, Response):
        return action
    with session.lock:
        session.step(action)
    return redirect(url_for("site.page", session_id=session_id), code=303)


def _form_action() -> str | Response:
    """The action a page form sent: ``action=click[...]`` or ``search_query=...``."""
    form = request.form
    if "search_query" in form:
        query = form["search_query"]
        if len(query) > MAX_FORM_FIELD_CHARS:
            return error_response(
                400, "Bad Request", f"The search query is longer than {MAX_FORM_FIELD_CHARS} characters."
            )
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


@site.get("/healthz")
def health() -> Any:
    server = server_of()
    return {"status": "ok", "visitor_sessions": len(server.visitors), "api_envs": len(server.api_envs)}
