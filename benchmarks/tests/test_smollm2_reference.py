"""The shared SmolLM2 pi_ref: built from the named preset's warm-start settings into --folder,
reused when those settings already made it, and never per algorithm."""

from __future__ import annotations

import json

import pytest

from apo_agent.config import TrainConfig
from apo_agent.warm_start import reference
from benchmarks.training import smollm2_reference


def test_a_folder_holding_this_pi_ref_is_reused_and_its_path_printed(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "pi-ref"
    expected = TrainConfig.from_preset("smollm2-cpu", seed=3, demo_goals=8, reference_dir=str(folder))
    folder.mkdir()
    (folder / "reference.json").write_text(json.dumps({"settings": reference.reference_settings(expected)}))

    def built_again(*args, **kwargs):
        raise RuntimeError("pi_ref built again")

    monkeypatch.setattr(reference, "collect_demonstrations", built_again)
    smollm2_reference.main(["--folder", str(folder), "--seed", "3", "--set", "demo_goals=8"])
    assert capsys.readouterr().out.strip().splitlines()[-1] == str(folder)
    # Other warm-start settings are another pi_ref: this one is not passed off as it.
    with pytest.raises(RuntimeError, match="built again"):
        smollm2_reference.main(["--folder", str(folder), "--seed", "3", "--set", "demo_goals=9"])


def test_a_setting_for_one_algorithm_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        smollm2_reference.main(["--folder", str(tmp_path / "r"), "--set", "apo:beta2=0.01"])
    assert stopped.value.code == 2 and "without ALGORITHM:" in capsys.readouterr().err
