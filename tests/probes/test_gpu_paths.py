"""GPU-only code paths, run against fakes built from what real devices report (no GPU here)."""

import pytest

import suite_helpers  # noqa: F401  (imports torch quietly)
from fake_gpu import H100, MI300X, RAPHAEL_IGPU, RX6700XT_AS_1030, RX7900XTX, FakeTorch

from probes import programming_interface as pi
from probes.context import ProbeContext, choose_device
from probes.facts import describe_devices

ROCM_62_ARCHS = ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101"]
CU124_ARCHS = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]


def _ctx(fake, accelerator):
    ctx = ProbeContext(mode="full", torch=fake)
    ctx._accelerator = accelerator
    return ctx


def test_discrete_gpu_is_chosen_over_the_igpu():
    fake = FakeTorch([RAPHAEL_IGPU, RX7900XTX], ROCM_62_ARCHS, hip="6.2")
    assert choose_device(fake) == 1
    ctx = _ctx(fake, "rocm")
    assert ctx.device_index == 1 and fake.cuda.current == 1  # set_device, so streams follow
    assert choose_device(FakeTorch([RAPHAEL_IGPU], ROCM_62_ARCHS, hip="6.2")) == 0
    assert choose_device(FakeTorch([H100, H100], CU124_ARCHS)) == 0


def test_devices_carry_integrated_and_pci():
    fake = FakeTorch([RAPHAEL_IGPU, RX7900XTX], ROCM_62_ARCHS, hip="6.2")
    found = describe_devices(fake)
    assert [d["arch"] for d in found] == ["gfx1036", "gfx1100"]
    assert [d["integrated"] for d in found] == [True, False]
    assert found[1]["pci"] == "0000:03:00"


def test_kernel_launch_and_gemm_on_every_device():
    fake = FakeTorch([H100, H100], CU124_ARCHS)
    outcome = pi.kernel_launch(_ctx(fake, "cuda"))
    assert outcome.status == "pass", outcome
    assert [d["index"] for d in outcome.details["devices"]] == [0, 1]
    assert all(d["gemm"]["ok"] and d["elementwise_ok"] for d in outcome.details["devices"])
    assert 0 in fake.devices_used and 1 in fake.devices_used
    assert "on 2 device(s)" in outcome.message


def test_arch_check_before_launch_cuda():
    ctx = _ctx(FakeTorch([H100], CU124_ARCHS), "cuda")
    outcome = pi.arch_list(ctx)
    assert outcome.status == "pass" and outcome.details["devices"][0]["match"] == "exact"
    assert ctx.arch_problem is None
    # a cu118-era build without sm_90 and no PTX: reported as a missing arch, and later GPU probes are blocked
    ctx = _ctx(FakeTorch([H100], ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86"]), "cuda")
    outcome = pi.arch_list(ctx)
    assert outcome.status == "fail" and outcome.message.startswith("no kernels for sm_90 (device 0) in this build")
    assert ctx.arch_problem.startswith("not run: no kernels for")


def test_arch_check_rocm_features_kept():
    outcome = pi.arch_list(_ctx(FakeTorch([MI300X], ROCM_62_ARCHS, hip="6.2"), "rocm"))
    assert outcome.status == "pass"
    assert outcome.details["devices"][0]["device"] == "gfx942:sramecc+:xnack-"
    assert outcome.details["devices"][0]["match"] == "exact"


KFD_1031 = [{"node": 1, "gfx": "gfx1031", "integrated": False, "location_id": 0x300, "domain": 0}]


def test_hsa_override_is_reported_as_override():
    """A real gfx1031 (RX 6700 XT) running as gfx1030 under HSA_OVERRIDE_GFX_VERSION=10.3.0."""
    found = describe_devices(FakeTorch([RX6700XT_AS_1030], ROCM_62_ARCHS, hip="6.2"))
    outcome = pi.check_arch(ROCM_62_ARCHS, found, True, KFD_1031, "10.3.0")
    assert outcome.status == "pass", outcome
    device = outcome.details["devices"][0]
    assert device["match"] == "override" and device["kfd_gfx"] == "gfx1031" and device["reported"] == "gfx1030"
    assert outcome.message == "override (gfx1031 runs as gfx1030)"


def test_reported_isa_differs_from_kfd_without_override():
    found = describe_devices(FakeTorch([RX6700XT_AS_1030], ROCM_62_ARCHS, hip="6.2"))
    outcome = pi.check_arch(ROCM_62_ARCHS, found, True, KFD_1031, None)
    assert outcome.status == "fail"
    assert "runtime reports gfx1030 but the KFD topology says gfx1031" in outcome.message


def test_override_to_an_isa_the_build_lacks():
    found = describe_devices(FakeTorch([props_as("gfx1010")], ["gfx900", "gfx1030"], hip="6.2"))
    outcome = pi.check_arch(["gfx900", "gfx1030"], found, True, KFD_1031, "10.1.0")
    assert outcome.status == "fail" and "gfx1031 running as gfx1010 (device 0)" in outcome.message


def props_as(gfx):
    from fake_gpu import props

    return props("AMD Radeon RX 6700 XT", 10, 1, 12868124672, gfx, pci=(0, 3, 0))


def test_real_gfx_by_pci_address_and_by_elimination():
    devices = [{"pci": "0000:03:00"}, {"pci": "0000:7c:00", "integrated": True}]
    kfd = [{"gfx": "gfx1100", "location_id": 0x300, "domain": 0, "integrated": False},
           {"gfx": "gfx1036", "location_id": 0x7c00, "domain": 0, "integrated": True}]
    assert [pi.real_gfx(d, kfd) for d in devices] == ["gfx1100", "gfx1036"]
    assert pi.real_gfx({}, kfd) == "gfx1100"  # the only discrete one
    assert pi.real_gfx({"integrated": True}, kfd) is None


@pytest.mark.parametrize("vendor", ["nvidia", "amd"])
def test_child_guard_under_expect(vendor):
    from probes import _child
    from probes.registry import load_probes

    probes = {p.id: p for p in load_probes()}
    cpu_ctx = _ctx(FakeTorch([], CU124_ARCHS), "cpu")
    cpu_ctx.expect = vendor
    guard = _child.on_cpu_under_expect(probes["math_libraries.matmul_fp32"], cpu_ctx)
    assert guard.status == "fail" and guard.message == "ran on CPU: no GPU reached the process"
    assert _child.on_cpu_under_expect(probes["kernel_driver.amd_driver"], cpu_ctx) is None
    gpu_ctx = _ctx(FakeTorch([H100], CU124_ARCHS), "cuda")
    gpu_ctx.expect = vendor
    assert _child.on_cpu_under_expect(probes["math_libraries.matmul_fp32"], gpu_ctx) is None


def test_sticky_error_detection():
    from probes._child import sticky_device_error

    assert sticky_device_error({"message": "x", "details": {"error": "RuntimeError: HIP error: invalid device "
                                                                       "function"}}) == "HIP error"
    assert sticky_device_error({"message": "CUDA error: an illegal memory access was encountered",
                                "details": {}}) == "CUDA error"
    assert sticky_device_error({"message": "matmul within tolerance", "details": {}}) is None


def test_parent_skips_gpu_work_after_a_missing_arch(monkeypatch):
    """When layer 3 finds no kernels for the GPU, later GPU groups are not run into launch errors."""
    from probes import cli
    from probes.model import probe_result
    from probes.registry import load_probes

    facts = {"torch": {"version": "2.5.1+cu124", "cuda": "12.4", "hip": None, "available": True,
                       "import_error": None, "arch_list": ["sm_80"]},
             "devices": [{"index": 0, "arch": "sm_120"}], "accelerator": "cuda"}
    monkeypatch.setattr(cli, "run_facts_child", lambda timeout, env, budget: facts)
    monkeypatch.setattr(cli, "collect_host_facts", lambda: {"expect": "nvidia"})
    ran = []

    def fake_group(probes, mode, timeout_s, env, budget, facts_timeout_s=None):
        ran.extend(p.id for p in probes)
        if facts_timeout_s is not None:
            budget.facts = facts
        out = []
        for probe in probes:
            if probe.id == "programming_interface.arch_list":
                out.append(probe_result(probe, "fail", 0.1, "no kernels for sm_120 (device 0) in this build",
                                        {"devices": [{"device": "sm_120", "match": "none"}]}))
            else:
                out.append(probe_result(probe, "pass", 0.1, "fine", {}))
        return out

    monkeypatch.setattr(cli, "run_group", fake_group)
    wanted = [p for p in load_probes() if p.id in (
        "kernel_driver.nvidia_driver", "programming_interface.arch_list", "programming_interface.kernel_launch",
        "math_libraries.matmul_fp32", "framework.sdpa", "performance.matmul_tflops")]
    document = cli.run_suite(wanted, quick=False, timeout_s=None, environ={})
    results = {r["id"]: r for r in document["probes"]}
    assert results["programming_interface.arch_list"]["status"] == "fail"
    for probe_id in ("math_libraries.matmul_fp32", "framework.sdpa", "performance.matmul_tflops"):
        assert results[probe_id]["status"] == "skip", results[probe_id]
        assert results[probe_id]["message"].startswith("not run: no kernels for sm_120")
        assert probe_id not in ran
    assert results["kernel_driver.nvidia_driver"]["status"] == "pass"
    assert document["verdict"]["lowest_failing_layer"] == 3
