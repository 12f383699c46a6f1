"""Layers 1-2 against a real ROCm userspace, in a container on the real engine.

The image is Debian bookworm with Debian's own ROCm 5.2 userspace (``rocminfo``,
``libhsa-runtime64-1``) and no GPU. The real probes run in it as the runner runs them
(read-only ``probes/`` at /opt/gpumatrix/probes, non-root, read-only root, no network)
with ``/dev/kfd`` absent, bound to ``/dev/null`` (char 1:3, opens fine) and made with
``mknod`` on a major no driver has registered (open fails with ENXIO). What they and
``rocminfo`` report is compared with what was observed and recorded under
``tests/fixtures/rocm/`` (see its README for how; ``GPUMATRIX_REGEN_FIXTURES=1``
rewrites the recordings from a live run).
"""

import hashlib
import json
import os
import stat

import pytest

from gpumatrix.engine.client import LABEL_NS, MANAGED_LABEL, ContainerSpec, Mount, tar_context
from gpumatrix.errors import BuildError

from suite_helpers import REPO
from tests.isolation import SESSION

pytestmark = [pytest.mark.engine]

FIXTURES = REPO / "tests" / "fixtures" / "rocm"
REGENERATE = os.environ.get("GPUMATRIX_REGEN_FIXTURES") == "1"

DOCKERFILE = b"""\
FROM debian:bookworm-slim
RUN apt-get update \\
 && apt-get install -y --no-install-recommends python3 rocminfo libhsa-runtime64-1 \\
 && rm -rf /var/lib/apt/lists/*
"""
# Named in the test session's namespace and labelled with its session: built once a session, swept at its end.
IMAGE = "%s/test-rocm-userspace:%s" % (SESSION.namespace, hashlib.sha256(DOCKERFILE).hexdigest()[:12])
LAYERS_1_2 = ["python3", "-m", "probes", "--json", "--only", "kernel_driver.*,system_runtime.*"]
HSA_OUT_OF_RESOURCES = 0x1008
HSA_INIT_MESSAGE = "hsa_init failed: HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008)"
ROCMINFO_STDOUT = b"\x1b[31mROCk module is NOT loaded, possibly no GPU devices\x1b[0m\n"


@pytest.fixture(scope="session")
def rocm_image(engine):
    """The image, built once a session (content-addressed tag: reused while the Dockerfile is unchanged)."""
    if engine.image_info(IMAGE) is None:
        base = "debian:bookworm-slim"
        if engine.image_info(base) is None:
            pytest.fail("%s is not in the engine (./dev test provides it)" % base)
        log = []
        try:
            engine.build(tar_context({"Dockerfile": DOCKERFILE}), IMAGE, {},
                         dict({MANAGED_LABEL: "true", LABEL_NS + ".role": "test"}, **SESSION.labels), log.append,
                         network_mode="host")
        except BuildError as err:
            if os.environ.get("CI"):
                raise
            pytest.skip("cannot build %s here (Debian mirrors unreachable?): %s" % (IMAGE, err))
    return IMAGE


@pytest.fixture(scope="session")
def unregistered_kfd(tmp_path_factory):
    """A character node whose major no kernel driver has registered (what a stale /dev/kfd looks like)."""
    with open("/proc/devices") as handle:
        taken = {int(line.split()[0]) for line in handle.read().split("Block devices:")[0].splitlines()
                 if line.split() and line.split()[0].isdigit()}
    major = next(m for m in range(4000, 3000, -1) if m not in taken)
    path = tmp_path_factory.mktemp("devnodes") / "kfd"
    try:
        os.mknod(str(path), 0o666 | stat.S_IFCHR, os.makedev(major, 0))
    except PermissionError as err:
        pytest.skip("mknod needs CAP_MKNOD (run as root): %s" % err)
    os.chmod(str(path), 0o666)
    return str(path), major


def run_in_image(engine, image, command, env=None, devices=()):
    """Run ``command`` as the runner runs the probes: non-root, read-only, no network, no capabilities."""
    spec = ContainerSpec(
        image=image, command=command, environment=dict({"HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1"}, **(env or {})),
        mounts=(Mount(str(REPO / "probes"), "/opt/gpumatrix/probes", read_only=True),), devices=tuple(devices),
        network_mode="none", read_only=True, tmpfs={"/tmp": "rw,nosuid,nodev,size=64m"}, user="65534:65534",
        working_dir="/opt/gpumatrix", pids_limit=256,
        labels=dict({MANAGED_LABEL: "true", LABEL_NS + ".role": "test"}, **SESSION.labels), timeout_s=180.0)
    return engine.run(spec)


def run_layers_1_2(engine, image, env=None, devices=()):
    outcome = run_in_image(engine, image, LAYERS_1_2, env, devices)
    assert outcome.exit_code == 0, outcome.stderr.decode()[-3000:]
    document = json.loads(outcome.stdout.decode())
    return document, {p["id"]: p for p in document["probes"]}


def matches_recording(name, document):
    """Each probe's status and message equal the recording ``probes-<name>.json`` (rewritten with REGENERATE)."""
    observed = [{"id": p["id"], "status": p["status"], "message": p["message"]} for p in document["probes"]]
    observed = {"probes": observed, "verdict": document["verdict"]["summary"]}
    path = FIXTURES / ("probes-%s.json" % name)
    if REGENERATE:
        path.write_text(json.dumps(observed, indent=2, sort_keys=True) + "\n")
    assert observed == json.loads(path.read_text()), "differs from %s (GPUMATRIX_REGEN_FIXTURES=1 rewrites it)" % path


# ---------------------------------------------------------------------------- no /dev/kfd


def test_no_kfd_hsa_init_fails_for_real_and_skips(engine, rocm_image):
    document, probes = run_layers_1_2(engine, rocm_image)
    hsa = probes["system_runtime.hsa_runtime"]
    assert hsa["status"] == "skip"
    assert hsa["message"].startswith(HSA_INIT_MESSAGE) and hsa["message"].endswith("(no /dev/kfd)")
    assert hsa["details"]["hsa_init"] == HSA_OUT_OF_RESOURCES
    assert hsa["details"]["library"] == "libhsa-runtime64.so.1"  # found through the loader: Debian's package
    assert probes["kernel_driver.amd_device_nodes"]["message"] == "no AMD GPU: no /dev/kfd"
    # No NVIDIA userspace in the image: libcuda and NVML are "not available", which is a skip here.
    for probe_id, library in (("system_runtime.cuda_driver", "libcuda.so.1"), ("system_runtime.nvml", "libnvidia-ml.so.1")):
        assert probes[probe_id]["status"] == "skip"
        assert probes[probe_id]["message"] == "%s not available" % library
        assert "cannot open shared object file" in probes[probe_id]["details"]["load_errors"][0]
    assert {p["status"] for p in probes.values()} == {"skip"}
    assert document["verdict"]["status"] == "pass"
    matches_recording("no-kfd", document)


def test_no_kfd_with_expect_amd_fails_at_layer_1(engine, rocm_image):
    document, probes = run_layers_1_2(engine, rocm_image, env={"GPUMATRIX_EXPECT": "amd"})
    assert probes["kernel_driver.amd_device_nodes"]["status"] == "fail"
    assert probes["kernel_driver.amd_device_nodes"]["message"] == "GPUMATRIX_EXPECT=amd but no /dev/kfd"
    hsa = probes["system_runtime.hsa_runtime"]
    assert hsa["status"] == "fail" and hsa["message"].startswith(HSA_INIT_MESSAGE)
    assert "ROCr could not open the KFD" in hsa["message"]
    assert probes["system_runtime.cuda_driver"]["status"] == "skip"
    assert probes["system_runtime.rocm_smi"]["status"] == "skip"  # optional tooling, even in AMD cells
    assert document["verdict"]["lowest_failing_layer"] == 1
    assert document["verdict"]["lowest_failing_layer_name"] == "kernel_driver"
    matches_recording("no-kfd-expect-amd", document)


def test_no_libcuda_with_expect_nvidia_fails(engine, rocm_image):
    document, probes = run_layers_1_2(engine, rocm_image, env={"GPUMATRIX_EXPECT": "nvidia"})
    assert probes["system_runtime.cuda_driver"]["status"] == "fail"
    assert probes["system_runtime.cuda_driver"]["message"] == "GPUMATRIX_EXPECT=nvidia but libcuda.so.1 is not available"
    assert probes["system_runtime.nvml"]["status"] == "fail"
    assert probes["kernel_driver.nvidia_device_nodes"]["status"] == "fail"
    assert probes["system_runtime.hsa_runtime"]["status"] == "skip"  # AMD's runtime is not expected here
    assert document["verdict"]["lowest_failing_layer"] == 1
    matches_recording("no-libcuda-expect-nvidia", document)


# ---------------------------------------------------------------------------- fake /dev/kfd


def test_dev_null_as_kfd_is_seen_through(engine, rocm_image):
    """/dev/null bound as /dev/kfd opens read-write, but it is not the KFD, and ROCr says so."""
    document, probes = run_layers_1_2(engine, rocm_image, devices=["/dev/null:/dev/kfd:rwm"])
    nodes = probes["kernel_driver.amd_device_nodes"]
    assert nodes["status"] == "fail"
    assert nodes["details"]["open"] == [{"path": "/dev/kfd", "openable": True}]
    assert nodes["details"]["identity"][0] == {"path": "/dev/kfd", "type": "char", "major": 1, "minor": 3,
                                               "driver": "mem"}
    assert "/dev/kfd is char 1:3, which the kernel registered as 'mem', not 'kfd'" in nodes["message"]
    assert "no AMD /dev/dri/renderD<N> node" in nodes["message"]
    assert probes["kernel_driver.device_groups"]["status"] == "pass"  # the permissions themselves are fine
    assert probes["kernel_driver.amd_driver"]["status"] == "fail"  # a /dev/kfd without amdgpu
    hsa = probes["system_runtime.hsa_runtime"]
    assert hsa["status"] == "fail", "a /dev/kfd is there, so a failing hsa_init is a failure even unexpected"
    assert hsa["details"]["hsa_init"] == HSA_OUT_OF_RESOURCES and hsa["message"].startswith(HSA_INIT_MESSAGE)
    assert document["verdict"]["lowest_failing_layer"] == 1
    matches_recording("dev-null-as-kfd", document)


def test_kfd_with_no_driver_behind_it(engine, rocm_image, unregistered_kfd):
    path, major = unregistered_kfd
    document, probes = run_layers_1_2(engine, rocm_image, env={"GPUMATRIX_EXPECT": "amd"},
                                      devices=["%s:/dev/kfd:rwm" % path])
    nodes = probes["kernel_driver.amd_device_nodes"]
    assert nodes["status"] == "fail"
    assert nodes["details"]["open"] == [{"path": "/dev/kfd", "openable": False,
                                         "error": "ENXIO: No such device or address"}]
    assert nodes["details"]["identity"][0]["major"] == major and nodes["details"]["identity"][0]["driver"] is None
    assert ("/dev/kfd is char %d:0, a major no kernel driver has registered" % major) in nodes["message"]
    hsa = probes["system_runtime.hsa_runtime"]
    assert hsa["status"] == "fail" and hsa["details"]["hsa_init"] == HSA_OUT_OF_RESOURCES
    assert document["verdict"]["failed"] == ["kernel_driver.amd_device_nodes", "kernel_driver.amd_driver",
                                             "system_runtime.hsa_runtime"]
    assert document["verdict"]["lowest_failing_layer"] == 1


# ---------------------------------------------------------------------------- rocminfo


@pytest.mark.parametrize("devices", [(), ("/dev/null:/dev/kfd:rwm",)], ids=["no-kfd", "dev-null-as-kfd"])
def test_rocminfo_real_error_text(engine, rocm_image, devices):
    """rocminfo stops before hsa_init: it looks for the loaded amdgpu module ("ROCk") first."""
    outcome = run_in_image(engine, rocm_image, ["rocminfo"], devices=devices)
    path = FIXTURES / "rocminfo-no-amdgpu.stdout"
    if REGENERATE and not devices:
        path.write_bytes(outcome.stdout)
        (FIXTURES / "rocminfo-no-amdgpu.stderr").write_bytes(outcome.stderr)
    assert outcome.exit_code == 1
    assert outcome.stdout == ROCMINFO_STDOUT == path.read_bytes()


def test_whole_suite_in_a_gpu_cell_without_torch_or_gpu(engine, rocm_image):
    """The whole suite in the real ROCm userspace image (no torch, no GPU) as an AMD cell: no probe
    passes, the lowest failure is the driver, torch probes fail with the import error, and the
    host facts (tools run in their own bounded children) are there."""
    outcome = run_in_image(engine, rocm_image, ["python3", "-m", "probes", "--json", "--no-perf"],
                           env={"GPUMATRIX_EXPECT": "amd"})
    assert outcome.exit_code == 0, outcome.stderr.decode()[-3000:]
    document = json.loads(outcome.stdout.decode())
    probes = {p["id"]: p for p in document["probes"]}
    assert not [p["id"] for p in document["probes"] if p["status"] == "pass"]
    assert document["verdict"]["lowest_failing_layer"] == 1
    assert probes["kernel_driver.amd_driver"]["status"] == "fail"
    assert "No module named 'torch'" in document["facts"]["torch"]["import_error"]
    for probe_id in ("programming_interface.runtime", "math_libraries.matmul_fp32", "framework.sdpa"):
        assert probes[probe_id]["status"] == "fail", probes[probe_id]
        assert probes[probe_id]["message"].startswith("torch cannot be imported: ModuleNotFoundError")
    facts = document["facts"]
    assert facts["env"]["GPUMATRIX_EXPECT"] == "amd" and facts["expect"] == "amd"
    assert facts["cpu"]["flags"] and facts["numa"] is not None
    assert facts["loaded_libraries"] == []
    assert facts["rocm"]["partitions"] == []
