"""A fake Docker engine for fast unit tests of the run loop, in the style of docker-py's ``tests/unit/fake_api.py``.

The fake sits where the daemon would: under gpumatrix's real :class:`~gpumatrix.engine.client.Engine`, in place
of docker-py's low-level ``APIClient``. So every typed model the run loop sees (``EngineInfo``, ``ImageInfo``,
``ContainerInfo``, ``ContainerOutcome``) is parsed from the payload by the real client code, build streams go
through the real ``Engine.build`` (error lines, ``aux`` image ids), and probe containers through the real
``Engine.run`` (create, start, wait, inspect, logs, remove). Host configs are built by docker-py's own
``HostConfig``, so an option the engine's API version rejects fails here too.

Every answer starts from a payload recorded on a real engine (``tests/fixtures/engine``, see its README and
``record.py``); the fake only substitutes the ids, names, tags and labels of what the test created, and keeps
state (images that exist, containers that live) so that a build makes its tag inspectable and a removed
container is gone. What it does not know raises ``AttributeError``: a new engine call in the run loop then
fails loudly here instead of passing unnoticed.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import docker.errors
import docker.types

from gpumatrix.engine.client import Engine

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "engine"
BASE_IMAGE = "debian:bookworm-slim"  # the base image the recordings were made with


def recorded(name: str) -> Any:
    """A recorded payload: parsed JSON, or raw bytes for a container's output (``*.stdout`` style files)."""
    path = FIXTURES / name
    if name.startswith("probe_") and name.endswith(".json"):
        return path.read_bytes()  # the container's stdout, byte for byte
    return json.loads(path.read_text(encoding="utf-8"))


PROBE_PASS = "probe_quick_cpu.json"  # the real quick suite in a CPU cell image: verdict pass
PROBE_FAIL = "probe_quick_cpu_expect_nvidia.json"  # the same told to expect an NVIDIA GPU: layer 1 fails


class FakeAPI:
    """docker-py's ``APIClient`` methods that :class:`Engine` calls, answering from recorded payloads.

    Knobs (set them before the run): ``failing_builds`` — image repositories (``<namespace>/<base id>``) whose
    build replays the recorded failing build; ``probe_output`` — cell id → recorded file name (or bytes) its
    probe container prints; ``reachable`` — what ``ping`` answers; ``on_wait`` — called with a container's
    state while its probe "runs" (to interrupt a run, or hold a probe until its container is removed). ``calls`` records ``(method, detail)``.
    """

    def __init__(self, images: tuple[str, ...] = (BASE_IMAGE,)):
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.version_payload = recorded("version.json")
        self.info_payload = recorded("info.json")
        self.api_version = self.version_payload["ApiVersion"]
        self.images_by_ref: dict[str, dict] = {}
        for ref in images:
            self.add_image(ref)
        self.containers_by_id: dict[str, dict] = {}
        self.failing_builds: set[str] = set()
        self.probe_output: dict[str, str | bytes] = {}
        self.reachable = True
        self.on_wait: Callable[[dict], None] | None = None  # called with the container while a probe "runs"
        self.calls: list[tuple[str, Any]] = []

    # -- bookkeeping ---------------------------------------------------------
    def _call(self, method: str, detail: Any = None) -> None:
        with self._lock:
            self.calls.append((method, detail))

    def called(self, method: str) -> list[Any]:
        """The details of every call of ``method``, in order."""
        return [d for m, d in self.calls if m == method]

    def add_image(self, ref: str, payload: Mapping[str, Any] | None = None) -> dict:
        """Make ``ref`` exist: the recorded base image for the base, the recorded cell image for anything else."""
        if payload is None:
            payload = recorded("image_inspect_base.json" if ref == BASE_IMAGE else "image_inspect_cell.json")
            payload = copy.deepcopy(payload)
            if ref != BASE_IMAGE:
                payload["Id"] = "sha256:" + hashlib.sha256(ref.encode()).hexdigest()
                payload["RepoTags"] = [ref]
                payload["RepoDigests"] = []
        with self._lock:
            self.images_by_ref[ref] = dict(payload)
        return self.images_by_ref[ref]

    # -- system --------------------------------------------------------------
    def ping(self) -> bool:
        self._call("ping")
        return self.reachable

    def version(self) -> dict:
        self._call("version")
        return copy.deepcopy(self.version_payload)

    def info(self) -> dict:
        self._call("info")
        return copy.deepcopy(self.info_payload)

    # -- images --------------------------------------------------------------
    def inspect_image(self, ref: str) -> dict:
        self._call("inspect_image", ref)
        with self._lock:
            payload = self.images_by_ref.get(ref)
        if payload is None:
            raise docker.errors.ImageNotFound(f"No such image: {ref}")
        return copy.deepcopy(payload)

    def images(self, filters: Mapping[str, Any] | None = None, **_: Any) -> list[dict]:
        self._call("images", filters)
        label = (filters or {}).get("label")
        out = []
        with self._lock:
            for payload in self.images_by_ref.values():
                labels = (payload.get("Config") or {}).get("Labels") or {}
                if label is None or label.split("=")[0] in labels:
                    out.append({"Id": payload["Id"], "RepoTags": payload.get("RepoTags"),
                                "RepoDigests": payload.get("RepoDigests"), "Labels": labels,
                                "Size": payload.get("Size")})
        return out

    def build(self, fileobj: Any = None, tag: str | None = None, buildargs: Mapping[str, str] | None = None,
              labels: Mapping[str, str] | None = None, **kwargs: Any) -> Iterator[dict]:
        assert kwargs.get("decode") and kwargs.get("custom_context"), "Engine.build streams decoded chunks"
        self._call("build", {"tag": tag, "buildargs": dict(buildargs or {}), "labels": dict(labels or {}),
                             "nocache": kwargs.get("nocache")})
        repo = (tag or "").rsplit(":", 1)[0]
        if repo in self.failing_builds:
            return iter(recorded("build_fail.json"))
        image = self.add_image(tag or "")
        image["Config"] = {**(image.get("Config") or {}), "Labels": dict(labels or {})}
        chunks = []
        for chunk in recorded("build_ok.json"):
            if "aux" in chunk:
                chunk = {"aux": {"ID": image["Id"]}}
            elif str(chunk.get("stream", "")).startswith("Successfully tagged"):
                chunk = {"stream": f"Successfully tagged {tag}\n"}
            chunks.append(chunk)
        return iter(chunks)

    # -- containers ----------------------------------------------------------
    def create_host_config(self, *args: Any, **kwargs: Any) -> docker.types.HostConfig:
        # As docker-py's APIClient.create_host_config: its own validation, at the recorded API version.
        return docker.types.HostConfig(*args, version=self.api_version, **kwargs)

    def create_container(self, image: str, command: Any = None, name: str | None = None,
                         environment: Mapping[str, str] | None = None, labels: Mapping[str, str] | None = None,
                         host_config: Mapping[str, Any] | None = None, user: str | None = None,
                         **kwargs: Any) -> dict:
        with self._lock:
            if image not in self.images_by_ref:
                missing = True
            else:
                missing = False
                cid = hashlib.sha256(f"container-{next(self._ids)}".encode()).hexdigest()
                self.containers_by_id[cid] = {
                    "id": cid, "name": name or cid[:12], "image": image, "command": list(command or ()),
                    "env": dict(environment or {}), "labels": dict(labels or {}), "user": user or "",
                    "host_config": dict(host_config or {}), "state": "created"}
        self._call("create_container", {"image": image, "name": name, "env": dict(environment or {}),
                                        "labels": dict(labels or {})})
        if missing:
            raise docker.errors.ImageNotFound(f"No such image: {image}")
        return {"Id": cid, "Warnings": []}

    def _container(self, cid: str) -> dict:
        with self._lock:
            found = self.containers_by_id.get(cid)
        if found is None:
            raise docker.errors.NotFound(f"No such container: {cid}")
        return found

    def start(self, cid: str) -> None:
        self._call("start", cid)
        self._container(cid)["state"] = "running"

    def wait(self, cid: str, timeout: float | None = None) -> dict:
        self._call("wait", cid)
        if self.on_wait is not None:
            self.on_wait(self._container(cid))
        self._container(cid)["state"] = "exited"  # NotFound if it was removed meanwhile
        return recorded("wait.json")

    def kill(self, cid: str) -> None:
        self._call("kill", cid)
        self._container(cid)["state"] = "exited"

    def inspect_container(self, cid: str) -> dict:
        self._call("inspect_container", cid)
        c = self._container(cid)
        payload = recorded("container_inspect_created.json" if c["state"] == "created"
                           else "container_inspect_exited.json")
        payload["Id"], payload["Name"], payload["Image"] = c["id"], "/" + c["name"], c["image"]
        payload["Config"].update({"Image": c["image"], "Labels": c["labels"], "User": c["user"],
                                  "Env": [f"{k}={v}" for k, v in c["env"].items()]})
        payload["HostConfig"].update(c["host_config"])
        payload["State"]["Status"] = c["state"]
        return payload

    def logs(self, cid: str, stdout: bool = True, stderr: bool = True, **kwargs: Any) -> bytes:
        self._call("logs", (cid, "stdout" if stdout else "stderr"))
        c = self._container(cid)
        if not stdout:
            return (FIXTURES / "probe_quick_cpu.stderr.txt").read_bytes()
        output = self.probe_output.get(c["env"].get("GPUMATRIX_CELL", ""), PROBE_PASS)
        return output if isinstance(output, bytes) else recorded(output)

    def remove_container(self, cid: str, force: bool = False, v: bool = False) -> None:
        self._call("remove_container", cid)
        with self._lock:
            if self.containers_by_id.pop(cid, None) is None:
                raise docker.errors.NotFound(f"No such container: {cid}")

    def containers(self, all: bool = False, filters: Mapping[str, Any] | None = None, **_: Any) -> list[dict]:
        self._call("containers", filters)
        template = recorded("containers_managed.json")[0]
        label = (filters or {}).get("label")
        out = []
        with self._lock:
            for c in self.containers_by_id.values():
                if label is not None and label.split("=")[0] not in c["labels"]:
                    continue
                out.append({**template, "Id": c["id"], "Names": ["/" + c["name"]], "Image": c["image"],
                            "Labels": dict(c["labels"]), "State": c["state"]})
        return out


class FakeDockerClient:
    """What :class:`Engine` holds: a ``docker.DockerClient`` with its ``api``."""

    def __init__(self, api: FakeAPI):
        self.api = api

    def ping(self) -> bool:
        return self.api.ping()

    def close(self) -> None:
        pass


def fake_engine(api: FakeAPI | None = None) -> tuple[Engine, FakeAPI]:
    """gpumatrix's real :class:`Engine` over a :class:`FakeAPI`; returns both (the API to set up and inspect)."""
    api = api or FakeAPI()
    return Engine(FakeDockerClient(api)), api  # type: ignore[arg-type]

