"""What every route of the web shop shares: the server's state and its error responses.

Both blueprints (`webshop_gym.web.app`'s pages and `webshop_gym.web.api`) import this module
and nothing of each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import Flask, Response, current_app, jsonify, request

from webshop_gym.envs import WebShopEnv
from webshop_gym.render.html import template_environment
from webshop_gym.trajectories import TrajectoryRecorder, new_trajectory_path
from webshop_gym.web.config import ServerConfig
from webshop_gym.web.sessions import SessionStore

__all__ = ["WebShopServer", "error_response", "server_of", "wants_json"]


@dataclass
class WebShopServer:
    """What the app's requests share: the configuration, the two session stores, and an
    env of the visitors' kind (its catalogue, goals and split draw the pages before a
    visitor's first action; it is never stepped)."""

    config: ServerConfig
    visitors: SessionStore
    api_envs: SessionStore
    goal_count: int
    prototype: WebShopEnv

    def recorder(self, source: str) -> TrajectoryRecorder | None:
        if self.config.log_dir is None:
            return None
        return TrajectoryRecorder(new_trajectory_path(self.config.log_dir, source), source=source)


def server_of(app: Flask | None = None) -> WebShopServer:
    """The `WebShopServer` of ``app`` (default: the app of the current request)."""
    return (app or current_app).extensions["webshop_gym"]  # type: ignore[no-any-return]


def wants_json() -> bool:
    return request.path.startswith("/api/")


def error_response(status: int, title: str, message: str) -> Response:
    """The error as JSON for API paths and as an (escaped) HTML page elsewhere."""
    if wants_json():
        response = jsonify(error=message, status=status)
        response.status_code = status
        return response
    page = (
        template_environment()
        .get_template("error_page.html")
        .render(status=status, title=title, message=message)
    )
    return Response(page, status=status, mimetype="text/html")
