"""What the engine layer hands upwards: typed, frozen descriptions of images, containers and the engine.

Nothing here knows HTTP or the Docker SDK; :mod:`gpumatrix.engine.client` turns the engine's payloads
into these objects where they enter, so nothing above it reads ``d["Labels"]`` or trusts a field's type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

LABEL_NS = "io.gpumatrix"
MANAGED_LABEL = f"{LABEL_NS}.managed"


@dataclass(frozen=True)
class EngineInfo:
    """The engine's version and what it offers for GPUs (from ``/version`` and ``/info``)."""

    version: str | None = None
    api_version: str | None = None
    runtimes: tuple[str, ...] = ()
    default_runtime: str | None = None
    security_options: tuple[str, ...] = ()
    operating_system: str | None = None
    cdi_spec_dirs: tuple[str, ...] = ()
    docker_root_dir: str | None = None

    @property
    def rootless(self) -> bool:
        return any("rootless" in s for s in self.security_options)

    @property
    def docker_desktop(self) -> bool:
        return "docker desktop" in (self.operating_system or "").lower()


@dataclass(frozen=True)
class ContainerInfo:
    """A container as listed or inspected: enough to decide whether it is ours and whether to remove it."""

    id: str
    name: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    state: str = ""  # created | running | exited | ...
    image: str = ""
    user: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    # The engine's own HostConfig as it reports it (for tests and diagnostics that check what the
    # engine actually applied: privileges, devices, mounts, limits).
    host_config: Mapping[str, Any] = field(default_factory=dict)
    created: float | None = None  # when the engine created it (epoch seconds), as listings report it


@dataclass(frozen=True)
class ImageInfo:
    id: str
    tags: tuple[str, ...]
    repo_digests: tuple[str, ...]
    labels: Mapping[str, str]
    size: int


@dataclass(frozen=True)
class DeviceRequestSpec:
    """An NVIDIA-style device request (``--gpus``): ``count=-1`` means all."""

    driver: str = ""
    count: int = -1
    device_ids: tuple[str, ...] = ()
    capabilities: tuple[tuple[str, ...], ...] = (("gpu",),)


@dataclass(frozen=True)
class Mount:
    source: str
    target: str
    read_only: bool = True


@dataclass(frozen=True)
class ContainerSpec:
    """Everything needed to run one container, in engine-neutral terms."""

    image: str
    command: Sequence[str]
    name: str | None = None
    environment: Mapping[str, str] = field(default_factory=dict)
    mounts: Sequence[Mount] = ()
    devices: Sequence[str] = ()  # "host:container:rwm"
    device_requests: Sequence[DeviceRequestSpec] = ()
    group_add: Sequence[str] = ()
    runtime: str | None = None
    shm_size: str | None = None
    ipc_mode: str | None = None
    network_mode: str = "none"
    read_only: bool = True
    tmpfs: Mapping[str, str] = field(default_factory=dict)
    security_opt: Sequence[str] = ("no-new-privileges",)
    cap_drop: Sequence[str] = ("ALL",)
    user: str | None = None
    working_dir: str | None = None
    pids_limit: int | None = None
    mem_limit: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 1800.0
    output_cap: int = 16 * 1024 * 1024
    # An init process (docker's tini) as PID 1: reaps DataLoader workers' zombies, and lets a crash
    # (SIGSEGV, SIGABRT) kill the suite instead of being ignored as signals to PID 1 are.
    init: bool = True


@dataclass(frozen=True)
class ContainerOutcome:
    exit_code: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    oom_killed: bool
    duration_s: float
    host_config: Mapping[str, object] = field(default_factory=dict)

