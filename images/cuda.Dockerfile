# gpumatrix image template for NVIDIA CUDA bases (nvidia/cuda:*). Parameterised by build args only.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
# First, so that every layer of the build, an interrupted build's last one included, names its namespace
# (gpumatrix.images.naming): an untagged one can then be found, and removed, by that label.
ARG GPUMATRIX_NAMESPACE=gpumatrix
LABEL io.gpumatrix.namespace=${GPUMATRIX_NAMESPACE}
ARG PYTHON_VERSION
COPY install-python.sh /tmp/gpumatrix/
RUN sh /tmp/gpumatrix/install-python.sh "${PYTHON_VERSION}" && rm -rf /tmp/gpumatrix
# The torch wheel brings its own CUDA libraries (nvidia-* wheels, found through RPATH). Only the paths
# where the NVIDIA runtime injects the host's driver libraries may be on LD_LIBRARY_PATH: adding the
# base's /usr/local/cuda/lib64 there shadows the wheel's libraries and breaks torch with errors such as
# "undefined symbol: __nvJitLinkComplete_12_4".
ENV PATH=/opt/venv/bin:${PATH} VIRTUAL_ENV=/opt/venv PYTHONDONTWRITEBYTECODE=1 \
    LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64 \
    NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility
# torch (with the NumPy it imports) last: it is the largest layer, and every layer above is shared
# by all cells of this base.
# Wheels come only from the host's wheelhouse, served on loopback for the build (WHEELS_URL).
ARG TORCH_REQUIREMENT
ARG NUMPY_REQUIREMENT
ARG WHEELS_URL
COPY install-torch.sh /tmp/gpumatrix/
RUN sh /tmp/gpumatrix/install-torch.sh && rm -rf /tmp/gpumatrix
