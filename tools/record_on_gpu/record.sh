#!/bin/bash
# Record real outputs of the GPU stack on an NVIDIA host (root, no engine needed): reports, the probe suite,
# and each failure of provoke.py under the condition that causes it. Writes one file per step under $1
# (default /tmp/recorded): NAME.out, NAME.err, NAME.rc. Run from the repository root. About two minutes on an
# H200. What came of it on 2026-11-28 is in tests/fixtures/device/ and tests/diagnosis/recorded/.
R=${1:-/tmp/recorded}; mkdir -p "$R"; HERE=tools/record_on_gpu
step() { local name=$1; shift; echo "== $name" >&2; timeout "${T:-120}" "$@" >"$R/$name.out" 2>"$R/$name.err"; echo $? >"$R/$name.rc"; }
ns() { local name=$1; shift; step "$name" unshare -m --propagation private env "$@"; }
ALL="nvidiactl nvidia-uvm nvidia-uvm-tools nvidia0"
# reports
step nvidia-smi nvidia-smi
step nvidia-smi-q nvidia-smi -q
step nvidia-smi-L nvidia-smi -L
step nvidia-smi-query nvidia-smi --query-gpu=index,name,uuid,memory.total,compute_cap,pci.bus_id,driver_version --format=csv
step collect_env python3 -m torch.utils.collect_env
step host python3 -c "import json; from gpumatrix.host.discover import discover_host; print(json.dumps(discover_host().fingerprint(), indent=1, default=str))"
T=240 step probes-full-perf python3 -m probes --json --deadline 170
# failures on the whole machine
for c in torch_oom torch_bad_ordinal torch_device_assert cupy_oom jax_oom nccl_same_gpu; do step "$c" python3 $HERE/provoke.py "$c"; done
for c in torch_no_gpus cupy_no_gpus jax_no_gpus; do CUDA_VISIBLE_DEVICES= step "$c" python3 $HERE/provoke.py "$c"; done
CUDA_VISIBLE_DEVICES=GPU-00000000-1111-2222-3333-444444444444 step torch_bogus_uuid python3 $HERE/provoke.py torch_no_gpus
JAX_PLATFORMS=cuda CUDA_VISIBLE_DEVICES= step jax_cuda_forced python3 $HERE/provoke.py jax_no_gpus
for a in sm_100 sm_120; do nvcc -arch=$a -o "/tmp/launch_$a" $HERE/launch.cu && step "kernel_$a" "/tmp/launch_$a"; done
for c in torch_no_gpus cupy_no_gpus jax_no_gpus; do
  LD_LIBRARY_PATH=/usr/local/cuda/compat step "${c}_compat_mismatch" python3 $HERE/provoke.py "$c"
done
LD_LIBRARY_PATH=/usr/local/cuda/compat step collect_env_compat_mismatch python3 -m torch.utils.collect_env
# failures as a container would meet them
for c in torch_no_gpus cupy_no_gpus jax_no_gpus; do
  ns "${c}_dev_none" NODES= bash $HERE/in_namespace.sh python3 $HERE/provoke.py "$c"
  ns "${c}_dev_no_card" NODES="nvidiactl nvidia-uvm nvidia-uvm-tools" bash $HERE/in_namespace.sh python3 $HERE/provoke.py "$c"
  ns "${c}_dev_no_uvm" NODES="nvidiactl nvidia0" bash $HERE/in_namespace.sh python3 $HERE/provoke.py "$c"
  ns "${c}_no_driver_libs" NOLIBS=1 NODES="$ALL" bash $HERE/in_namespace.sh python3 $HERE/provoke.py "$c"
done
ns smi_dev_none NODES= bash $HERE/in_namespace.sh nvidia-smi
ns smi_dev_no_card NODES="nvidiactl nvidia-uvm nvidia-uvm-tools" bash $HERE/in_namespace.sh nvidia-smi
ns smi_dev_no_ctl NODES="nvidia0 nvidia-uvm" bash $HERE/in_namespace.sh nvidia-smi
# an unreadable /dev/nvidia0 for an unprivileged user: chmod on the bound node changes the host's node, so
# the mode is put back after the two steps
mode=$(stat -c %a /dev/nvidia0)
ns dev_perm NODES="$ALL" LOCK=nvidia0 AS="--reuid=65534 --regid=65534 --clear-groups" bash $HERE/in_namespace.sh python3 $HERE/provoke.py torch_no_gpus
ns smi_dev_perm NODES="$ALL" LOCK=nvidia0 AS="--reuid=65534 --regid=65534 --clear-groups" bash $HERE/in_namespace.sh nvidia-smi
chmod "$mode" /dev/nvidia0
ns shm_small NODES="$ALL" SHM=1m bash $HERE/in_namespace.sh python3 $HERE/provoke.py dataloader_shm
ns collect_env_dev_none NODES= bash $HERE/in_namespace.sh python3 -m torch.utils.collect_env
# the probe suite in an NVIDIA cell's conditions
E=GPUMATRIX_EXPECT=nvidia
ns probes-expect-nvidia-all-nodes $E NODES="$ALL" bash $HERE/in_namespace.sh python3 -m probes --json --quick
ns probes-expect-nvidia-dev-none $E NODES= bash $HERE/in_namespace.sh python3 -m probes --json --quick
ns probes-expect-nvidia-dev-no-uvm $E NODES="nvidiactl nvidia0" bash $HERE/in_namespace.sh python3 -m probes --json --quick
ns probes-expect-nvidia-compat-mismatch $E NODES="$ALL" LD_LIBRARY_PATH=/usr/local/cuda/compat \
  bash $HERE/in_namespace.sh python3 -m probes --json --quick
ns probes-expect-nvidia-shm-1m $E NODES="$ALL" SHM=1m bash $HERE/in_namespace.sh python3 -m probes --json --only framework.dataloader
T=240 step probes-full-no-perf python3 -m probes --json --no-perf
echo "done: $R" >&2
