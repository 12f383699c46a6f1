"""A device node the container's user may not open: the probe suite's open check becomes a fact, the fact a cause.

torch says "No CUDA GPUs are available" and nvidia-smi "No devices were found" both when no node reached the
container and when the node is there but this user may not open it (recorded on an H200 as uid 65534 with
/dev/nvidia0 at mode 000: tests/diagnosis/recorded/). The text cannot tell them apart; the probe suite's node
check, which opens each node read-write, can. These tests make real character-device nodes (``mknod``), run the
real check as an unprivileged user, and read its document the way a saved cell is read.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import pytest

from gpumatrix.diagnose import diagnose, facts_from_cell_result

ROOT = Path(__file__).resolve().parents[2]
NOBODY = 65534
NO_GPUS = "RuntimeError: No CUDA GPUs are available\n"

def _cell(outcome: dict, nodes: list[str]) -> dict:
    """A saved cell's document holding the suite's node check and its device_nodes fact."""
    probe = {"id": "kernel_driver.nvidia_device_nodes", "layer": 1, "status": outcome["status"],
             "message": outcome["message"], "details": outcome["details"]}
    return {"vendor": "nvidia", "probes": {"facts": {"device_nodes": nodes}, "probes": [probe]}}


@pytest.fixture
def dev_tree():
    """A world-readable folder with a /dev of real NVIDIA character nodes (majors no driver here registered) and a
    /proc/devices that names 195 as nvidia. Needs root for mknod; removed afterwards."""
    if os.geteuid() != 0:
        pytest.skip("making device nodes (mknod) and dropping to another user needs root")
    top = Path(tempfile.mkdtemp(prefix="gm-perm-", dir="/tmp"))
    top.chmod(0o755)
    dev, proc = top / "dev", top / "proc"
    dev.mkdir(mode=0o755)
    proc.mkdir(mode=0o755)
    (proc / "devices").write_text("Character devices:\n195 nvidia\n\nBlock devices:\n  7 loop\n")
    (proc / "devices").chmod(0o644)
    for name, minor in (("nvidiactl", 255), ("nvidia0", 0), ("nvidia-uvm", 254)):
        os.mknod(dev / name, 0o666 | stat.S_IFCHR, os.makedev(195, minor))
        os.chmod(dev / name, 0o666)
    yield dev, proc
    shutil.rmtree(top)


def _check_as_nobody(dev: Path, proc: Path) -> dict:
    """The suite's real NVIDIA node check, run with this process's effective user and group switched to nobody
    (open() checks the effective ids, and root's capabilities drop with them), then switched back."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from probes import kernel_driver
    from probes.model import jsonable

    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        outcome = kernel_driver.check_nvidia_nodes(str(dev), proc_root=str(proc))
    finally:
        os.seteuid(0)
        os.setegid(0)
    return {"status": outcome.status, "message": outcome.message, "details": json.loads(json.dumps(
        jsonable(outcome.details)))}


def test_a_node_this_user_may_not_open_is_a_permission(dev_tree):
    dev, proc = dev_tree
    os.chmod(dev / "nvidia0", 0)  # as on the H200: mode 000, the other nodes open to all
    outcome = _check_as_nobody(dev, proc)
    opened = {a["path"]: a for a in outcome["details"]["open"]}
    assert opened[str(dev / "nvidia0")]["error"].startswith("EACCES")
    assert not opened[str(dev / "nvidiactl")]["openable"]  # no driver behind the major here: ENXIO, not counted
    assert not opened[str(dev / "nvidiactl")]["error"].startswith("EACCES")

    facts = facts_from_cell_result(_cell(outcome, sorted(opened)))
    assert facts["container_device_nodes_denied"] == [str(dev / "nvidia0")]
    result = diagnose(NO_GPUS, facts)
    assert (result.cause, result.rule) == ("device_permission", "facts-device-nodes-denied")
    assert str(dev / "nvidia0") in result.evidence and "--group-add" in result.remedy


def test_nodes_every_user_may_open_say_nothing_of_permissions(dev_tree):
    dev, proc = dev_tree
    outcome = _check_as_nobody(dev, proc)
    facts = facts_from_cell_result(_cell(outcome, sorted(a["path"] for a in outcome["details"]["open"])))
    assert facts["container_device_nodes_denied"] == []
    assert diagnose(NO_GPUS, facts).cause != "device_permission"


def test_only_eacces_counts_and_no_check_is_no_fact():
    details = {"open": [{"path": "/dev/nvidia0", "openable": False, "error": "EPERM: Operation not permitted"},
                        {"path": "/dev/nvidiactl", "openable": False, "error": "ENXIO: No such device or address"},
                        {"path": "/dev/nvidia-uvm", "openable": True}]}
    facts = facts_from_cell_result(_cell({"status": "fail", "message": "", "details": details}, ["/dev/nvidia0"]))
    assert facts["container_device_nodes_denied"] == []  # a device cgroup's EPERM is the runtime's, not a permission
    skipped = facts_from_cell_result(_cell({"status": "skip", "message": "no NVIDIA GPU", "details": {}}, []))
    assert "container_device_nodes_denied" not in skipped
    odd = {"open": [{"path": "/dev/nvidia0", "openable": False, "error": "EACCES: Permission denied"}, "junk", None]}
    assert facts_from_cell_result(_cell({"status": "fail", "message": "", "details": odd}, []))[
        "container_device_nodes_denied"] == ["/dev/nvidia0"]
