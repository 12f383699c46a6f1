#!/bin/sh
# gpumatrix: make Python $1 available and create the venv /opt/venv that torch goes into.
# Installs the interpreter with the base's package manager only where the base lacks it.
set -eu
PY="python$1"
if ! command -v "$PY" >/dev/null 2>&1 || ! "$PY" -c "import ensurepip, venv" >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        if ! apt-cache show "$PY-venv" >/dev/null 2>&1; then
            echo "gpumatrix: $PY is not packaged for this base image's OS." >&2
            echo "gpumatrix: set 'python:' on this base in matrix.yaml to the OS's own Python (Ubuntu 24.04: \"3.12\", Ubuntu 22.04: \"3.10\", Debian 12: \"3.11\")." >&2
            exit 3
        fi
        apt-get install -y -qq --no-install-recommends "$PY" "$PY-venv" ca-certificates >/dev/null
        rm -rf /var/lib/apt/lists/*
    elif command -v dnf >/dev/null 2>&1; then
        dnf install -y -q "$PY" && dnf clean all
    else
        echo "gpumatrix: the base image has no $PY and no apt-get or dnf to install it." >&2
        exit 3
    fi
fi
"$PY" -m venv /opt/venv
/opt/venv/bin/python -m pip --version
