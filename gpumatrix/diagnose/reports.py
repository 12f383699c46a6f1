"""Pasted reports are facts: recognise tool output in a log and turn it into facts.

Recognised: ``python -m torch.utils.collect_env``, ``nvidia-smi`` (plain and ``-q``),
``rocminfo``, ``rocm-smi``/``amd-smi``, ``docker info``, ``docker run`` errors, and pip's and
apt's failures in build logs. Every parser reads the capped, cleaned lines once, line by
line, with bounded patterns only, so hostile input (huge, malformed, binary) costs linear
time and never raises. A parser that does not recognise its report returns ``{}``.

The facts use the names declared in :mod:`gpumatrix.diagnose.vocabulary`.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable

Facts = dict[str, Any]

_NONE_WORDS = {"none", "n/a", "could not collect", "no cuda", ""}

# ---------------------------------------------------------------- torch.utils.collect_env

_CE_FIELD = re.compile(
    r"^[\s>`]{0,8}(PyTorch version|Is debug build|CUDA used to build PyTorch|ROCM used to build PyTorch|"
    r"Is CUDA available|GPU models and configuration|Nvidia driver version|HIP runtime version|"
    r"MIOpen runtime version|CUDA runtime version|OS|Os|Python platform)(?:\s{0,4}[:：]\s{0,8}|\s{1,8})(.{0,300})$",
    re.IGNORECASE)
_CE_GPU_LINE = re.compile(r"^[\s>]{0,8}(GPU \d{1,3}\s{0,2}[:：].{1,200})$")
_GFX = re.compile(r"\b(gfx[0-9a-f]{3,5})\b", re.IGNORECASE)
_NVIDIA_NAME = re.compile(r"NVIDIA|GeForce|Tesla|Quadro|TITAN|\bRTX\b|\bGTX\b", re.IGNORECASE)
_AMD_NAME = re.compile(r"\bAMD\b|Radeon|Instinct|\bgfx[0-9a-f]{3,5}", re.IGNORECASE)
_XY = re.compile(r"^(\d{1,2})\.(\d{1,2})")
_DRIVER = re.compile(r"^(\d{2,4}\.\d{1,3}(?:\.\d{1,3})?)\b")
_VARIANT = re.compile(r"\+(cpu|cu\d{2,3}|rocm\d{1,2}(?:\.\d{1,2}){0,2})\b", re.IGNORECASE)


def _xy(value: str) -> str | None:
    found = _XY.match(value.strip())
    return f"{int(found.group(1))}.{int(found.group(2))}" if found else None


def _before_rocm_line(torch_version: str) -> bool:
    """Whether this torch predates ROCm wheels (< 1.8): then a report with no ROCM line is no ROCm build."""
    found = _XY.match(torch_version.strip())
    return found is not None and (int(found.group(1)), int(found.group(2))) < (1, 8)


def parse_collect_env(lines: list[str]) -> Facts:
    """``python -m torch.utils.collect_env`` output -> facts."""
    fields: dict[str, str] = {}
    gpus: list[str] = []
    in_gpus = False
    for line in lines:
        found = _CE_FIELD.match(line)
        if found:
            key, value = found.group(1).lower(), found.group(2).strip()
            fields.setdefault(key, value)
            in_gpus = key == "gpu models and configuration"
            if in_gpus and value:
                gpus.append(value)
            continue
        if in_gpus:
            gpu_line = _CE_GPU_LINE.match(line)
            if gpu_line:
                gpus.append(gpu_line.group(1))
                continue
            in_gpus = False
    if "pytorch version" not in fields or not ({"cuda used to build pytorch", "is cuda available"} & set(fields)):
        return {}
    facts: Facts = {"report_kinds": ["collect_env"]}
    version = fields["pytorch version"]
    facts["torch_version"] = version
    variant_match = _VARIANT.search(version)
    variant = variant_match.group(1).lower() if variant_match else None
    cuda_field = fields.get("cuda used to build pytorch")
    rocm_field = fields.get("rocm used to build pytorch")
    if cuda_field is not None:
        facts["torch_cuda"] = _xy(cuda_field) if cuda_field.lower() not in _NONE_WORDS else None
    if rocm_field is not None:
        facts["torch_hip"] = _xy(rocm_field) if rocm_field.lower() not in _NONE_WORDS else None
    if variant == "cpu":
        facts["torch_cuda"] = None
        facts["torch_hip"] = None
    elif facts.get("torch_cuda") and "torch_hip" not in facts:
        facts["torch_hip"] = None  # a CUDA build has no HIP
    available = fields.get("is cuda available", "").lower()
    if available in ("true", "yes"):
        facts["torch_cuda_available"] = True
    elif available in ("false", "no"):
        facts["torch_cuda_available"] = False
    real_gpus = [g for g in gpus if g.strip().lower() not in _NONE_WORDS]
    if real_gpus:
        facts["gpu_listed"] = True
        vendors = set()
        for gpu in real_gpus:
            if _NVIDIA_NAME.search(gpu):
                vendors.add("nvidia")
            if _AMD_NAME.search(gpu):
                vendors.add("amd")
            arch = _GFX.search(gpu)
            if arch and "device_arch" not in facts:
                facts["device_arch"] = arch.group(1).lower()
        if vendors:
            facts["host_gpu_vendors"] = sorted(vendors)
    if (cuda_field is not None and "torch_cuda" in facts and facts["torch_cuda"] is None and rocm_field is None
            and variant is None and "rocm" not in version.lower() and facts.get("torch_cuda_available") is not True
            and "amd" not in facts.get("host_gpu_vendors", []) and _before_rocm_line(version)):
        facts["torch_hip"] = None  # no ROCm wheels before torch 1.8, and no ROCM line in their collect_env
    os_field = fields.get("os", "")
    platform = fields.get("python platform", "")
    if "windows" in os_field.lower() or platform.lower().startswith("windows"):
        facts["host_os"] = "windows"
    elif "microsoft-standard" in platform.lower() or "wsl" in platform.lower():
        facts["host_os"] = "wsl"
    elif os_field:
        facts["host_os"] = "linux"
    driver = fields.get("nvidia driver version")
    if driver is not None:
        found_driver = _DRIVER.match(driver)
        if found_driver:
            facts["host_driver_version"] = found_driver.group(1)
        elif driver.lower() in _NONE_WORDS and facts.get("torch_cuda"):
            facts["host_driver_version"] = None
    return facts


# ---------------------------------------------------------------- nvidia-smi

_SMI_HEADER = re.compile(r"NVIDIA-SMI\s{1,8}([\d.]{3,20})\s{1,40}Driver Version:\s{0,8}([\d.]{3,20})"
                         r"(?:\s{1,40}CUDA Version:\s{0,8}([\d.]{2,10}))?")
_SMI_GPU_ROW = re.compile(r"^\|\s{1,6}\d{1,3}\s{1,4}[A-Za-z][^|]{0,60}\s(?:On|Off|WDDM|TCC)\s{0,3}\|")
_SMI_MODE = re.compile(r"(Default|E\. Process|E\. Thread|Prohibited)\s{0,10}\|\s{0,2}$")
_SMIQ_FIELD = re.compile(r"^\s{0,8}(Driver Version|CUDA Version|Attached GPUs|Product Name|Compute Mode)"
                         r"\s{0,60}:\s{0,8}(.{0,120})$")
_MODES = {"default": "default", "e. process": "exclusive_process", "exclusive_process": "exclusive_process",
          "e. thread": "exclusive_thread", "exclusive_thread": "exclusive_thread", "prohibited": "prohibited"}


def parse_nvidia_smi(lines: list[str]) -> Facts:
    """``nvidia-smi`` (the table) and ``nvidia-smi -q`` output -> facts."""
    facts: Facts = {}
    kinds = []
    query: dict[str, str] = {}
    rows = 0
    for line in lines:
        header = _SMI_HEADER.search(line)
        if header and "host_driver_version" not in facts:
            kinds.append("nvidia-smi")
            facts["host_driver_version"] = header.group(2)
            if header.group(3):
                facts["driver_cuda_version"] = header.group(3)
            if header.group(1) != header.group(2):
                facts["host_os"] = "wsl"  # WSL shows the Linux tool version and the Windows driver
            continue
        if "WDDM" in line and "TCC" in line and "NVIDIA-SMI" not in line:
            facts.setdefault("host_os", "windows")
        if _SMI_GPU_ROW.match(line):
            rows += 1
            continue
        mode_match = _SMI_MODE.search(line)
        if mode_match and line.startswith("|"):
            facts.setdefault("compute_mode", _MODES[mode_match.group(1).lower()])
            continue
        field = _SMIQ_FIELD.match(line)
        if field:
            query.setdefault(field.group(1).lower(), field.group(2).strip())
            continue
        if "No devices were found" in line:
            facts["gpu_listed"] = False
    if "driver version" in query and ("attached gpus" in query or "product name" in query):
        kinds.append("nvidia-smi -q")
        driver = _DRIVER.match(query["driver version"])
        if driver:
            facts.setdefault("host_driver_version", driver.group(1))
        cuda = _xy(query.get("cuda version", ""))
        if cuda:
            facts.setdefault("driver_cuda_version", cuda)
        attached = query.get("attached gpus", "")
        if attached.isdigit():
            facts["gpu_listed"] = int(attached) > 0
        mode = query.get("compute mode", "").lower()
        if mode in _MODES:
            facts.setdefault("compute_mode", _MODES[mode])
    if rows:
        facts["gpu_listed"] = True
    if not kinds:
        return {}
    if facts.get("gpu_listed"):
        facts["host_gpu_vendors"] = ["nvidia"]
    facts["report_kinds"] = kinds
    return facts


# ---------------------------------------------------------------- rocminfo, rocm-smi, amd-smi

_ROCK = re.compile(r"ROCk module (?:version [\w.\-]{1,40} )?is (NOT )?loaded")
_ROCMINFO_NAME = re.compile(r"^\s{0,8}Name:\s{1,40}(gfx[0-9a-f]{3,5})\b", re.IGNORECASE)
_ROCM_SMI_GPU = re.compile(r"^\s{0,4}GPU\[(\d{1,3})\]\s{0,8}:")
_ROCM_SMI_ROW = re.compile(r"^\s{0,4}\d{1,3}\s{1,12}(?:\[0x|\d{1,3}(?:\.\d{1,2})?\s?°?c\b|N/A\s)", re.IGNORECASE)
_AMD_SMI_TARGET = re.compile(r"TARGET_GRAPHICS_VERSION:\s{0,8}(gfx[0-9a-f]{3,5})", re.IGNORECASE)
# rocminfo before ROCm 5.5 looked for the module with `lsmod` through popen's shell: where lsmod is missing (a slim
# container), it says "ROCk module is NOT loaded" whatever the host runs, so the line is then no fact
# (ROCm/ROCm-docker#65, #50, #67). Only the shell's own line counts: a user's `bash: lsmod: command not found` says
# nothing of rocminfo 5.5+, which reads /sys/module/amdgpu.
_NO_LSMOD = re.compile(r"^\s{0,4}(?:/bin/)?sh: (?:\d{1,4}: )?lsmod: (?:command )?not found")
_AMD_DRIVER_DOWN = re.compile(r"amdgpu not found in modules|Driver not initialized|Unable to detect any GPU devices, "
                              r"check amdgpu", re.IGNORECASE)


def parse_amd_tools(lines: list[str]) -> Facts:
    """``rocminfo``, ``rocm-smi`` and ``amd-smi`` output -> facts."""
    facts: Facts = {}
    kinds: list[str] = []
    archs: list[str] = []
    smi_gpus = 0
    in_smi_table = False
    lsmod_missing = any(_NO_LSMOD.search(line) for line in lines)  # once per report, not per NOT-loaded line
    for line in lines:
        if in_smi_table:
            if "End of ROCm SMI Log" in line:
                in_smi_table = False
            elif _ROCM_SMI_ROW.match(line):
                smi_gpus += 1
            elif "No AMD GPUs specified" in line:
                facts["gpu_listed"] = False
        rock = _ROCK.search(line)
        if rock:
            if "rocminfo" not in kinds:
                kinds.append("rocminfo")
            if rock.group(1) is None or not lsmod_missing:
                facts["amd_driver_loaded"] = rock.group(1) is None
            continue
        name = _ROCMINFO_NAME.match(line)
        if name:
            archs.append(name.group(1).lower())
            if "rocminfo" not in kinds:
                kinds.append("rocminfo")
            continue
        if "ROCm System Management Interface" in line or _ROCM_SMI_GPU.match(line):
            if "rocm-smi" not in kinds:
                kinds.append("rocm-smi")
            in_smi_table = in_smi_table or "ROCm System Management Interface" in line
            if _ROCM_SMI_GPU.match(line):
                smi_gpus += 1
            arch = _GFX.search(line)
            if arch:
                archs.append(arch.group(1).lower())
            continue
        target = _AMD_SMI_TARGET.search(line)
        if target:
            if "amd-smi" not in kinds:
                kinds.append("amd-smi")
            archs.append(target.group(1).lower())
            continue
        if _AMD_DRIVER_DOWN.search(line):
            if not kinds:
                kinds.append("rocm-smi")
            facts["amd_driver_loaded"] = False
    if not kinds:
        return {}
    if archs and facts.get("amd_driver_loaded") is False:
        # rocminfo listed a GPU agent, which it can only do through a working KFD: the NOT-loaded line came from a
        # module check that failed (lsmod's libkmod dying, ROCm/legacy-rocm-build#1227), so neither is a fact
        del facts["amd_driver_loaded"]
    if archs or smi_gpus:
        facts["gpu_listed"] = True
        facts["host_gpu_vendors"] = ["amd"]
    if archs:
        facts["device_arch"] = archs[0]
    facts["report_kinds"] = kinds
    return facts


# ---------------------------------------------------------------- docker info, docker run

_DOCKER_INFO_FIELD = re.compile(r"^\s{0,4}(Runtimes|Default Runtime|Server Version|Storage Driver):\s{0,4}(.{0,300})$")
_RUNTIME_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,60}")
_CUSTOM_DEVICE = re.compile(r'adding custom device \\{0,2}"([^"\\]{1,200})\\{0,2}"(?:: lstat [^ :]{1,200})?: '
                            r'no such file or directory', re.IGNORECASE)


def parse_docker(lines: list[str]) -> Facts:
    """``docker info`` and the engine's errors from ``docker run`` -> facts."""
    facts: Facts = {}
    kinds: list[str] = []
    info: dict[str, str] = {}
    missing: list[str] = []
    for line in lines:
        field = _DOCKER_INFO_FIELD.match(line)
        if field:
            info.setdefault(field.group(1).lower(), field.group(2).strip())
            continue
        device = _CUSTOM_DEVICE.search(line)
        if device and device.group(1) not in missing:
            missing.append(device.group(1))
    if "runtimes" in info and ({"server version", "storage driver", "default runtime"} & set(info)):
        kinds.append("docker info")
        facts["engine_runtimes"] = _RUNTIME_NAME.findall(info["runtimes"])[:20]
        if info.get("default runtime"):
            facts["engine_default_runtime"] = info["default runtime"].split()[0]
    if missing:
        kinds.append("docker run")
        facts["host_missing_devices"] = missing
        if "/dev/kfd" in missing:
            facts["dev_kfd_present"] = False
    if kinds:
        facts["report_kinds"] = kinds
    return facts


# ---------------------------------------------------------------- pip

# pip says both "Could not find a version that satisfies the requirement R" and "No matching
# distribution found for R"; a pasted log often keeps only one of them.
_PIP_NO_MATCH = re.compile(r"(?:No matching distribution found for|satisfies the requirement) "
                           r"([A-Za-z0-9][A-Za-z0-9_.\-]{0,80})"
                           r"(?:\[[^\]]{0,80}\])? ?(?:(===|==|>=|<=|~=|!=|>|<) ?([A-Za-z0-9_.+!*\-]{1,60}))?")
# "(from versions: ...)" may follow pip's note on where the requirement came from, e.g.
# "(from -r requirements.txt (line 4))".
_PIP_FROM_VERSIONS = re.compile(r"satisfies the requirement [^ ]{1,200} ?"
                                r"(?:\(from (?!versions)[^()]{0,200}(?:\([^()]{0,40}\))?[^()]{0,40}\) ?)?"
                                r"\(from versions: ([^)]{0,4000})\)")
_PIP_INDEXES = re.compile(r"Looking in (?:indexes|links): (.{1,1000})$")
_PIP_MARKER = re.compile(r"Retrying \(Retry\(|pip\._vendor|Could not fetch URL|No matching distribution|"
                         r"Could not find a version that satisfies|"
                         r"Looking in (?:indexes|links)|ERROR: Exception:|Could not install packages")
_PIP_NETWORK = re.compile(
    r"Failed to establish a new connection|Temporary failure in name resolution|Network is unreachable|"
    r"getaddrinfo failed|Name or service not known|ConnectTimeoutError|ReadTimeoutError|ProxyError|"
    r"SSLError|CERTIFICATE_VERIFY_FAILED|Connection broken|ConnectionResetError|IncompleteRead|"
    r"Could not fetch URL|HTTP 000 CONNECTION FAILED|Max retries exceeded")
_PIP_HOST = re.compile(r"Connection to ([A-Za-z0-9.\-]{1,100}) timed out|host='([A-Za-z0-9.\-]{1,100})'|"
                       r"Could not fetch URL https?://([A-Za-z0-9.\-]{1,100})|"
                       r"CONNECTION FAILED for url <https?://([A-Za-z0-9.\-]{1,100})")
_URL_HOST = re.compile(r"https?://([A-Za-z0-9.\-]{1,100})")
_URL_VARIANT = re.compile(r"/whl/(?:nightly/|test/)?(cpu|cu\d{2,3}|rocm\d{1,2}(?:\.\d{1,2}){0,2})\b",
                          re.IGNORECASE)
_PYTHON = re.compile(r"\bcp3(\d{1,2})\b|Python (3\.\d{1,2})\b|python(3\.\d{1,2})/", re.IGNORECASE)


def _pip_detail(name: str, version: str | None, variant: str | None, python: str | None,
                offered: list[str] | None, indexes: list[str]) -> tuple[str, str]:
    """(pip_failure, pip_detail) for a requirement no index served, from torch_releases.yaml."""
    from gpumatrix.knowledge.releases import torch_release

    base = version.split("+", 1)[0] if version else None
    pytorch_index = any("download.pytorch.org" in url for url in indexes)
    if name.lower() == "torch" and base:
        release = torch_release(base)
        if release:
            variants = [str(v) for v in (release.get("variants") or [])]
            variants += [str(v) for v in (release.get("unlisted_variants") or []) + (release.get("rocm_guess") or [])]
            pythons = [str(p) for p in release.get("python") or []]
            if variant and variant not in variants:
                return "variant_missing", (f"torch {base} has no {variant} wheel; its variants are "
                                           f"{', '.join(variants)}")
            if python and pythons and python not in pythons:
                return "python_missing", (f"torch {base} has wheels for Python {', '.join(pythons)}, "
                                          f"not {python}")
            if variant and not pytorch_index:
                return "variant_missing", (f"torch {version} is a local version that only "
                                           f"download.pytorch.org/whl/{variant} serves")
            return "no_wheel", (f"torch {base} exists (variants {', '.join(variants)}; Python "
                                f"{', '.join(pythons)}) but no index offered a wheel for this platform/Python")
    if variant and not pytorch_index:
        return "variant_missing", (f"{name} {version} is a local version ({variant}) that PyPI never serves; "
                                   f"only download.pytorch.org/whl/{variant} has such wheels")
    if offered is not None and base and offered and base not in offered:
        shown = ", ".join(offered[:3] + (["…"] if len(offered) > 6 else []) + offered[-3:]) \
            if len(offered) > 6 else ", ".join(offered)
        return "version_missing", f"{name} {base} is not offered here; the index offers {shown}"
    if offered == []:
        return "no_wheel", f"the index offers no {name} wheel at all for this platform/Python (from versions: none)"
    return "no_wheel", f"no index offered a distribution of {name}{'==' + version if version else ''}"


def parse_pip(lines: list[str]) -> Facts:
    """pip's failures (``No matching distribution found``, retries, broken downloads) -> facts."""
    if not any(_PIP_MARKER.search(line) for line in lines):
        return {}
    requirement = None
    offered: list[str] | None = None
    indexes: list[str] = []
    network = False
    host = None
    python = None
    for line in lines:
        found = _PIP_NO_MATCH.search(line)
        if found and requirement is None:
            requirement = (found.group(1), found.group(3))
        versions = _PIP_FROM_VERSIONS.search(line)
        if versions and offered is None:
            text = versions.group(1).strip()
            offered = [] if text.lower() == "none" else [v.strip() for v in text.split(",") if v.strip()][:2000]
        listed = _PIP_INDEXES.search(line)
        if listed:
            indexes += [u.strip() for u in listed.group(1).split(",") if u.strip()][:10]
        if _PIP_NETWORK.search(line):
            network = True
            named = _PIP_HOST.search(line)
            if named and host is None:
                host = next(g for g in named.groups() if g)
        py = _PYTHON.search(line)
        if py and python is None:
            python = f"3.{py.group(1)}" if py.group(1) else (py.group(2) or py.group(3))
    facts: Facts = {"report_kinds": ["pip"]}
    if indexes:
        facts["pip_indexes"] = indexes
    if network:
        if host is None:
            hosts = [h for h in (_URL_HOST.search(u) for u in indexes) if h]
            host = next((h.group(1) for h in hosts if "pypi.org" not in h.group(1)),
                        hosts[0].group(1) if hosts else "the package index")
        facts["pip_failure"] = "index_unreachable"
        facts["pip_unreachable_host"] = host
    if requirement:
        name, version = requirement
        facts["pip_requirement"] = f"{name}=={version}" if version else name
        if not network:
            variant = None
            if version and "+" in version:
                variant = version.split("+", 1)[1].lower()
            else:
                url_variant = next((v for v in (_URL_VARIANT.search(u) for u in indexes) if v), None)
                variant = url_variant.group(1).lower() if url_variant else None
            failure, detail = _pip_detail(name, version, variant, python, offered, indexes)
            facts["pip_failure"] = failure
            facts["pip_detail"] = detail
    if len(facts) == 1:
        return {}
    return facts


# ---------------------------------------------------------------- apt

# apt's "Could not connect to" / "Unable to connect to" name a host with a dot or a host and its port
# (archive.ubuntu.com:80, aptproxy:3142); other programs' sentences ("to host engine", "to the endpoint URL") do not.
_APT_HOST = r"([A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63}){1,8}|[A-Za-z0-9\-]{1,63}(?=:[0-9a-z]))"
_APT_UNREACHABLE = re.compile(r"Temporary failure resolving '([^']{1,100})'|Could not resolve '([^']{1,100})'|"
                              rf"Could not connect to {_APT_HOST}|Unable to connect to "
                              rf"{_APT_HOST}|Failed to fetch https?://([A-Za-z0-9.\-]{{1,100}})[^ ]{{0,300}}"
                              r"\s{1,4}(?:Could not|Connection|Temporary)")
# A repository apt refuses because no key in the image verifies it. The host is on the line of the
# message, or (NO_PUBKEY, EXPKEYSIG or KEYEXPIRED on its own line) on the "Err:N URL" line before it.
_APT_UNTRUSTED = re.compile(r"GPG error: https?://([A-Za-z0-9.\-]{1,100})|"
                            r"The repository '[a-z]{2,8}://([A-Za-z0-9.\-]{1,100})[^']{0,300}' is not signed")
_APT_KEY_MISSING = re.compile(r"NO_PUBKEY [0-9A-Fa-f]{8,40}|EXPKEYSIG [0-9A-Fa-f]{8,40}|KEYEXPIRED \d{6,12}")
_APT_ERR_HOST = re.compile(r"^\s{0,8}(?:Err|Ign|Get|Hit):\d{1,4} https?://([A-Za-z0-9.\-]{1,100})")
_APT_MISSING = re.compile(r"E: Unable to locate package ([^\s]{1,100})|E: Package '([^']{1,100})' has no "
                          r"installation candidate|E: Version '[^']{1,60}' for '([^']{1,100})' was not found|"
                          r"Can't select candidate version from package ([^\s]{1,100}) as it has no candidate")


def parse_apt(lines: list[str]) -> Facts:
    """apt-get's failures -> facts."""
    host = None
    untrusted = None
    last_repo = None
    missing: list[str] = []
    for line in lines:
        unreachable = _APT_UNREACHABLE.search(line)
        if unreachable and host is None:
            host = next(g for g in unreachable.groups() if g)
        repo = _APT_ERR_HOST.search(line)
        if repo:
            last_repo = repo.group(1)
        refused = _APT_UNTRUSTED.search(line)
        if refused and untrusted is None:
            untrusted = next(g for g in refused.groups() if g)
        elif untrusted is None and _APT_KEY_MISSING.search(line):
            untrusted = last_repo or "an apt repository"
        found = _APT_MISSING.search(line)
        if found:
            package = next(g for g in found.groups() if g)
            if package not in missing and len(missing) < 20:
                missing.append(package)
    facts: Facts = {}
    if host:
        facts["apt_unreachable_host"] = host
    if untrusted:
        facts["apt_untrusted_host"] = untrusted
    if missing:
        facts["apt_missing_packages"] = missing
    if facts:
        facts["report_kinds"] = ["apt"]
    return facts


# ---------------------------------------------------------------- all together

PARSERS: tuple[Callable[[list[str]], Facts], ...] = (
    parse_collect_env, parse_nvidia_smi, parse_amd_tools, parse_docker, parse_pip, parse_apt)


# A parser only runs when one of its words occurs in the text at all (lower case): a log that
# holds no report costs one substring scan per parser instead of a pass of patterns per line.
TRIGGERS: dict[Callable[[list[str]], Facts], tuple[str, ...]] = {
    parse_collect_env: ("pytorch version",),
    parse_nvidia_smi: ("nvidia-smi", "driver version", "no devices were found"),
    parse_amd_tools: ("rock module", "name:", "rocm system management", "gpu[", "target_graphics_version",
                      "amdgpu not found", "driver not initialized", "unable to detect any gpu"),
    parse_docker: ("runtimes:", "custom device"),
    parse_pip: ("retrying (retry(", "pip._vendor", "could not fetch url", "no matching distribution",
                "could not find a version that satisfies",
                "looking in", "error: exception:", "could not install packages"),
    parse_apt: ("temporary failure resolving", "could not resolve", "could not connect", "unable to connect",
                "failed to fetch", "unable to locate package", "installation candidate", "select candidate",
                "no_pubkey", "expkeysig", "keyexpired", "is not signed", "gpg error"),
}


def facts_from_reports(lines: list[str], parsers: Iterable[Callable[[list[str]], Facts]] = PARSERS) -> Facts:
    """Every fact the recognised reports in ``lines`` state; later parsers never overwrite earlier ones,
    except that lists (vendors, report kinds) are merged and a listed GPU wins over "none listed"."""
    merged: Facts = {}
    text = "\n".join(lines).lower()
    for parse in parsers:
        if parse in TRIGGERS and not any(word in text for word in TRIGGERS[parse]):
            continue
        for key, value in parse(lines).items():
            if key in ("host_gpu_vendors", "report_kinds") and key in merged:
                merged[key] = sorted(set(merged[key]) | set(value)) if key == "host_gpu_vendors" \
                    else merged[key] + [v for v in value if v not in merged[key]]
            elif key == "gpu_listed" and key in merged:
                merged[key] = bool(merged[key] or value)
            elif key == "host_driver_version" and merged.get(key) is None and value is not None:
                merged[key] = value  # nvidia-smi's version beats collect_env's "Could not collect"
            else:
                merged.setdefault(key, value)
    return merged

