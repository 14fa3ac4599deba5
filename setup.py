"""The one compiled module: opening sealed values in C (streams/erasure/_opening.c), the
projector's hot path. Everything else is in pyproject.toml.

``optional``: without a C compiler or OpenSSL's headers the install still succeeds and the
Python path (streams/erasure/cipher.py, the reference) opens everything, only slower;
tests/unit/erasure/test_opening_speedups.py says when the module is missing.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "streams.erasure._opening",
            ["streams/erasure/_opening.c"],
            libraries=["crypto"],
            extra_compile_args=["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
            optional=True,
        )
    ]
)
