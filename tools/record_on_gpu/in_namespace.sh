#!/bin/bash
# Run "$@" as a container would see this host: in a private mount namespace (start it with
# `unshare -m --propagation private`), /dev holds only the NVIDIA nodes named in $NODES, /dev/shm is $SHM
# (64m by default), and CAP_MKNOD is gone, so the driver cannot create the missing nodes itself (as root it
# would: a container's device cgroup is what stops it there). With NOLIBS=1 every libcuda.so* and
# libnvidia-ml.so* is covered by an empty file (a container the driver's libraries were not injected into).
# The host's real nodes and files are untouched.
mkdir -p /tmp/old-dev && mount --rbind /dev /tmp/old-dev || exit 3
mount -t tmpfs -o size=8m tmpfs /dev || exit 4
for n in null zero random urandom tty $NODES; do touch "/dev/$n" && mount --bind "/tmp/old-dev/$n" "/dev/$n"; done
mkdir /dev/shm && mount -t tmpfs -o "size=${SHM:-64m}" tmpfs /dev/shm
if [ -n "$LOCK" ]; then chmod 000 "/dev/$LOCK"; fi  # the bind mount's inode is the host's: see record.sh
if [ -n "$NOLIBS" ]; then
  : > /tmp/empty
  for lib in $(ldconfig -p | grep -oE '/[^ ]*lib(cuda|nvidia-ml)\.so[.0-9]*$') \
             $(find /usr/lib /usr/local /lib /opt -xdev \( -name 'libcuda.so*' -o -name 'libnvidia-ml.so*' \) 2>/dev/null); do
    real=$(readlink -f "$lib") && [ -f "$real" ] && mount --bind /tmp/empty "$real"
  done
fi
# shellcheck disable=SC2086  # AS holds several setpriv options
exec setpriv --bounding-set=-mknod $AS "$@"
