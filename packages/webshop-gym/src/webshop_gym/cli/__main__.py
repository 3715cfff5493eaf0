"""``python -m webshop_gym.cli``: the ``webshop-gym`` command."""

from webshop_gym.cli import main

raise SystemExit(main())
