"""The warm start: supervised learning on demonstrations, which makes pi_ref.

* `demonstrations`: the imperfect privileged demonstrator (`NoisyExpert`), its recorded
  episodes and the option variants of goals;
* `supervised`: the supervised updates (`supervised_warm_start`);
* `reference`: what decides pi_ref, where it is kept (`reference_settings`,
  `reference_folder`), and `build_reference`, which makes it from these parts.

The names of the former module ``apo_agent.warm_start`` stay importable from here.
"""

from __future__ import annotations

from apo_agent.warm_start.demonstrations import (
    NoisyExpert,
    collect_demonstrations,
    option_variant,
    option_variants_of,
)
from apo_agent.warm_start.supervised import supervised_warm_start

__all__ = [
    "NoisyExpert",
    "collect_demonstrations",
    "option_variant",
    "option_variants_of",
    "supervised_warm_start",
]
