"""The assembled arm + gripper model: built without MuJoCo's attach-conflict warning (one per scene
flooded every log), and with the solver options the gripper's grasps need."""
import warnings

import mujoco
import numpy as np

from spatial_manip.sim import layouts as L
from spatial_manip.sim import mjcf


def test_a_scene_model_builds_silently_with_the_grippers_solver_options(capfd):
    scene = L.sample_tabletop(np.random.default_rng(0), n_books=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec, _ = mjcf.build_spec(scene, width=320, height=240, fovy_deg=55.0, book_density=350.0,
                                  timestep_s=0.002)
        model = spec.compile()
    out, err = capfd.readouterr()      # MuJoCo's C side prints to the file descriptors themselves
    assert "Attach conflict" not in out + err
    assert [str(w.message) for w in caught] == []
    assert model.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC and model.opt.impratio == 10
