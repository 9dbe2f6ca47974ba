"""Headless OpenGL for MuJoCo, chosen before MuJoCo is imported.

MuJoCo reads MUJOCO_GL once, at import; unset, it picks GLFW, which needs a display and fails
on a server with an OpenGL traceback. Every entry point that may render (the CLI, the nodes)
calls `choose_gl_backend()` first: EGL when its library is present (GPU or Mesa's software
EGL), else OSMesa, else a one-line error saying what to install or set. A value the user set
is kept."""
from __future__ import annotations

import ctypes.util
import os

BACKENDS = {"egl": "EGL", "osmesa": "OSMesa"}   # MUJOCO_GL value -> the library it loads


NO_GL_MESSAGE = ("no headless OpenGL for MuJoCo: install libegl1 (or libosmesa6), or set MUJOCO_GL "
                 "to a backend this machine has (egl, osmesa, glfw)")


def choose_gl_backend(environ=os.environ, find_library=ctypes.util.find_library, *, strict: bool = True) -> str:
    """Set MUJOCO_GL (and PyOpenGL's platform to match) when unset; return the value in use
    ("" when nothing was found and not `strict`: a planner-only machine never renders)."""
    chosen = environ.get("MUJOCO_GL")
    if not chosen:
        chosen = next((name for name, lib in BACKENDS.items() if find_library(lib)), "")
        if not chosen:
            if strict:
                raise RuntimeError(NO_GL_MESSAGE)
            return ""
        environ["MUJOCO_GL"] = chosen
    if chosen in BACKENDS:
        environ.setdefault("PYOPENGL_PLATFORM", chosen)
    return chosen
