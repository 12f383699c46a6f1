"""Provoke one GPU-stack failure and let the stack print what it prints: ``python provoke.py CASE``.

Each case is the smallest program that reaches one failure on an NVIDIA host with torch, CuPy and JAX
installed. The conditions around it (visibility variables, device nodes, libraries) are set by
``record.sh``; this file only runs the program. Used to make ``tests/diagnosis/recorded/``.
"""

import os
import sys

TOO_MUCH = 200 * 2**30  # bytes: more than any single GPU has


def torch_oom():
    import torch
    torch.empty(TOO_MUCH, dtype=torch.uint8, device="cuda")


def torch_no_gpus():
    import torch
    print("is_available:", torch.cuda.is_available(), flush=True)
    torch.zeros(1, device="cuda")


def torch_bad_ordinal():
    import torch
    torch.zeros(1, device="cuda:%d" % max(torch.cuda.device_count(), 1))


def torch_device_assert():
    import torch
    values = torch.arange(4, device="cuda")
    print(values[torch.tensor([7], device="cuda")].cpu())


def cupy_oom():
    import cupy
    cupy.empty(TOO_MUCH, dtype=cupy.uint8)


def cupy_no_gpus():
    import cupy
    print(cupy.cuda.runtime.getDeviceCount())


def jax_no_gpus():
    import jax
    print(jax.devices())


def jax_oom():
    import jax.numpy as jnp
    print(jnp.ones((TOO_MUCH // 4,), jnp.float32).block_until_ready().shape)


def nccl_rank(rank):
    import torch
    import torch.distributed as dist
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29533")
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=rank, world_size=2, device_id=torch.device("cuda", 0))
    total = torch.ones(1, device="cuda")
    dist.all_reduce(total)
    print(rank, total.item())
    dist.destroy_process_group()


def nccl_same_gpu():
    """Two ranks on one GPU: NCCL refuses a duplicate GPU."""
    import torch.multiprocessing as mp
    mp.spawn(nccl_rank, nprocs=2)


def dataloader_shm():
    """Two workers hand 16 MiB batches through /dev/shm."""
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Ones(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, index):
            return torch.ones(4 * 2**20)

    for batch in DataLoader(Ones(), batch_size=4, num_workers=2):
        print(batch.shape)


CASES = {f.__name__: f for f in (torch_oom, torch_no_gpus, torch_bad_ordinal, torch_device_assert, cupy_oom,
                                 cupy_no_gpus, jax_no_gpus, jax_oom, nccl_same_gpu, dataloader_shm)}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        sys.exit("usage: provoke.py {%s}" % ",".join(CASES))
    CASES[sys.argv[1]]()
