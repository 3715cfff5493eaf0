"""Moved to `webshop_gym.cli.serve` and `webshop_gym.cli.replay`; kept so the old import path works."""

from webshop_gym.cli.replay import add_replay_command, run_replay
from webshop_gym.cli.serve import add_serve_command, default_allowed_hosts, run_serve

__all__ = ["add_replay_command", "add_serve_command", "default_allowed_hosts", "run_replay", "run_serve"]
