"""GPU passthrough: mode choice, slots and options (unit), and what the real engine makes of them.

No GPU here. The engine tests use real character devices made with ``os.mknod`` under a
temporary root, passed in as /dev/kfd and /dev/dri/renderD128, and check from inside a
debian:bookworm-slim container that the nodes, their groups and the access through those
groups are right. NVIDIA requests are checked in the created container's HostConfig and
against this engine's real refusal (it has no toolkit).
"""

from __future__ import annotations

import json
import os
import stat
import textwrap
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
import yaml

from gpumatrix.config.matrix import RunOptions, expand_cells, parse_matrix
from gpumatrix.engine.client import MANAGED_LABEL, ContainerSpec, EngineOperationError
from gpumatrix.errors import ConfigError
from gpumatrix.host import GPU, HostInfo, discover_host
from gpumatrix.run.passthrough import (
    CDI_SETUP, RUNTIME_SETUP, TOOLKIT_INSTALL, PassthroughUnavailable, all_gpus_slot, amd_missing_kfd_hint,
    apply_passthrough, assign_slots, check_nvidia_modes, explain_engine_error, gpu_slots, passthrough_options_for, resolve_nvidia_mode, with_nvidia_mode,
)
from gpumatrix.run.probe import probe_container_spec

FIX = Path(__file__).parent / "fixtures" / "host"
IMAGE = "debian:bookworm-slim"
ENGINE_ERRORS = json.loads((FIX / "engine_errors.json").read_text())["errors"]


def nvidia_host(n: int = 2, *, runtimes=("runc",), hook: bool = False, version: str = "20.10.24",
                cdi_dirs=(), cdi_driver: str | None = None, driver: str = "570.86.15") -> HostInfo:
    gpus = tuple(GPU("nvidia", i, "NVIDIA H100 80GB HBM3", "sm_90", uuid=f"GPU-0000000{i}-aaaa-bbbb-cccc-dddddddddddd")
                 for i in range(n))
    specs = {}
    if cdi_driver:
        specs["/etc/cdi/nvidia.yaml"] = {"kind": "nvidia.com/gpu", "devices": [str(i) for i in range(n)] + ["all"],
                                         "driver_version": cdi_driver}
    return HostInfo(hostname="h", kernel="6.8", os="Ubuntu", machine="x86_64", gpus=gpus, nvidia_driver=driver,
                    engine={"version": version, "api_version": "1.41", "runtimes": sorted(runtimes),
                            "cdi_spec_dirs": list(cdi_dirs)},
                    nvidia_toolkit={"nvidia-container-runtime-hook": "/usr/bin/nvidia-container-runtime-hook"}
                    if hook else {}, cdi_specs=specs)


def amd_host(n: int = 2, **kw) -> HostInfo:
    gpus = tuple(GPU("amd", i, "AMD Instinct MI300X", "gfx942", uuid=f"GPU-{0x1000 + i:016x}",
                     render_node=f"/dev/dri/renderD{128 + i}") for i in range(n))
    nodes = tuple(g.render_node for g in gpus)
    modes = {"/dev/kfd": (stat.S_IFCHR | 0o660, 0, 992), **{r: (stat.S_IFCHR | 0o660, 0, 992) for r in nodes}}
    return HostInfo(hostname="h", kernel="6.8", os="Ubuntu", machine="x86_64", gpus=gpus, amd_driver="6.12.12",
                    dev_kfd=True, render_nodes=nodes, group_ids={"video": 44, "render": 992}, device_modes=modes, **kw)


MATRIX = textwrap.dedent("""\
    schema_version: 1
    bases:
      - {id: cu130, vendor: nvidia, image: "nvidia/cuda:13.0.2-runtime-ubuntu24.04", variant: cu130, python: "3.12"}
      - {id: cu130all, vendor: nvidia, image: "nvidia/cuda:13.0.2-runtime-ubuntu24.04", variant: cu130,
         python: "3.12", gpus: all}
      - {id: rocm, vendor: amd, image: "rocm/dev-ubuntu-24.04:7.2.4", variant: rocm7.2, python: "3.12",
         hsa_override_gfx_version: "11.0.0"}
      - {id: cpu, vendor: cpu, image: "debian:bookworm-slim", variant: cpu}
    torch:
      - version: "2.14.1"
      - version: "2.13.0"
    run: {nvidia_mode: auto, ipc: host, seccomp_unconfined: true, disable_require: true}
    """)


def matrix(text: str = MATRIX):
    return parse_matrix(text, Path("/tmp/matrix.yaml"))


# ---------------------------------------------------------------------------
# matrix.yaml keys


def test_new_keys_parse():
    m = matrix()
    assert m.run == RunOptions(nvidia_mode="auto", ipc="host", seccomp_unconfined=True, disable_require=True)
    assert m.base("rocm").hsa_override_gfx_version == "11.0.0" and m.base("cu130all").gpus == "all"
    assert m.base("cu130").gpus == "1" and m.base("cu130").hsa_override_gfx_version is None
    assert RunOptions().nvidia_mode == "auto" and RunOptions().ipc is None
    assert not RunOptions().seccomp_unconfined and not RunOptions().disable_require


def test_new_keys_validated_with_lines_and_suggestions():
    bad = MATRIX.replace("nvidia_mode: auto", "nvidia_mode: gpu").replace("ipc: host", "ipc: shared") \
        .replace("disable_require: true", "disable_require: yes please").replace("gpus: all", "gpus: 2") \
        .replace('hsa_override_gfx_version: "11.0.0"', "hsa_override_gfx_version: 11.0")
    with pytest.raises(ConfigError) as err:
        matrix(bad)
    text = str(err.value)
    assert "run.nvidia_mode 'gpu' must be one of auto, gpus, cdi, runtime; did you mean 'gpus'?" in text
    assert "run.ipc 'shared'" in text and "run.disable_require must be true or false" in text
    assert "gpus must be 1 (one GPU per cell) or all" in text
    assert "hsa_override_gfx_version must be a string" in text
    assert "/tmp/matrix.yaml:" in text


def test_hsa_override_only_for_amd():
    with pytest.raises(ConfigError, match="hsa_override_gfx_version is for amd bases only"):
        matrix(MATRIX.replace('variant: cu130, python: "3.12"}', 'variant: cu130, python: "3.12", '
                                                                 'hsa_override_gfx_version: "11.0.0"}', 1))


def test_schema_knows_the_new_keys():
    schema = json.loads((Path(__file__).parent.parent / "gpumatrix/data/matrix.schema.json").read_text())
    jsonschema.validate(yaml.safe_load(MATRIX), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(yaml.safe_load(MATRIX.replace("nvidia_mode: auto", "nvidia_mode: gpu")), schema)


# ---------------------------------------------------------------------------
# NVIDIA mode choice


def test_no_toolkit_no_mode_one_clear_message():
    host = nvidia_host()
    checks = check_nvidia_modes(host)
    assert not any(c.ok for c in checks.values())
    with pytest.raises(PassthroughUnavailable) as err:
        resolve_nvidia_mode(host)
    text = str(err.value)
    assert text.startswith("2 NVIDIA GPU(s) (NVIDIA H100 80GB HBM3), but containers cannot be given them")
    assert "nvidia-container-runtime-hook" in text  # what is missing
    assert "apt-get install -y nvidia-container-toolkit" in text  # how to install
    assert "nvidia-ctk runtime configure --runtime=docker" in text  # how to configure
    assert "check: docker run --rm --gpus all" in text  # how to check
    assert "Docker 20.10.24 has no CDI support" in text


def test_auto_prefers_gpus_then_cdi_then_runtime():
    assert resolve_nvidia_mode(nvidia_host(hook=True, runtimes=("runc", "nvidia")))[0] == "gpus"
    cdi = nvidia_host(version="28.3.1", cdi_driver="570.86.15")
    assert resolve_nvidia_mode(cdi)[0] == "cdi"  # CDI on by default from 28.2
    assert resolve_nvidia_mode(nvidia_host(runtimes=("runc", "nvidia")))[0] == "runtime"


def test_cdi_needs_docker_25_enabled_and_a_fresh_spec():
    assert not check_nvidia_modes(nvidia_host(version="24.0.7", cdi_driver="570.86.15"))["cdi"].ok
    off = check_nvidia_modes(nvidia_host(version="26.1.4", cdi_driver="570.86.15"))["cdi"]
    assert not off.ok and "not enabled" in off.why and '"features": {"cdi": true}' in off.fix
    assert check_nvidia_modes(nvidia_host(version="26.1.4", cdi_dirs=["/etc/cdi"], cdi_driver="570.86.15"))["cdi"].ok
    stale = check_nvidia_modes(nvidia_host(version="28.3.1", cdi_driver="550.54.14"))["cdi"]
    assert not stale.ok and "stale" in stale.why and "nvidia-ctk cdi generate" in stale.fix


def test_requested_mode_that_does_not_work_says_so():
    with pytest.raises(PassthroughUnavailable, match="nvidia_mode 'cdi' cannot work here"):
        resolve_nvidia_mode(nvidia_host(hook=True), "cdi")
    with pytest.raises(ConfigError, match="unknown nvidia_mode 'docker'; choose one of auto, gpus, cdi, runtime"):
        resolve_nvidia_mode(nvidia_host(hook=True), "docker")


def test_flag_overrides_matrix_mode():
    m = with_nvidia_mode(matrix(), "runtime")
    assert m.run.nvidia_mode == "runtime" and m.run.ipc == "host"
    assert with_nvidia_mode(m, None) is m
    with pytest.raises(ConfigError, match="--nvidia-mode"):
        with_nvidia_mode(m, "all")


# ---------------------------------------------------------------------------
# Options per mode and slot


def test_gpus_mode_all_and_pinned():
    host = nvidia_host(hook=True)
    p = passthrough_options_for("nvidia", host)
    (req,) = p.device_requests
    assert (req.driver, req.count, req.device_ids, req.capabilities) == ("", -1, (), (("gpu",),))
    assert p.environment["NVIDIA_DRIVER_CAPABILITIES"] == "compute,utility"
    assert "NVIDIA_DISABLE_REQUIRE" not in p.environment and p.mode == "gpus"
    slot = gpu_slots(host, "nvidia")[1]
    (req,) = passthrough_options_for("nvidia", host, slot=slot).device_requests
    assert req.count == 0 and req.device_ids == (host.gpus[1].uuid,)


def test_cdi_and_runtime_modes():
    host = nvidia_host(hook=True, version="28.3.1", cdi_driver="570.86.15", runtimes=("runc", "nvidia"))
    (req,) = passthrough_options_for("nvidia", host, nvidia_mode="cdi").device_requests
    assert req.driver == "cdi" and req.device_ids == ("nvidia.com/gpu=all",) and req.capabilities == ()
    (req,) = passthrough_options_for("nvidia", host, nvidia_mode="cdi", slot=gpu_slots(host, "nvidia")[1]).device_requests
    assert req.device_ids == ("nvidia.com/gpu=1",)
    p = passthrough_options_for("nvidia", host, run=RunOptions(nvidia_mode="runtime", disable_require=True))
    assert p.runtime == "nvidia" and not p.device_requests
    assert p.environment["NVIDIA_VISIBLE_DEVICES"] == "all" and p.environment["NVIDIA_DISABLE_REQUIRE"] == "1"


def test_amd_all_gpus_groups_and_opt_ins(monkeypatch):
    monkeypatch.delenv("GPUMATRIX_HSA_OVERRIDE_GFX_VERSION", raising=False)
    host = amd_host()
    p = passthrough_options_for("amd", host, run=RunOptions(ipc="host", seccomp_unconfined=True))
    assert p.devices == ("/dev/kfd:/dev/kfd:rwm", "/dev/dri/renderD128:/dev/dri/renderD128:rwm",
                         "/dev/dri/renderD129:/dev/dri/renderD129:rwm")
    assert p.group_add == ("44", "992")
    assert p.ipc_mode == "host" and p.security_opt == ("seccomp=unconfined",)
    assert "ROCR_VISIBLE_DEVICES" not in p.environment and "HSA_OVERRIDE_GFX_VERSION" not in p.environment
    plain = passthrough_options_for("amd", host)
    assert plain.ipc_mode is None and plain.security_opt == ()


def test_amd_pinned_slot_and_hsa_override(monkeypatch):
    monkeypatch.delenv("GPUMATRIX_HSA_OVERRIDE_GFX_VERSION", raising=False)
    host = amd_host()
    base = matrix().base("rocm")
    p = passthrough_options_for("amd", host, base=base, slot=gpu_slots(host, "amd")[1])
    assert p.devices == ("/dev/kfd:/dev/kfd:rwm", "/dev/dri/renderD129:/dev/dri/renderD129:rwm")
    assert p.environment["ROCR_VISIBLE_DEVICES"] == host.gpus[1].uuid
    assert p.environment["HSA_OVERRIDE_GFX_VERSION"] == "11.0.0"
    monkeypatch.setenv("GPUMATRIX_HSA_OVERRIDE_GFX_VERSION", "10.3.0")  # the host's setting wins
    assert passthrough_options_for("amd", host, base=base).environment["HSA_OVERRIDE_GFX_VERSION"] == "10.3.0"


def test_slots_for_a_mixed_host():
    host = replace(nvidia_host(2, hook=True), gpus=nvidia_host(2).gpus + amd_host(2).gpus)
    cells = [c for c in expand_cells(matrix()).cells if c.applicable]
    pinned = {c.id: (s.label if s else None) for c, s in assign_slots(cells, host)}
    assert pinned["cu130-torch2.14.1"] == "nvidia:0" and pinned["cu130-torch2.13.0"] == "nvidia:1"
    assert pinned["cu130all-torch2.14.1"] == "nvidia:all"
    assert pinned["rocm-torch2.14.1"] == "amd:0" and pinned["rocm-torch2.13.0"] == "amd:1"
    assert pinned["cpu-torch2.14.1"] is None
    assert [s.label for s in gpu_slots(host, "amd")] == ["amd:0", "amd:1"]
    assert len(all_gpus_slot(host, "nvidia").gpus) == 2 and gpu_slots(host, "cpu") == []
    # Both vendors' options come from the one host.
    assert passthrough_options_for("nvidia", host).device_requests
    assert passthrough_options_for("amd", amd_host()).devices


# ---------------------------------------------------------------------------
# The engine's own errors, as recorded, translated


@pytest.mark.parametrize("entry", ENGINE_ERRORS, ids=lambda e: e["message"][:40])
def test_recorded_engine_errors_are_explained(entry):
    host = nvidia_host()
    # each recorded error gets the fix for its own cause, not just any text
    expected = {'could not select device driver "" ': f"fix: {TOOLKIT_INSTALL}",
                'could not select device driver "nvidia"': f"fix: {TOOLKIT_INSTALL}",
                'could not select device driver "cdi"': f"fix: {CDI_SETUP}",
                "Unknown runtime specified nvidia": f"fix: {RUNTIME_SETUP}",
                'custom device "/dev/kfd"': f"/dev/kfd does not exist on the engine's host. "
                                             f"{amd_missing_kfd_hint(host)}",
                'custom device "/dev/dri/renderD128"': "/dev/dri/renderD128 does not exist on the engine's host. "
                                                       f"{amd_missing_kfd_hint(host)}"}
    (want,) = [v for k, v in expected.items() if k in entry["message"]]
    text = explain_engine_error(entry["message"], host)
    assert want in text
    assert text.endswith(f"engine said: {entry['message']}")  # the engine's words are kept


def test_engine_error_translation_specifics():
    gpus = explain_engine_error(ENGINE_ERRORS[0]["message"], nvidia_host())
    assert "NVIDIA Container Toolkit is not installed" in gpus and "nvidia-ctk runtime configure" in gpus
    desktop = amd_host(engine={"docker_desktop": True})
    assert "Docker Desktop" in explain_engine_error(ENGINE_ERRORS[4]["message"], desktop)
    rootless = amd_host(engine={"rootless": True})
    assert "rootless" in explain_engine_error(ENGINE_ERRORS[4]["message"], rootless)
    old_driver = ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=13.0, please update your "
                  "driver to a newer version, or use an earlier cuda container: unknown")
    assert "disable_require" in explain_engine_error(old_driver)
    assert explain_engine_error("No such image: foo:latest") is None


# ---------------------------------------------------------------------------
# On the real engine


def _mknod_root(tmp_path: Path, kfd_gid: int, render_gid: int, kfd_mode: int = 0o660) -> Path:
    """A fake root with real character devices: kfd = /dev/null's 1:3, renderD128 = /dev/zero's 1:5."""
    root = tmp_path / "root"
    (root / "dev/dri").mkdir(parents=True)
    os.mknod(root / "dev/kfd", stat.S_IFCHR | kfd_mode, os.makedev(1, 3))
    os.mknod(root / "dev/dri/renderD128", stat.S_IFCHR | 0o660, os.makedev(1, 5))
    os.chown(root / "dev/kfd", 0, kfd_gid)
    os.chown(root / "dev/dri/renderD128", 0, render_gid)
    os.chmod(root / "dev/kfd", kfd_mode)  # mknod's mode is masked by the umask
    os.chmod(root / "dev/dri/renderD128", 0o660)
    (root / "etc").mkdir()
    (root / "etc/group").write_text(f"video:x:44:\nrender:x:{render_gid}:\n")
    node = root / "sys/class/kfd/kfd/topology/nodes/1"
    node.mkdir(parents=True)
    (node / "properties").write_text("simd_count 304\ngfx_target_version 90402\ndrm_render_minor 128\n"
                                     "unique_id 9895604649984\nlocation_id 29952\n")
    return root


def _probe_like_spec(command: list[str], unique: str, **kw) -> ContainerSpec:
    """The same least-privilege settings as a probe container (run.probe_container_spec)."""
    return ContainerSpec(image=IMAGE, command=command, name=f"gpumatrix-test-{unique}", network_mode="none",
                         read_only=True, tmpfs={"/tmp": "rw,nosuid,nodev,size=16m"}, user="65534:65534",
                         pids_limit=64, labels={MANAGED_LABEL: "true", "io.gpumatrix.role": "test"},
                         timeout_s=60, shm_size="64m", **kw)


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="os.mknod of character devices needs root")


@pytest.mark.engine
@needs_root
def test_amd_devices_and_groups_inside_a_container(engine, tmp_path, unique):
    root = _mknod_root(tmp_path, kfd_gid=4242, render_gid=4343)
    host = discover_host(engine.describe(), root=root)
    assert host.vendor_gpus("amd")[0].render_node == "/dev/dri/renderD128"
    p = passthrough_options_for("amd", host)
    assert p.devices[0] == f"{root}/dev/kfd:/dev/kfd:rwm"
    assert set(p.group_add) == {"44", "4242", "4343"}
    script = ("stat -c '%t:%T %g' /dev/kfd /dev/dri/renderD128; id -G; "
              "head -c 1 /dev/kfd >/dev/null && echo kfd-readable; "
              "head -c 4 /dev/dri/renderD128 | od -An -tx1")
    spec = apply_passthrough(_probe_like_spec(["sh", "-c", script], unique), p)
    out = engine.run(spec)
    lines = out.stdout.decode().split("\n")
    assert out.exit_code == 0, out.stderr.decode()
    assert lines[0] == "1:3 4242"  # major:minor (hex) and the host's gid, as mknod made them
    assert lines[1] == "1:5 4343"
    assert set(lines[2].split()) == {"65534", "44", "4242", "4343"}  # numeric host GIDs added
    assert lines[3] == "kfd-readable"  # a non-root user opens the 0660 node through the added group
    assert lines[4].split() == ["00", "00", "00", "00"]


@pytest.mark.engine
@needs_root
def test_without_the_device_group_a_container_user_cannot_open_kfd(engine, tmp_path, unique):
    root = _mknod_root(tmp_path, kfd_gid=4242, render_gid=4343)
    p = passthrough_options_for("amd", discover_host(root=root))
    no_groups = replace(p, group_add=())
    spec = apply_passthrough(_probe_like_spec(["sh", "-c", "head -c 1 /dev/kfd"], unique), no_groups)
    out = engine.run(spec)
    assert out.exit_code != 0 and b"Permission denied" in out.stderr


@pytest.mark.engine
@needs_root
def test_probe_container_host_config_amd(engine, tracked, tmp_path, monkeypatch):
    monkeypatch.delenv("GPUMATRIX_HSA_OVERRIDE_GFX_VERSION", raising=False)
    root = _mknod_root(tmp_path, kfd_gid=4242, render_gid=4343)
    host = discover_host(engine.describe(), root=root)
    m = matrix()
    cell = next(c for c in expand_cells(m).cells if c.base.id == "rocm" and c.applicable)
    spec = probe_container_spec(cell, IMAGE, host, m.run)
    full = apply_passthrough(spec, passthrough_options_for("amd", host, run=m.run, base=cell.base), m.run)
    cid = engine.create_container(full)
    tracked["containers"].append(cid)
    hc = engine.inspect_container(cid).host_config
    env = engine.inspect_container(cid).env
    assert [(d["PathOnHost"], d["PathInContainer"], d["CgroupPermissions"]) for d in hc["Devices"]] == [
        (f"{root}/dev/kfd", "/dev/kfd", "rwm"), (f"{root}/dev/dri/renderD128", "/dev/dri/renderD128", "rwm")]
    assert sorted(hc["GroupAdd"]) == ["4242", "4343", "44"]
    # ipc: host shares the host's /dev/shm: no 8g shm_size is sent (the engine shows its 64m default)
    assert hc["IpcMode"] == "host" and hc.get("ShmSize") != 8 * 1024 ** 3
    assert "seccomp=unconfined" in hc["SecurityOpt"] and "no-new-privileges" in hc["SecurityOpt"]
    assert env["HSA_OVERRIDE_GFX_VERSION"] == "11.0.0" and env["GPUMATRIX_EXPECT"] == "amd"
    assert hc["ReadonlyRootfs"] is True and hc["CapDrop"] == ["ALL"] and hc["NetworkMode"] == "none"
    # The spec run.py builds today already carries devices, groups and environment.
    assert spec.devices == full.devices and spec.group_add == full.group_add


@pytest.mark.engine
@pytest.mark.parametrize("mode", ["gpus", "cdi", "runtime"])
def test_nvidia_host_config_per_mode(engine, tracked, unique, mode):
    host = nvidia_host(hook=True, version="28.3.1", cdi_driver="570.86.15", runtimes=("runc", "nvidia"))
    run = RunOptions(nvidia_mode=mode)
    p = passthrough_options_for("nvidia", host, run=run)
    spec = apply_passthrough(_probe_like_spec(["true"], f"{unique}-{mode}", ), p)
    spec = replace(spec, shm_size="8g")
    if mode == "runtime":
        # This engine has no nvidia runtime: creation fails, and the message says how to add it.
        with pytest.raises(EngineOperationError) as err:
            engine.create_container(spec)
        assert ENGINE_ERRORS[3]["message"] in err.value.reason
        assert "nvidia-ctk runtime configure" in explain_engine_error(err.value.reason)
        return
    cid = engine.create_container(spec)
    tracked["containers"].append(cid)
    data = engine.inspect_container(cid)
    hc, env = data.host_config, data.env
    assert env["NVIDIA_DRIVER_CAPABILITIES"] == "compute,utility" and "NVIDIA_DISABLE_REQUIRE" not in env
    assert hc["ShmSize"] == 8 * 1024 ** 3 and hc["IpcMode"] in ("private", "")
    (req,) = hc["DeviceRequests"]
    if mode == "gpus":
        assert (req["Driver"], req["Count"], req["Capabilities"]) == ("", -1, [["gpu"]])
    else:
        assert req["Driver"] == "cdi" and req["DeviceIDs"] == ["nvidia.com/gpu=all"]


@pytest.mark.engine
def test_nvidia_request_on_an_engine_without_toolkit_gives_the_clear_error(engine, unique):
    info = engine.describe()
    if "nvidia" in info.runtimes:
        pytest.skip("this engine has the NVIDIA toolkit")
    host = discover_host(info)
    host = replace(host, gpus=nvidia_host(1).gpus)  # pretend a GPU: the plumbing is what is tested
    with pytest.raises(PassthroughUnavailable):
        resolve_nvidia_mode(host)
    p = passthrough_options_for("nvidia", host)  # falls back to the plain request
    spec = apply_passthrough(_probe_like_spec(["true"], unique), p)
    with pytest.raises(EngineOperationError) as err:
        engine.run(spec)
    reason = err.value.reason
    assert 'could not select device driver "" with capabilities: [[gpu]]' in reason
    if info.version == "20.10.24+dfsg1":
        assert ENGINE_ERRORS[0]["message"] in reason  # the recorded fixture is this engine's word for word
    text = explain_engine_error(reason, host)
    assert "the engine cannot serve the GPU request (--gpus)" in text and "nvidia-container-toolkit" in text
    assert not [c for c in engine.containers_with_label(MANAGED_LABEL) if c.name == spec.name]  # removed on failure
