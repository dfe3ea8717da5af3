"""Build the compiled core (kafkawire/_codec.pyx, kafkawire/_recview.pyx, kafkawire/serde/_avro.pyx,
kafkawire/client/producer/_accumulator.pyx). Set KAFKAWIRE_NO_EXTENSIONS=1 to skip it."""

import os
import sys

import numpy as np
from setuptools import Extension, setup
from setuptools.command.build_py import build_py

PURE = os.environ.get("KAFKAWIRE_NO_EXTENSIONS", "") not in ("", "0")


class BuildPy(build_py):
    """A build without the extension leaves kafkawire/_pure_build in the package, so that importing it
    knows the pure codec was chosen on purpose and does not warn (kafkawire/_impl.py)."""

    def run(self) -> None:
        super().run()
        if PURE and not self.dry_run:
            marker = os.path.join(self.build_lib, "kafkawire", "_pure_build")
            with open(marker, "w") as f:
                f.write("built with KAFKAWIRE_NO_EXTENSIONS=1\n")


ext_modules = []
if not PURE:
    from Cython.Build import cythonize

    extra_compile_args = [] if sys.platform == "win32" else ["-O3", "-fno-strict-aliasing"]
    if os.environ.get("KAFKAWIRE_SANITIZE"):
        flags = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g", "-O1"]
        extra_compile_args = flags
    ext_modules = cythonize(
        [
            Extension(
                "kafkawire._codec",
                ["kafkawire/_codec.pyx"],
                include_dirs=[np.get_include(), "kafkawire/_csrc"],
                # Header-only C: rebuild the extension when one of them changes.
                depends=["kafkawire/_csrc/kw_crc.h", "kafkawire/_csrc/kw_wire.h", "kafkawire/_csrc/kw_pool.h",
                         "kafkawire/_csrc/kw_frames.h"],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                extra_compile_args=extra_compile_args,
                extra_link_args=extra_compile_args if os.environ.get("KAFKAWIRE_SANITIZE") else [],
            ),
            # Per-record views of RecordColumns and the consumer's per-record loop (issue 32); pure twin:
            # kafkawire/_pure/recview.py.
            Extension(
                "kafkawire._recview",
                ["kafkawire/_recview.pyx"],
                include_dirs=[np.get_include()],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                extra_compile_args=extra_compile_args,
                extra_link_args=extra_compile_args if os.environ.get("KAFKAWIRE_SANITIZE") else [],
            ),
            # The Avro column decoder of kafkawire.serde (issue 20); its pure twin is serde/_avro_pure.py.
            Extension(
                "kafkawire.serde._avro",
                ["kafkawire/serde/_avro.pyx"],
                include_dirs=[np.get_include()],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                # Strict aliasing on (it type-puns only through memcpy): the decoder's loads of its state
                # need not be repeated after every byte it stores.
                extra_compile_args=[a for a in extra_compile_args if a != "-fno-strict-aliasing"],
                extra_link_args=extra_compile_args if os.environ.get("KAFKAWIRE_SANITIZE") else [],
            ),
            # The accumulator behind Producer.send() (issue 32); its pure twin is _accumulator_pure.py.
            Extension(
                "kafkawire.client.producer._accumulator",
                ["kafkawire/client/producer/_accumulator.pyx"],
                include_dirs=[np.get_include()],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                extra_compile_args=extra_compile_args,
                extra_link_args=extra_compile_args if os.environ.get("KAFKAWIRE_SANITIZE") else [],
            ),
            # The Protobuf column decoder of kafkawire.serde (issue 33); its pure twin is serde/_protobuf_pure.py.
            Extension(
                "kafkawire.serde._protobuf",
                ["kafkawire/serde/_protobuf.pyx"],
                include_dirs=[np.get_include()],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                # strict aliasing on, as for _avro (it type-puns only through memcpy)
                extra_compile_args=[a for a in extra_compile_args if a != "-fno-strict-aliasing"],
                extra_link_args=extra_compile_args if os.environ.get("KAFKAWIRE_SANITIZE") else [],
            ),
        ],
        compiler_directives={
            "language_level": "3",
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    )

setup(ext_modules=ext_modules, cmdclass={"build_py": BuildPy})
