"""Run one GPU program whose libraries ``hide_libraries.sh`` may have hidden: ``python provoke_libraries.py CASE``.

Used for the steps in ``tests/fixtures/device/h200-2026-11-28/libraries-hidden/``.
"""

import sys


def torch_conv():
    import torch
    x = torch.randn(2, 3, 32, 32, device="cuda")
    print(torch.nn.Conv2d(3, 8, 3).cuda()(x).shape)


def torch_matmul():
    import torch
    a = torch.randn(64, 64, device="cuda")
    print((a @ a).sum().item())


def torch_compile():
    import torch
    f = torch.compile(lambda x: torch.sin(x) * 2)
    print(f(torch.randn(16, device="cuda")).sum().item())


def cupy_arch():
    import cupy
    kernel = cupy.RawKernel(r'extern "C" __global__ void k(float* x) { x[threadIdx.x] = 1.0f; }', "k",
                            options=("-arch=sm_100",), backend="nvrtc")
    x = cupy.zeros(32, dtype=cupy.float32)
    kernel((1,), (32,), (x,))
    print(x.sum())


def jax_matmul():
    import jax.numpy as jnp
    a = jnp.ones((64, 64))
    print((a @ a).sum())


CASES = {f.__name__: f for f in (torch_conv, torch_matmul, torch_compile, cupy_arch, jax_matmul)}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        sys.exit("usage: provoke_libraries.py {%s}" % ",".join(CASES))
    CASES[sys.argv[1]]()
