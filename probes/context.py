"""What a probe function receives in its child process: torch (imported lazily and
safely), the accelerator torch would use, the device, and the run's settings."""

import os
import warnings
from typing import Any, List, Mapping, Optional, Tuple

from .model import ProbeFailed, ProbeSkipped

EXPECT_ENV = "GPUMATRIX_EXPECT"  # "nvidia" or "amd": the runner promises a GPU of that vendor
PEAKS_ENV = "GPUMATRIX_PEAKS"  # optional JSON file: device name -> peak numbers
VENDORS = ("nvidia", "amd")

_torch_import = None  # type: Optional[Tuple[Any, Optional[str]]]


def expected_vendor(environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The GPU vendor the runner expects (``GPUMATRIX_EXPECT``), or None."""
    environ = os.environ if environ is None else environ
    value = environ.get(EXPECT_ENV, "").strip().lower()
    return value if value in VENDORS else None


def import_torch() -> Tuple[Any, Optional[str]]:
    """Import torch once: ``(module, None)`` or ``(None, "why it failed")``.

    Broken GPU libraries surface as OSError or arbitrary exceptions from extension
    modules; any of them is a finding, not a reason for the suite to stop.
    """
    global _torch_import
    if _torch_import is None:
        try:
            import torch  # noqa: F401  (imported here only, inside a child process)

            _torch_import = (torch, None)
        except Exception as err:  # includes OSError and ImportError
            _torch_import = (None, "%s: %s" % (type(err).__name__, err))
    return _torch_import


def detect_accelerator(torch: Any) -> Tuple[str, List[str]]:
    """What torch would use, "cuda", "rocm" or "cpu", and the warnings it gave on the way."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            available = bool(torch.cuda.is_available())
        except Exception as err:
            available = False
            caught.append(warnings.WarningMessage("%s: %s" % (type(err).__name__, err), RuntimeWarning, "", 0))
    messages = sorted(set(str(w.message).strip() for w in caught))
    if available and getattr(torch.version, "hip", None):
        return "rocm", messages
    if available and getattr(torch.version, "cuda", None):
        return "cuda", messages
    return "cpu", messages


def is_integrated(props: Any) -> bool:
    """Whether a device (torch's device properties) is an integrated GPU (APU / iGPU)."""
    return bool(getattr(props, "is_integrated", False))


def choose_device(torch: Any) -> int:
    """Index of the first discrete device; 0 when all are integrated or none says."""
    try:
        count = int(torch.cuda.device_count())
    except Exception:
        return 0
    for index in range(count):
        try:
            if not is_integrated(torch.cuda.get_device_properties(index)):
                return index
        except Exception:
            continue
    return 0


class ProbeContext:
    """Per-child state shared by the probes of one group."""

    def __init__(self, mode: str, expect: Optional[str] = None, torch: Any = None) -> None:
        self.mode = mode
        self.expect = expect
        self._accelerator = None  # type: Optional[str]
        self._device_index = None  # type: Optional[int]
        self._torch = torch  # tests inject a fake; None imports the real one
        self.init_warnings = []  # type: List[str]
        # Set by programming_interface.arch_list when the build has no code for a device:
        # later GPU probes in this child skip with it instead of failing as launch errors.
        self.arch_problem = None  # type: Optional[str]

    @property
    def torch(self) -> Any:
        if self._torch is not None:
            return self._torch
        torch, error = import_torch()
        if torch is None:
            raise ProbeFailed("torch cannot be imported: %s" % error, import_error=error)
        return torch

    @property
    def accelerator(self) -> str:
        if self._accelerator is None:
            self._accelerator, self.init_warnings = detect_accelerator(self.torch)
        return self._accelerator

    @property
    def on_gpu(self) -> bool:
        return self.accelerator != "cpu"

    @property
    def device_index(self) -> int:
        """The GPU the single-device probes use: the first discrete one (an AMD host may also
        show its APU's iGPU, which is slower and shares host memory), else device 0."""
        if self._device_index is None:
            self._device_index = choose_device(self.torch) if self.on_gpu else 0
            if self._device_index:
                self.torch.cuda.set_device(self._device_index)  # streams and events follow it
        return self._device_index

    @property
    def device(self) -> Any:
        return self.torch.device("cuda", self.device_index) if self.on_gpu else self.torch.device("cpu")

    def require_accelerator(self) -> None:
        """End the probe with "skip" unless torch has a usable GPU."""
        if not self.on_gpu:
            details = {"init_warnings": self.init_warnings} if self.init_warnings else {}
            raise ProbeSkipped("no accelerator", **details)

    def synchronize(self) -> None:
        if self.on_gpu:
            self.torch.cuda.synchronize(self.device_index)

    def gpu_initialized(self) -> bool:
        """Whether this process holds a GPU context (which an error may have poisoned)."""
        torch, _ = (self._torch, None) if self._torch is not None else (
            import_torch() if _torch_import is not None else (None, None))
        if torch is None:
            return False
        try:
            return bool(torch.cuda.is_initialized())
        except Exception:
            return False
