"""The thin layer that talks to the Docker daemon. The only module that imports ``docker``.

Everything above it speaks in domain terms (:class:`ContainerSpec`,
:class:`ContainerOutcome`, :class:`ImageInfo`); everything here speaks HTTP to
the engine through the Docker SDK. Builds use the low-level API so the classic
builder works (Debian's docker.io 20.10 has no buildx).
"""

from __future__ import annotations

import functools
import io
import os
import tarfile
import threading
import time
from typing import Callable, Mapping, Sequence

import docker
import docker.constants
import docker.errors
import requests.exceptions
import urllib3.exceptions
from docker.types import DeviceRequest, LogConfig

from gpumatrix.engine.models import (
    LABEL_NS,
    MANAGED_LABEL,
    ContainerInfo,
    ContainerOutcome,
    ContainerSpec,
    DeviceRequestSpec,
    EngineInfo,
    ImageInfo,
    Mount,
)
from gpumatrix.errors import BuildError, EngineUnavailable, GpumatrixError

__all__ = ["LABEL_NS", "MANAGED_LABEL", "ContainerInfo", "ContainerOutcome", "ContainerSpec", "DeviceRequestSpec",
           "Engine", "EngineConnectionLost", "EngineInfo", "EngineOperationError", "ImageInfo", "Mount",
           "engine_info_from_payloads", "tar_context"]


class EngineOperationError(GpumatrixError):
    """The engine refused or failed an operation (pull, create, start …). ``reason`` is its message."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


class EngineConnectionLost(EngineOperationError):
    """The engine stopped answering mid-operation (restarted, crashed, socket gone)."""


def _engine_op(what: str) -> Callable:
    """Turn a lost connection during ``what`` into :class:`EngineConnectionLost`, so a cell fails, not the run."""
    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except requests.exceptions.ConnectionError as err:
                raise EngineConnectionLost(f"lost the connection to the Docker engine while {what}: {err}") from err
        return inner
    return wrap


def _reason(err: Exception) -> str:
    explanation = getattr(err, "explanation", None)
    if explanation:
        return explanation.decode() if isinstance(explanation, bytes) else str(explanation)
    return str(err)


def _unreachable(target: str, why: str) -> EngineUnavailable:
    return EngineUnavailable(
        f"cannot reach the Docker engine at {target}: {why}\n"
        "  fix: start it (e.g. 'sudo systemctl start docker'), or point DOCKER_HOST at a running engine;\n"
        "  for development on a machine without one, './dev engine' starts a private engine")


class Engine:
    """A connection to one Docker engine."""

    def __init__(self, client: docker.DockerClient, version: Mapping[str, object] | None = None):
        self.client = client
        self.api = client.api
        self._version = version  # the engine's /version answer, when connect() has it already

    # -- connection ---------------------------------------------------------
    @classmethod
    def connect(cls, base_url: str | None = None, timeout: int = 600) -> "Engine":
        """Connect to the engine named by ``base_url``, ``DOCKER_HOST`` or the default socket.

        Asks the engine's ``/version`` once, as docker-py's ``version="auto"`` does to choose the API
        version, and keeps the answer for :meth:`describe` (docker-py's own negotiation drops it, and
        ``/version`` is the slowest call of a warm run: the engine asks containerd and runc for theirs)."""
        target = base_url or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
        client = None
        if target.startswith("unix://") and not os.path.exists(target[len("unix://"):]):
            raise _unreachable(target, "no such socket")

        def client_for(api_version: str) -> docker.DockerClient:
            if base_url:
                return docker.DockerClient(base_url=target, version=api_version, timeout=timeout)
            return docker.from_env(version=api_version, timeout=timeout)

        try:
            client = client_for(docker.constants.MINIMUM_DOCKER_API_VERSION)  # asks nothing yet
            try:
                version = client.api.version(api_version=False)  # the reachability check, too
            except Exception as err:  # noqa: BLE001 - docker-py's words for a failed negotiation
                raise docker.errors.DockerException(f"Error while fetching server API version: {err}") from err
            api_version = version.get("ApiVersion") if isinstance(version, dict) else None
            if not isinstance(api_version, str):
                raise docker.errors.DockerException('Invalid response from docker daemon: key "ApiVersion" is missing.')
            client.close()
            client = None
            client = client_for(api_version)
        except (docker.errors.DockerException, requests.exceptions.RequestException, OSError) as err:
            if client is not None:
                client.close()
            raise _unreachable(target, _reason(err)) from err
        return cls(client, version)

    def close(self) -> None:
        self.client.close()

    def wait_reachable(self, timeout_s: float = 60.0) -> bool:
        """Ping until the engine answers again (after a restart) or ``timeout_s`` passes."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if self.api.ping():
                    return True
            except (docker.errors.DockerException, requests.exceptions.RequestException):
                pass
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.5)

    @_engine_op("asking the engine what it is")
    def describe(self) -> EngineInfo:
        """The engine's version and GPU-relevant facts (one or two round trips; callers keep the result)."""
        return engine_info_from_payloads(self._version if self._version is not None else self.api.version(),
                                         self.api.info())

    # -- images -------------------------------------------------------------
    @_engine_op("inspecting an image")
    def image_info(self, ref: str) -> ImageInfo | None:
        try:
            data = self.api.inspect_image(ref)
        except docker.errors.ImageNotFound:
            return None
        except docker.errors.APIError as err:
            if err.status_code == 404:
                return None
            raise EngineOperationError(f"inspecting image {ref}: {_reason(err)}") from err
        return ImageInfo(id=data["Id"], tags=tuple(data.get("RepoTags") or ()),
                         repo_digests=tuple(data.get("RepoDigests") or ()),
                         labels=dict((data.get("Config") or {}).get("Labels") or {}),
                         size=int(data.get("Size") or 0))

    def pull(self, ref: str) -> ImageInfo:
        """Pull ``ref`` (a tag or digest reference); raise :class:`EngineOperationError` with the engine's reason."""
        repo, tag = _split_ref(ref)
        try:
            for _ in self.api.pull(repo, tag=tag, stream=True, decode=True):
                if "error" in _:
                    raise EngineOperationError(f"pulling {ref}: {_['error']}")
        except (docker.errors.APIError, requests.exceptions.RequestException) as err:
            raise EngineOperationError(f"pulling {ref}: {_reason(err)}") from err
        info = self.image_info(ref)
        if info is None:
            raise EngineOperationError(f"pulling {ref}: the engine reported success but has no such image")
        return info

    def build(self, context: bytes, tag: str, buildargs: Mapping[str, str], labels: Mapping[str, str],
              log: Callable[[str], None], network_mode: str | None = None, timeout_s: float = 7200,
              nocache: bool = False) -> str:
        """Build a tar build context with the classic builder; return the image id.

        Each line of build output goes to ``log``; on failure :class:`BuildError` carries the tail.
        """
        tail: list[str] = []

        def emit(line: str) -> None:
            log(line)
            tail.append(line)
            del tail[:-40]

        try:
            stream = self.api.build(fileobj=io.BytesIO(context), custom_context=True, tag=tag,
                                    buildargs=dict(buildargs), labels=dict(labels), rm=True, forcerm=True,
                                    pull=False, decode=True, network_mode=network_mode, timeout=int(timeout_s),
                                    nocache=nocache)
            image_id = None
            for chunk in stream:
                if "stream" in chunk:
                    for line in str(chunk["stream"]).splitlines():
                        emit(line)
                if "status" in chunk:
                    emit(" ".join(str(chunk[k]) for k in ("id", "status", "progress") if chunk.get(k)))
                if "error" in chunk:
                    emit(f"ERROR: {chunk['error']}")
                    raise BuildError(str(chunk["error"]).strip(), "\n".join(tail))
                if "aux" in chunk and isinstance(chunk["aux"], dict) and "ID" in chunk["aux"]:
                    image_id = chunk["aux"]["ID"]
        except requests.exceptions.ConnectionError as err:
            emit(f"ERROR: lost the connection to the Docker engine: {err}")
            raise BuildError(f"lost the connection to the Docker engine during the build: {err}",
                             "\n".join(tail)) from err
        except (docker.errors.APIError, requests.exceptions.RequestException) as err:
            emit(f"ERROR: {_reason(err)}")
            raise BuildError(f"the engine failed the build: {_reason(err)}", "\n".join(tail)) from err
        info = self.image_info(tag)
        if info is None:
            raise BuildError("the build finished without producing the image", "\n".join(tail))
        return image_id or info.id

    def import_rootfs(self, tar_path: str, repository: str, tag: str, changes: Sequence[str] = ()) -> ImageInfo:
        """``docker import`` a root filesystem tarball as ``repository:tag``."""
        try:
            self.api.import_image(src=tar_path, repository=repository, tag=tag, changes=list(changes))
        except docker.errors.APIError as err:
            raise EngineOperationError(f"importing {tar_path}: {_reason(err)}") from err
        info = self.image_info(f"{repository}:{tag}")
        if info is None:
            raise EngineOperationError(f"importing {tar_path}: no image afterwards")
        return info

    @_engine_op("removing an image")
    def remove_image(self, ref: str, force: bool = True) -> None:
        try:
            self.api.remove_image(ref, force=force)
        except docker.errors.NotFound:
            pass

    @_engine_op("removing an image reference")
    def remove_image_reference(self, ref: str) -> str | None:
        """Remove one name of an image (``repo:tag``, ``repo@sha256:…``) without force.

        The engine deletes the image only when that was its last name and nothing uses it; an image
        with other names is just untagged. Returns None when done (or already gone), else the engine's
        reason it refused (in use by a container, has dependent child images …); never raises for those.
        """
        try:
            self.api.remove_image(ref, force=False)
        except docker.errors.NotFound:
            return None
        except docker.errors.APIError as err:
            return _reason(err)
        return None

    def images_with_label(self, label: str = MANAGED_LABEL) -> list[ImageInfo]:
        """The top-level images (tagged or not) carrying ``label`` (``key`` or ``key=value``)."""
        return self.list_images(label)

    @_engine_op("listing images")
    def list_images(self, label: str | None = None) -> list[ImageInfo]:
        """Every top-level image (tagged, or dangling: no name), or those carrying ``label`` when given."""
        out = []
        for img in self.api.images(filters={"label": label} if label else None):
            out.append(ImageInfo(id=img["Id"], tags=tuple(img.get("RepoTags") or ()),
                                 repo_digests=tuple(img.get("RepoDigests") or ()),
                                 labels=dict(img.get("Labels") or {}), size=int(img.get("Size") or 0)))
        return out

    # -- containers ---------------------------------------------------------
    @_engine_op("listing containers")
    def containers_with_label(self, label: str = MANAGED_LABEL) -> list[ContainerInfo]:
        out = []
        for c in self.api.containers(all=True, filters={"label": label}):
            if not isinstance(c, dict) or not isinstance(c.get("Id"), str):
                continue
            names = c.get("Names") if isinstance(c.get("Names"), list) else []
            created = c.get("Created")
            out.append(ContainerInfo(id=c["Id"], name=str(names[0]).lstrip("/") if names else "",
                                     labels=_str_map(c.get("Labels")), state=str(c.get("State") or ""),
                                     image=str(c.get("Image") or ""),
                                     created=float(created) if isinstance(created, (int, float))
                                     and not isinstance(created, bool) else None))
        return out

    @_engine_op("removing a container")
    def remove_container(self, container_id: str) -> None:
        try:
            self.api.remove_container(container_id, force=True, v=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as err:
            if err.status_code != 409:  # removal already in progress
                raise

    @_engine_op("creating a container")
    def create_container(self, spec: ContainerSpec) -> str:
        """Create (not start) a container; return its id. Used by :meth:`run` and by tests that inspect HostConfig."""
        host_config = self.api.create_host_config(
            # The engine takes a relative source for a named volume, so host paths must be absolute.
            binds={os.path.abspath(m.source): {"bind": m.target, "mode": "ro" if m.read_only else "rw"}
                   for m in spec.mounts},
            devices=list(spec.devices) or None,
            device_requests=[DeviceRequest(driver=d.driver, count=d.count, device_ids=list(d.device_ids) or None,
                                           capabilities=[list(c) for c in d.capabilities])
                             for d in spec.device_requests] or None,
            group_add=list(spec.group_add) or None,
            runtime=spec.runtime,
            shm_size=spec.shm_size,
            ipc_mode=spec.ipc_mode,
            network_mode=spec.network_mode,
            read_only=spec.read_only,
            tmpfs=dict(spec.tmpfs) or None,
            security_opt=list(spec.security_opt) or None,
            cap_drop=list(spec.cap_drop) or None,
            pids_limit=spec.pids_limit,
            mem_limit=spec.mem_limit,
            log_config=LogConfig(type="json-file", config={"max-size": "16m", "max-file": "2"}),
            init=spec.init,
        )
        try:
            created = self.api.create_container(
                image=spec.image, command=list(spec.command), name=spec.name, environment=dict(spec.environment),
                user=spec.user, working_dir=spec.working_dir, labels=dict(spec.labels), host_config=host_config,
                network_disabled=spec.network_mode == "none", detach=True,
            )
        except docker.errors.APIError as err:
            raise EngineOperationError(f"creating the container: {_reason(err)}") from err
        return created["Id"]

    @_engine_op("inspecting a container")
    def inspect_container(self, container_id: str) -> ContainerInfo:
        data = self.api.inspect_container(container_id)
        config = data.get("Config") if isinstance(data.get("Config"), dict) else {}
        state = data.get("State") if isinstance(data.get("State"), dict) else {}
        env = dict(e.split("=", 1) for e in (config.get("Env") or []) if isinstance(e, str) and "=" in e)
        return ContainerInfo(id=str(data.get("Id")), name=str(data.get("Name") or "").lstrip("/"),
                             labels=_str_map(config.get("Labels")), state=str(state.get("Status") or ""),
                             image=str(config.get("Image") or ""), user=str(config.get("User") or ""), env=env,
                             host_config=dict(data.get("HostConfig") or {}))

    @_engine_op("running a container")
    def run(self, spec: ContainerSpec, on_stderr: Callable[[str], None] | None = None) -> ContainerOutcome:
        """Run a container to completion (or its timeout), collect bounded output, and always remove it.

        ``on_stderr`` hears each line of the container's stderr while it runs (from a thread of its own;
        lines are cut at 4 KB, and the output itself is still collected, bounded, at the end)."""
        container_id = self.create_container(spec)
        started = time.monotonic()
        timed_out = False
        try:
            try:
                self.api.start(container_id)
            except docker.errors.APIError as err:
                raise EngineOperationError(f"starting the container: {_reason(err)}") from err
            if on_stderr is not None:
                threading.Thread(target=self._follow_stderr, args=(container_id, on_stderr, spec.output_cap),
                                 name=f"stderr-{container_id[:12]}", daemon=True).start()
            try:
                status = self.api.wait(container_id, timeout=spec.timeout_s)
                exit_code = status.get("StatusCode")
            except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError) as err:
                # docker-py reports its own read timeout as a ConnectionError wrapping urllib3's
                # ReadTimeoutError; anything else is the engine going away.
                if not _is_read_timeout(err):
                    raise
                timed_out = True
                try:
                    self.api.kill(container_id)
                except docker.errors.APIError:
                    pass
                exit_code = None
            duration = time.monotonic() - started
            state = self.api.inspect_container(container_id)
            stdout = self._logs(container_id, stdout=True, cap=spec.output_cap)
            stderr = self._logs(container_id, stdout=False, cap=spec.output_cap)
            return ContainerOutcome(exit_code=exit_code, stdout=stdout, stderr=stderr, timed_out=timed_out,
                                    oom_killed=bool(state.get("State", {}).get("OOMKilled")), duration_s=duration,
                                    host_config=state.get("HostConfig") or {})
        finally:
            self.remove_container(container_id)

    def _follow_stderr(self, container_id: str, on_line: Callable[[str], None], cap: int) -> None:
        """Read a running container's stderr as it comes, a line at a time, until it ends or ``cap`` bytes."""
        pending, seen = b"", 0
        try:
            for chunk in self.api.logs(container_id, stdout=False, stderr=True, stream=True, follow=True):
                seen += len(chunk)
                pending += chunk
                *whole, pending = pending.split(b"\n")
                for line in whole:
                    on_line(line[:4096].decode("utf-8", errors="replace"))
                if len(pending) > 4096:  # a line that never ends is not a progress line
                    pending = b""
                if seen > cap:
                    break
        except Exception:  # noqa: BLE001 - progress is optional: the container's outcome is read apart
            return

    def _logs(self, container_id: str, stdout: bool, cap: int) -> bytes:
        """At most ``cap`` bytes of a container's stdout or stderr (its output is untrusted and may be huge).

        The json-file log driver is capped at 2 × 16 MB per container (see :meth:`create_container`), so
        reading it whole is bounded; streaming would leave docker-py's socket open when cut short.
        """
        data = self.api.logs(container_id, stdout=stdout, stderr=not stdout, stream=False, follow=False)
        return bytes(data[:cap])

    # -- registries (fleet: build once, push, pull by digest elsewhere) -----
    # Credentials are the engine user's own, as with the docker CLI: docker-py reads
    # ~/.docker/config.json (or $DOCKER_CONFIG), credential helpers included, so 'docker login'
    # is all a registry needs. The config is re-read per call so a login made after connecting counts.
    def _auth(self, auth_config: Mapping[str, str] | None) -> dict | None:
        if auth_config is not None:
            return dict(auth_config)
        try:
            self.api.reload_config()
        except (OSError, ValueError, docker.errors.DockerException):
            pass  # an unreadable config means anonymous access, as with the CLI
        return None

    @_engine_op("tagging an image")
    def tag(self, image: str, ref: str) -> None:
        """Give ``image`` (an id or reference) the reference ``ref`` (``repo:tag``)."""
        if "@" in ref:
            raise EngineOperationError(f"tagging {image} as {ref}: a tag cannot be a digest")
        repo, tag = _split_ref(ref)
        try:
            self.api.tag(image, repo, tag=tag, force=True)
        except docker.errors.APIError as err:
            raise EngineOperationError(f"tagging {image} as {ref}: {_reason(err)}") from err

    def push(self, ref: str, auth_config: Mapping[str, str] | None = None,
             log: Callable[[str], None] | None = None) -> str:
        """Push ``repo:tag``; return the manifest digest (``sha256:…``) the registry stored.

        The digest comes from the push stream's final ``aux`` record; a registry error (denied,
        unauthorized, unreachable) raises :class:`EngineOperationError` with the registry's words.
        """
        repo, tag = _split_ref(ref)
        digest = None
        try:
            stream = self.api.push(repo, tag=tag, stream=True, decode=True, auth_config=self._auth(auth_config))
            for chunk in stream:
                if "error" in chunk or "errorDetail" in chunk:
                    message = (chunk.get("errorDetail") or {}).get("message") or chunk.get("error")
                    raise EngineOperationError(f"pushing {ref}: {str(message).strip()}")
                aux = chunk.get("aux")
                if isinstance(aux, dict) and aux.get("Digest"):
                    digest = str(aux["Digest"])
                if log and chunk.get("status"):
                    log(" ".join(str(chunk[k]) for k in ("id", "status") if chunk.get(k)))
        except (docker.errors.APIError, requests.exceptions.RequestException) as err:
            raise EngineOperationError(f"pushing {ref}: {_reason(err)}") from err
        if not digest:
            raise EngineOperationError(f"pushing {ref}: the engine reported no digest for the pushed manifest")
        return digest

    def registry_digest(self, ref: str, auth_config: Mapping[str, str] | None = None) -> str:
        """The manifest digest a registry holds for ``repo:tag``, asked through the engine (no pull)."""
        try:
            data = self.api.inspect_distribution(ref, auth_config=self._auth(auth_config))
        except (docker.errors.APIError, requests.exceptions.RequestException) as err:
            raise EngineOperationError(f"looking up {ref} in its registry: {_reason(err)}") from err
        digest = (data.get("Descriptor") or {}).get("digest")
        if not digest:
            raise EngineOperationError(f"looking up {ref} in its registry: no digest in the answer")
        return str(digest)

    def pull_by_digest(self, ref: str, auth_config: Mapping[str, str] | None = None,
                       progress: Callable[[str], None] | None = None) -> ImageInfo:
        """Pull ``repo@sha256:…`` and check the engine now has exactly that manifest.

        ``progress`` gets a line now and then (``pulled 1.2 GB of 3.4 GB``), at most every few seconds.
        """
        if "@" not in ref or not ref.split("@", 1)[1].startswith("sha256:"):
            raise EngineOperationError(f"pulling {ref}: not a digest reference (want repo@sha256:…)")
        repo, digest = _split_ref(ref)
        layers: dict[str, tuple[int, int]] = {}
        last = time.monotonic()
        try:
            for chunk in self.api.pull(repo, tag=digest, stream=True, decode=True,
                                       auth_config=self._auth(auth_config)):
                if not isinstance(chunk, dict):
                    continue
                detail = chunk.get("progressDetail")
                if isinstance(detail, dict) and isinstance(chunk.get("id"), str):
                    current, total = detail.get("current"), detail.get("total")
                    if isinstance(current, int) and isinstance(total, int) and total > 0:
                        layers[chunk["id"]] = (min(current, total), total)
                if progress is not None and layers and time.monotonic() - last >= 3.0:
                    last = time.monotonic()
                    done, size = sum(c for c, _ in layers.values()), sum(s for _, s in layers.values())
                    progress(f"pulled {done / 1e9:.2f} GB of {size / 1e9:.2f} GB ({len(layers)} layers)")
                if "error" in chunk or "errorDetail" in chunk:
                    message = (chunk.get("errorDetail") or {}).get("message") or chunk.get("error")
                    raise EngineOperationError(f"pulling {ref}: {str(message).strip()}")
        except (docker.errors.APIError, requests.exceptions.RequestException) as err:
            raise EngineOperationError(f"pulling {ref}: {_reason(err)}") from err
        info = self.image_info(ref)
        if info is None or ref not in info.repo_digests:
            raise EngineOperationError(f"pulling {ref}: the engine has no image with that digest afterwards")
        return info


def _str_map(value: object) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _str_tuple(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, (list, tuple)) else ()


def engine_info_from_payloads(version: object, info: object) -> EngineInfo:
    """:class:`EngineInfo` from the engine's ``/version`` and ``/info`` answers (recorded ones in tests)."""
    version = version if isinstance(version, dict) else {}
    info = info if isinstance(info, dict) else {}

    def text(d: dict, key: str) -> str | None:
        value = d.get(key)
        return str(value) if isinstance(value, (str, int, float)) and value != "" else None

    runtimes = info.get("Runtimes")
    return EngineInfo(
        version=text(version, "Version"), api_version=text(version, "ApiVersion"),
        runtimes=tuple(sorted(str(k) for k in runtimes)) if isinstance(runtimes, dict) else (),
        default_runtime=text(info, "DefaultRuntime"),
        security_options=_str_tuple(info.get("SecurityOptions")),
        operating_system=text(info, "OperatingSystem"),
        # Docker >= 25 lists CDISpecDirs when CDI is enabled (opt-in 25-28.1, default from 28.2).
        cdi_spec_dirs=_str_tuple(info.get("CDISpecDirs")),
        docker_root_dir=text(info, "DockerRootDir"))


def _is_read_timeout(err: Exception) -> bool:
    if isinstance(err, requests.exceptions.ReadTimeout):
        return True
    inner = err.args[0] if err.args else None
    return isinstance(inner, urllib3.exceptions.ReadTimeoutError) or "Read timed out" in str(err)


def _split_ref(ref: str) -> tuple[str, str | None]:
    """``repo:tag`` / ``repo@digest`` → (repo, tag-or-digest) as the pull API wants them."""
    if "@" in ref:
        repo, digest = ref.split("@", 1)
        return repo, digest
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        return ref[:colon], ref[colon + 1:]
    return ref, "latest"


def tar_context(files: Mapping[str, bytes]) -> bytes:
    """A deterministic tar of ``{name: content}`` (mtime 0, sorted), for a build context."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name in sorted(files):
            data = files[name]
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755 if name.endswith(".sh") else 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()

