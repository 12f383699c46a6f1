# gpumatrix image template for CPU bases. Parameterised by build args only; gpumatrix
# renders the build context (this file plus the two install scripts) and passes the args.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
# First, so that every layer of the build, an interrupted build's last one included, names its namespace
# (gpumatrix.images.naming): an untagged one can then be found, and removed, by that label.
ARG GPUMATRIX_NAMESPACE=gpumatrix
LABEL io.gpumatrix.namespace=${GPUMATRIX_NAMESPACE}
ARG PYTHON_VERSION
COPY install-python.sh /tmp/gpumatrix/
RUN sh /tmp/gpumatrix/install-python.sh "${PYTHON_VERSION}" && rm -rf /tmp/gpumatrix
ENV PATH=/opt/venv/bin:${PATH} VIRTUAL_ENV=/opt/venv PYTHONDONTWRITEBYTECODE=1
# torch (with the NumPy it imports) last: it is the largest layer, and every layer above is shared
# by all cells of this base.
# Wheels come only from the host's wheelhouse, served on loopback for the build (WHEELS_URL).
ARG TORCH_REQUIREMENT
ARG NUMPY_REQUIREMENT
ARG WHEELS_URL
COPY install-torch.sh /tmp/gpumatrix/
RUN sh /tmp/gpumatrix/install-torch.sh && rm -rf /tmp/gpumatrix
