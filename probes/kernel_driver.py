"""Layer 1, kernel_driver: device nodes, kernel driver versions, device-node groups.

No torch and no GPU libraries: only the filesystem. Without GPU device nodes these
probes skip, unless ``GPUMATRIX_EXPECT`` names the vendor, in which case absence fails.
The filesystem roots are parameters so the checks can be tested on a fake tree.

A node that exists and opens is not yet the driver's node: a placeholder made with
``mknod`` (or ``/dev/null`` bind-mounted as ``/dev/kfd``) opens fine. So each node's
type and major number are checked against the majors the kernel has registered in
``/proc/devices`` (which containers share with the host): ``kfd`` for ``/dev/kfd``,
``drm`` for render nodes, ``nvidia*`` for NVIDIA nodes.
"""

import errno
import glob
import grp
import os
import re
import stat
from typing import Any, Dict, List, Optional

from .model import NEEDS_NOTHING, Outcome, Probe, failed, passed, skipped

AMD_PCI_VENDOR = "0x1002"


def _number_suffix(path: str) -> int:
    match = re.search(r"(\d+)$", path)
    return int(match.group(1)) if match else -1


def nvidia_nodes(dev_root: str = "/dev") -> Dict[str, Any]:
    """NVIDIA device nodes that exist: control, per-GPU, and unified memory."""
    def present(name: str) -> Optional[str]:
        path = os.path.join(dev_root, name)
        return path if os.path.exists(path) else None

    return {
        "control": present("nvidiactl"),
        "gpus": sorted(glob.glob(os.path.join(dev_root, "nvidia[0-9]*")), key=_number_suffix),
        "uvm": present("nvidia-uvm"),
        "uvm_tools": present("nvidia-uvm-tools"),
    }


def amd_nodes(dev_root: str = "/dev", sys_root: str = "/sys") -> Dict[str, Any]:
    """AMD device nodes: /dev/kfd and the render nodes of AMD GPUs.

    Render nodes also exist for other GPUs (an Intel iGPU on a CPU box), so each one's
    PCI vendor is checked in sysfs when sysfs says anything.
    """
    renders = []
    for path in sorted(glob.glob(os.path.join(dev_root, "dri", "renderD*")), key=_number_suffix):
        vendor_file = os.path.join(sys_root, "class", "drm", os.path.basename(path), "device", "vendor")
        try:
            with open(vendor_file) as handle:
                vendor = handle.read().strip().lower()  # type: Optional[str]
        except OSError:
            vendor = None
        if vendor is None or vendor == AMD_PCI_VENDOR:
            renders.append(path)
    kfd = os.path.join(dev_root, "kfd")
    return {"kfd": kfd if os.path.exists(kfd) else None, "renders": renders}


def gpu_device_nodes(dev_root: str = "/dev") -> List[str]:
    """Every GPU device node in ``dev_root``, sorted: NVIDIA's (control, per-GPU, unified memory),
    ``/dev/kfd`` and the DRM render nodes. Inside a container this is what the engine passed in,
    which the host's view cannot say (the diagnosis reads it as ``container_device_nodes``)."""
    nodes = nvidia_nodes(dev_root)
    found = [path for path in (nodes["control"], nodes["uvm"], nodes["uvm_tools"]) if path] + nodes["gpus"]
    kfd = os.path.join(dev_root, "kfd")
    if os.path.exists(kfd):
        found.append(kfd)
    found.extend(glob.glob(os.path.join(dev_root, "dri", "renderD*")))
    return sorted(found)


def try_open(path: str) -> Dict[str, Any]:
    """Open a device node read-write, as the user-mode driver will, and close it."""
    try:
        fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0) | os.O_NONBLOCK)
    except OSError as err:
        code = errno.errorcode.get(err.errno, str(err.errno))
        return {"path": path, "openable": False, "error": "%s: %s" % (code, err.strerror)}
    os.close(fd)
    return {"path": path, "openable": True}


def char_majors(proc_root: str = "/proc") -> Optional[Dict[int, str]]:
    """Character-device majors the kernel has registered (``/proc/devices``): {major: driver}.

    None when the file cannot be read or lists nothing (then nodes are not judged by major).
    """
    try:
        with open(os.path.join(proc_root, "devices")) as handle:
            text = handle.read()
    except OSError:
        return None
    majors = {}  # type: Dict[int, str]
    for line in text.split("Block devices:")[0].splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and parts[0].isdigit():
            majors[int(parts[0])] = parts[1].strip()
    return majors or None


def _node_type(mode: int) -> str:
    for test, name in ((stat.S_ISCHR, "char"), (stat.S_ISBLK, "block"), (stat.S_ISDIR, "directory"),
                       (stat.S_ISREG, "regular file"), (stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket")):
        if test(mode):
            return name
    return "other"


def node_identity(path: str, majors: Optional[Dict[int, str]]) -> Dict[str, Any]:
    """What ``path`` is: its type, and for a character device its major:minor and the
    driver that registered that major (None when no driver has, or when unknown)."""
    try:
        info = os.stat(path)
    except OSError as err:
        return {"path": path, "type": None, "error": err.strerror}
    identity = {"path": path, "type": _node_type(info.st_mode)}  # type: Dict[str, Any]
    if identity["type"] == "char":
        major, minor = os.major(info.st_rdev), os.minor(info.st_rdev)
        identity.update(major=major, minor=minor, driver=majors.get(major) if majors else None)
    return identity


def identity_problem(identity: Dict[str, Any], wanted: str, majors: Optional[Dict[int, str]],
                     prefix: bool = False, openable: bool = False) -> Optional[str]:
    """Why the node is not the ``wanted`` driver's device (None when it is, or when
    ``/proc/devices`` cannot tell). ``prefix``: the driver name only has to start with ``wanted``.

    A major that no driver registered is only held against a node that also fails to open:
    sandboxes that emulate a device (gVisor's nvproxy) may not list it in ``/proc/devices``.
    """
    path, kind = identity["path"], identity.get("type")
    if kind is None:
        return None  # vanished between listing and stat; the open check reports it
    if kind != "char":
        return "%s is a %s, not a character device" % (path, kind)
    if not majors:
        return None
    driver = identity.get("driver")
    numbers = "char %d:%d" % (identity["major"], identity["minor"])
    if driver is None:
        if openable:
            return None
        return "%s is %s, a major no kernel driver has registered (/proc/devices): a stale or placeholder node" % (
            path, numbers)
    if driver == wanted or (prefix and driver.startswith(wanted)):
        return None
    return "%s is %s, which the kernel registered as '%s', not '%s': a placeholder, not the driver's node" % (
        path, numbers, driver, wanted)


def _missing_outcome(vendor: str, expect: Optional[str], what: str) -> Outcome:
    if expect == vendor:
        return failed("GPUMATRIX_EXPECT=%s but %s" % (vendor, what))
    return skipped("no %s GPU: %s" % ("NVIDIA" if vendor == "nvidia" else "AMD", what))


def check_nvidia_nodes(dev_root: str = "/dev", expect: Optional[str] = None, proc_root: str = "/proc") -> Outcome:
    nodes = nvidia_nodes(dev_root)
    if not nodes["control"] and not nodes["gpus"]:
        return _missing_outcome("nvidia", expect, "no /dev/nvidiactl or /dev/nvidia<N>")
    problems = []
    if not nodes["control"]:
        problems.append("/dev/nvidiactl missing")
    if not nodes["gpus"]:
        problems.append("no /dev/nvidia<N> node")
    if not nodes["uvm"]:
        problems.append("/dev/nvidia-uvm missing (CUDA needs it; load nvidia-uvm on the host)")
    paths = [p for p in [nodes["control"], nodes["uvm"]] + nodes["gpus"] if p]
    majors = char_majors(proc_root)
    identities = [node_identity(p, majors) for p in paths]
    opened = [try_open(p) for p in paths]
    problems.extend(filter(None, (identity_problem(i, "nvidia", majors, prefix=True, openable=o["openable"])
                                  for i, o in zip(identities, opened))))
    problems.extend("%s not openable (%s)" % (o["path"], o["error"]) for o in opened if not o["openable"])
    details = {"nodes": nodes, "identity": identities, "open": opened}
    if problems:
        return failed("; ".join(problems), **details)
    return passed("%d GPU node(s), nvidiactl and nvidia-uvm openable" % len(nodes["gpus"]), **details)


def check_amd_nodes(dev_root: str = "/dev", sys_root: str = "/sys", expect: Optional[str] = None,
                    proc_root: str = "/proc") -> Outcome:
    nodes = amd_nodes(dev_root, sys_root)
    if not nodes["kfd"] and not (expect == "amd" and nodes["renders"]):
        return _missing_outcome("amd", expect, "no /dev/kfd")
    problems = []
    if not nodes["kfd"]:
        problems.append("/dev/kfd missing")
    if not nodes["renders"]:
        problems.append("no AMD /dev/dri/renderD<N> node")
    paths = ([nodes["kfd"]] if nodes["kfd"] else []) + nodes["renders"]
    majors = char_majors(proc_root)
    identities = [node_identity(p, majors) for p in paths]
    opened = [try_open(p) for p in paths]
    problems.extend(filter(None, (identity_problem(i, "kfd" if i["path"] == nodes["kfd"] else "drm", majors,
                                                   openable=o["openable"]) for i, o in zip(identities, opened))))
    problems.extend("%s not openable (%s)" % (o["path"], o["error"]) for o in opened if not o["openable"])
    details = {"nodes": nodes, "identity": identities, "open": opened}
    if problems:
        return failed("; ".join(problems), **details)
    return passed("/dev/kfd and %d render node(s) openable" % len(nodes["renders"]), **details)


def check_nvidia_driver(proc_root: str = "/proc", dev_root: str = "/dev", expect: Optional[str] = None) -> Outcome:
    from .facts import nvidia_driver_version, read_text

    text = read_text(os.path.join(proc_root, "driver", "nvidia", "version"))
    if text is None:
        nodes = nvidia_nodes(dev_root)
        if nodes["control"] or nodes["gpus"]:
            return failed("NVIDIA device nodes exist but /proc/driver/nvidia/version does not", nodes=nodes)
        return _missing_outcome("nvidia", expect, "no /proc/driver/nvidia/version")
    version = nvidia_driver_version(text)
    if version is None:
        return failed("cannot parse /proc/driver/nvidia/version", text=text[:500])
    return passed("NVIDIA kernel module %s" % version, version=version, proc_version=text.strip().splitlines()[0])


def gfx_name(target_version: int) -> Optional[str]:
    """KFD's gfx_target_version (major*10000 + minor*100 + stepping) as "gfx90a"; None for CPUs."""
    if target_version <= 0:
        return None
    major, rest = divmod(target_version, 10000)
    minor, stepping = divmod(rest, 100)
    return "gfx%d%x%x" % (major, minor, stepping)


_KFD_FIELDS = ("simd_count", "cpu_cores_count", "vendor_id", "device_id", "unique_id", "drm_render_minor",
               "location_id", "domain", "num_xcc")


def kfd_gpus(sys_root: str = "/sys") -> List[Dict[str, Any]]:
    """GPU nodes in the KFD topology, with their real gfx target (what the hardware is,
    whatever ``HSA_OVERRIDE_GFX_VERSION`` says) and whether each is an APU/iGPU (a node
    with CPU cores and SIMDs)."""
    gpus = []
    pattern = os.path.join(sys_root, "class", "kfd", "kfd", "topology", "nodes", "*", "properties")
    for path in sorted(glob.glob(pattern), key=lambda p: _number_suffix(os.path.dirname(p))):
        try:
            with open(path) as handle:
                props = dict(line.split(None, 1) for line in handle.read().splitlines() if " " in line)
        except (OSError, ValueError):
            continue
        try:
            target = int(props.get("gfx_target_version", "0").strip())
        except ValueError:
            continue
        name = gfx_name(target)
        if name:
            entry = {"node": _number_suffix(os.path.dirname(path)), "gfx": name}  # type: Dict[str, Any]
            for field in _KFD_FIELDS:
                value = props.get(field, "").strip()
                if value.isdigit():
                    entry[field] = int(value)
            entry["integrated"] = entry.get("cpu_cores_count", 0) > 0
            gpus.append(entry)
    return gpus


def check_amd_driver(sys_root: str = "/sys", dev_root: str = "/dev", expect: Optional[str] = None) -> Outcome:
    module = os.path.join(sys_root, "module", "amdgpu")
    if not os.path.isdir(module):
        if amd_nodes(dev_root, sys_root)["kfd"]:
            return failed("/dev/kfd exists but the amdgpu module is not visible in %s/module" % sys_root)
        return _missing_outcome("amd", expect, "amdgpu kernel module not loaded")
    try:
        with open(os.path.join(module, "version")) as handle:
            version = handle.read().strip()  # type: Optional[str]
    except OSError:
        version = None  # the in-tree amdgpu has no version file
    gpus = kfd_gpus(sys_root)
    label = version or "in-tree (no version file)"
    details = {"version": version, "kfd_gpus": gpus}
    if not gpus:
        message = "amdgpu %s is loaded but the KFD topology has no GPU node" % label
        if expect == "amd" or amd_nodes(dev_root, sys_root)["kfd"]:
            return failed(message + " (no GPU for ROCm to use)", **details)
        return skipped(message, **details)
    summary = ", ".join("%s%s" % (g["gfx"], " (integrated)" if g["integrated"] else "") for g in gpus)
    return passed("amdgpu %s, %d KFD GPU node(s): %s" % (label, len(gpus), summary), **details)


def node_permissions(path: str) -> Dict[str, Any]:
    info = os.stat(path)
    try:
        group = grp.getgrgid(info.st_gid).gr_name  # type: Optional[str]
    except KeyError:
        group = None
    groups = set(os.getgroups()) | {os.getegid()}
    return {
        "path": path,
        "mode": stat.filemode(info.st_mode),
        "uid": info.st_uid,
        "gid": info.st_gid,
        "group": group,
        "in_group": info.st_gid in groups,
        "access": os.access(path, os.R_OK | os.W_OK),
    }


def check_device_groups(dev_root: str = "/dev", sys_root: str = "/sys", expect: Optional[str] = None) -> Outcome:
    nv = nvidia_nodes(dev_root)
    amd = amd_nodes(dev_root, sys_root)
    paths = [p for p in [nv["control"], nv["uvm"]] + nv["gpus"] + [amd["kfd"]] + (amd["renders"] if amd["kfd"] else []) if p]
    if not paths:
        if expect:
            return failed("GPUMATRIX_EXPECT=%s but there are no GPU device nodes" % expect)
        return skipped("no GPU device nodes")
    nodes = [node_permissions(p) for p in paths]
    denied = [n for n in nodes if not n["access"]]
    details = {"uid": os.geteuid(), "groups": sorted(set(os.getgroups()) | {os.getegid()}), "nodes": nodes}
    if denied:
        hints = sorted(set("%s (gid %d)" % (n["group"] or "?", n["gid"]) for n in denied if not n["in_group"]))
        message = "no read-write permission on %s" % ", ".join(n["path"] for n in denied)
        if hints:
            message += "; the process is not in group(s) %s (docker run --group-add)" % ", ".join(hints)
        return failed(message, **details)
    return passed("read-write permission on %d device node(s)" % len(nodes), **details)


PROBES = [
    Probe("kernel_driver.nvidia_device_nodes", lambda ctx: check_nvidia_nodes(expect=ctx.expect),
          group="kernel_driver", needs=NEEDS_NOTHING, quick=True, timeout_s=30.0),
    Probe("kernel_driver.amd_device_nodes", lambda ctx: check_amd_nodes(expect=ctx.expect),
          group="kernel_driver", needs=NEEDS_NOTHING, quick=True, timeout_s=30.0),
    Probe("kernel_driver.nvidia_driver", lambda ctx: check_nvidia_driver(expect=ctx.expect),
          group="kernel_driver", needs=NEEDS_NOTHING, quick=True, timeout_s=30.0),
    Probe("kernel_driver.amd_driver", lambda ctx: check_amd_driver(expect=ctx.expect),
          group="kernel_driver", needs=NEEDS_NOTHING, quick=True, timeout_s=30.0),
    Probe("kernel_driver.device_groups", lambda ctx: check_device_groups(expect=ctx.expect),
          group="kernel_driver", needs=NEEDS_NOTHING, quick=True, timeout_s=30.0),
]
