"""Dockerfile templates and install scripts; a package only so they ship in the gpumatrix wheel.

``pyproject.toml`` maps this folder onto ``gpumatrix.templates``; see ``gpumatrix/resources.py``.
"""
