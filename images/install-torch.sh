#!/bin/sh
# gpumatrix: install the cell's torch into /opt/venv.
# Package locations come in as build args (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS), so nothing
# about the build host (its loopback package server, its CA bundle) stays in the image.
set -eu
if [ -n "${GPUMATRIX_CA_URL:-}" ]; then
    /opt/venv/bin/python -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], "/tmp/gpumatrix-ca.pem")' "$GPUMATRIX_CA_URL"
    export PIP_CERT=/tmp/gpumatrix-ca.pem
fi
/opt/venv/bin/python -m pip install --no-cache-dir --progress-bar off --retries 2 --timeout 60 "$TORCH_REQUIREMENT"
rm -f /tmp/gpumatrix-ca.pem
/opt/venv/bin/python -m pip list --format=freeze
