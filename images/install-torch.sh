#!/bin/sh
# gpumatrix: install the cell's torch, and the NumPy it imports, into /opt/venv from the host's wheelhouse alone.
# NUMPY_REQUIREMENT is the numpy==X that the host's pip resolved with torch for this image's Python: without
# NumPy, torch warns "Failed to initialize NumPy" at import and torch.from_numpy fails.
# WHEELS_URL is a loopback page that lists exactly the wheels gpumatrix resolved and hashed for this image,
# each with its sha256 (pip checks it). --no-index: no package index is consulted, so no index URL,
# credential or CA bundle of the build host reaches the build; PIP_CONFIG_FILE=/dev/null: nor does a pip
# configuration the base image may carry.
set -eu
PIP_CONFIG_FILE=/dev/null /opt/venv/bin/python -m pip install --no-index --find-links "$WHEELS_URL" \
    --no-cache-dir --progress-bar off --retries 2 --timeout 60 "$TORCH_REQUIREMENT" "$NUMPY_REQUIREMENT"
/opt/venv/bin/python -m pip list --format=freeze
