"""One writer per run folder: a second run into a folder in use fails before it writes anything."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from apo_agent.config import TrainConfig
from apo_agent.runtime.lock import FolderInUseError, locked_folder
from apo_agent.trainer import train
from apo_agent.warm_start.reference import build_reference

# A second process that holds `folder` until `release` exists, then writes `released` and lets go.
HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from apo_agent.runtime.lock import locked_folder

    folder, release = Path(sys.argv[1]), Path(sys.argv[2])
    with locked_folder(folder):
        print("held", flush=True)
        while not release.exists():
            time.sleep(0.02)
        (folder / "released").write_text("yes")
    """
)


@pytest.fixture
def holder(tmp_path):
    """Starts a process holding a folder; yields (folder, release) and always ends the process."""
    processes = []

    def hold(folder: Path) -> tuple[subprocess.Popen, Path]:
        release = tmp_path / f"release-{len(processes)}"
        process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(folder), str(release)], stdout=subprocess.PIPE, text=True
        )
        processes.append(process)
        assert process.stdout.readline().strip() == "held"
        return process, release

    yield hold
    for process in processes:
        process.kill()
        process.wait()


def test_a_folder_held_by_another_process_is_refused_with_the_owner_named(tmp_path, holder):
    process, _ = holder(tmp_path / "run")
    busy = rf"process {process.pid}.*another output_dir"
    with pytest.raises(FolderInUseError, match=busy), locked_folder(tmp_path / "run"):
        pass
    with locked_folder(tmp_path / "other"):  # other folders are free
        pass


def test_the_lock_goes_with_its_process_however_it_ends(tmp_path, holder):
    process, _ = holder(tmp_path / "run")
    process.kill()
    process.wait()
    with locked_folder(tmp_path / "run") as folder:
        assert (folder / ".lock.owner").read_text() == f"process {os.getpid()}\n"


def test_the_lock_needs_no_fcntl(tmp_path, monkeypatch):
    """Windows has no fcntl: the lock must not import it (filelock picks the OS's own lock)."""
    import builtins
    import importlib
    import sys

    real_import = builtins.__import__

    def no_fcntl(name, *args, **kwargs):
        if name == "fcntl":
            raise ImportError("No module named 'fcntl'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_fcntl)
    monkeypatch.delitem(sys.modules, "fcntl", raising=False)
    monkeypatch.delitem(sys.modules, "apo_agent.runtime.lock")
    module = importlib.import_module("apo_agent.runtime.lock")
    assert "fcntl" not in vars(module)
    with module.locked_folder(tmp_path / "run"):
        assert (tmp_path / "run" / ".lock").exists()


def test_a_process_may_take_its_own_folder_again(tmp_path):
    with locked_folder(tmp_path / "run"), locked_folder(tmp_path / "run"):
        pass
    with locked_folder(tmp_path / "run"):  # and it was let go
        pass


def test_waiting_takes_the_folder_once_the_other_process_lets_go(tmp_path, holder):
    _, release = holder(tmp_path / "ref")
    release_later = f"import time; time.sleep(0.3); open({str(release)!r}, 'w')"
    releaser = subprocess.Popen([sys.executable, "-c", release_later])
    started = time.perf_counter()
    with locked_folder(tmp_path / "ref", role="reference_dir", wait=True) as folder:
        assert (folder / "released").read_text() == "yes"
    assert time.perf_counter() - started >= 0.2
    releaser.wait()


def test_training_into_a_busy_output_dir_fails_before_writing(tmp_path, holder, warm_model_dir, tiny_config):
    config = tiny_config(tmp_path, warm_model_dir)
    holder(Path(config.output_dir))
    with pytest.raises(FolderInUseError, match="another output_dir"):
        train(config)
    assert sorted(p.name for p in Path(config.output_dir).iterdir()) == [".lock", ".lock.owner"]


def test_a_shared_reference_dir_is_waited_for_and_then_reused(tmp_path, holder, monkeypatch):
    """The other process builds pi_ref while this one waits; this one then reuses it."""
    from apo_agent.warm_start import reference

    def no_build(*args, **kwargs):
        raise AssertionError("pi_ref was built again")

    monkeypatch.setattr(reference, "collect_demonstrations", no_build)
    config = TrainConfig.from_preset("cpu-demo", reference_dir=str(tmp_path / "ref"))
    _, release = holder(tmp_path / "ref")
    # The holder "finishes" pi_ref: its record appears, then it lets go.
    record = {"settings": reference.reference_settings(config)}
    writer = (
        "import json, time; time.sleep(0.3); "
        f"open({str(tmp_path / 'ref' / 'reference.json')!r}, 'w').write(json.dumps({record!r})); "
        f"open({str(release)!r}, 'w')"
    )
    writer_process = subprocess.Popen([sys.executable, "-c", writer])
    assert build_reference(config) == str(tmp_path / "ref")
    writer_process.wait()
