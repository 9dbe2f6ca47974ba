"""MuJoCo renders headless without scripts/env.sh: importing spatial_manip chooses the GL backend."""
import os
import subprocess
import sys

import pytest

from spatial_manip.rendering import NO_GL_MESSAGE, choose_gl_backend


def test_egl_first_then_osmesa_and_a_users_choice_is_kept():
    libs = {"EGL": "libEGL.so.1", "OSMesa": "libOSMesa.so.8"}
    env = {}
    assert choose_gl_backend(env, libs.get) == "egl" and env["PYOPENGL_PLATFORM"] == "egl"
    env = {}
    assert choose_gl_backend(env, {"OSMesa": "libOSMesa.so.8"}.get) == "osmesa"
    env = {"MUJOCO_GL": "glfw"}
    assert choose_gl_backend(env, libs.get) == "glfw" and "PYOPENGL_PLATFORM" not in env


def test_no_gl_library_is_one_clear_error_or_nothing_when_not_strict():
    with pytest.raises(RuntimeError, match="install libegl1"):
        choose_gl_backend({}, lambda _name: None)
    env = {}
    assert choose_gl_backend(env, lambda _name: None, strict=False) == "" and "MUJOCO_GL" not in env
    assert "MUJOCO_GL" in NO_GL_MESSAGE


@pytest.mark.slow
def test_a_render_works_with_no_gl_variables_set():
    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "PYOPENGL_PLATFORM")}
    code = ("import numpy as np; from spatial_manip.sim.layouts import sample_tabletop; "
            "from spatial_manip.sim.world import SimWorld; w = SimWorld(sample_tabletop(np.random.default_rng(0))); "
            "obs = w.render(); w.close(); print(obs.rgb.shape, __import__('os').environ['MUJOCO_GL'])")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "egl" in run.stdout or "osmesa" in run.stdout
