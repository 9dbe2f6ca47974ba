"""The Gazebo worlds of `spatial-manip tasks --sdf`: the real SDFormat parser accepts every one,
and our SDF reader finds the generated scene's objects, and MuJoCo's geoms, where they were."""
import argparse
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from spatial_manip.transforms import box_corners, rotation_angle  # first: sets MUJOCO_GL
from spatial_manip.scene import Scene
from spatial_manip.commands import tasks as tasks_cli
from spatial_manip.sim import mjcf, sdf_export, sdf_reader
from spatial_manip.sim.world import SimConfig

import mujoco  # noqa: E402  (after spatial_manip, which chooses the headless GL backend)

TOL_M = 1e-3


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Two smoke tasks (a shelf and a tabletop scene) written by the CLI with --sdf."""
    out = tmp_path_factory.mktemp("tasks")
    parser = argparse.ArgumentParser()
    tasks_cli.add_arguments(parser)          # the command's own parser: a hand-made Namespace goes stale
    args = parser.parse_args(["--suite", "smoke", "--count", "2", "--seed", "5", "--out", str(out), "--pool", "2",
                              "--sdf"])
    assert tasks_cli.run(args) == 0
    items = []
    for line in (out / "tasks.jsonl").read_text().splitlines():
        scene_path = out / json.loads(line)["scene"]
        items.append((Scene.load(scene_path), scene_path.with_suffix(".sdf")))
    assert {s.extra["kind"] for s, _ in items} == {"shelf", "tabletop"}
    return items


def _require_parser():
    try:
        sdf_export.ign_command()
    except sdf_export.SdfParserMissingError as e:
        pytest.fail(str(e))


def test_the_robot_urdf_loads_in_gazebo():
    """Every link with geometry has an inertial (SDFormat drops massless links), and the parser
    accepts the URDF on its own."""
    _require_parser()
    urdf = sdf_export.default_robot_urdf()
    assert urdf.is_file(), f"{urdf} does not exist"
    assert sdf_export.urdf_links_without_inertial(urdf) == []
    assert "Valid." in sdf_export.check_sdf(urdf)


def test_every_exported_world_passes_the_sdformat_parser(exported):
    _require_parser()
    for scene, sdf in exported:
        assert sdf.is_file(), f"--sdf did not write {sdf}"
        assert "Valid." in sdf_export.check_sdf(sdf)


def test_the_parser_rejects_a_broken_world_with_its_error(exported, tmp_path):
    _require_parser()
    scene, _ = exported[0]
    text = sdf_export.world_sdf(scene)
    broken = tmp_path / "broken.sdf"
    # a joint whose child link does not exist: the parser must name it
    broken.write_text(text.replace("<child>base</child>", "<child>no_such_link</child>"))
    with pytest.raises(sdf_export.SdfInvalidError, match=r"no_such_link"):
        sdf_export.check_sdf(broken)


def test_round_trip_same_objects_and_slots_within_1mm(exported):
    for scene, sdf in exported:
        world = sdf_reader.read_world(sdf)
        got = {o.id: o for o in world.scene_objects()}
        assert sorted(got) == sorted(o.id for o in scene.objects)
        for o in scene.objects:
            r = got[o.id]
            assert (r.category, r.label, r.held) == (o.category, o.label, o.held)
            # corners agree: same centre, size and rotation at once
            err = np.abs(box_corners(r.center, r.size, r.rotation) - o.corners()).max()
            assert err < TOL_M, f"{sdf.name}: {o.id} moved {err * 1000:.3f} mm"
        slots = {r.id: r for r in world.regions()}
        assert sorted(slots) == sorted(r.id for r in scene.regions)
        for reg in scene.regions:
            assert np.linalg.norm(slots[reg.id].center - reg.center) < TOL_M
            assert np.allclose(slots[reg.id].size, reg.size, atol=TOL_M)


_MODELS: dict = {}


def _mujoco_model(scene: Scene):
    """The compiled MuJoCo world of a scene (once per scene: the UR5e compile takes a while)."""
    if id(scene) in _MODELS:
        return _MODELS[id(scene)]
    c = SimConfig()
    spec, _ = mjcf.build_spec(scene, width=c.width, height=c.height, fovy_deg=c.fovy_deg,
                              book_density=c.book_density_kg_m3, timestep_s=c.timestep_s)
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    _MODELS[id(scene)] = model, data
    return model, data


def _sdf_size(g: sdf_reader.Geometry) -> np.ndarray:
    """The SDF shape's dimensions in MuJoCo's convention (half sizes)."""
    d = g.dims
    return {"box": lambda: np.asarray(d["size"]) / 2, "sphere": lambda: np.array([d["radius"]]),
            "ellipsoid": lambda: np.asarray(d["radii"]),
            "cylinder": lambda: np.array([d["radius"], d["length"] / 2]),
            "capsule": lambda: np.array([d["radius"], d["length"] / 2])}[g.shape]()


def test_every_mujoco_geom_has_its_sdf_collision_at_the_same_pose(exported):
    for scene, sdf in exported:
        world = sdf_reader.read_world(sdf)
        model, data = _mujoco_model(scene)
        n = 0
        for g in range(model.ngeom):
            m = re.fullmatch(r"obj:([^:]+):(\w+)", model.geom(g).name)
            if not m:
                continue
            obj_id, k = m.groups()
            T = world.collision_pose(obj_id, "link", k)
            assert np.linalg.norm(T[:3, 3] - data.geom_xpos[g]) < TOL_M, f"{sdf.name}: geom {model.geom(g).name}"
            assert np.degrees(rotation_angle(T[:3, :3], data.geom_xmat[g].reshape(3, 3))) < 0.1
            geom = world.models[obj_id].links["link"].collisions[k]
            size = _sdf_size(geom)
            assert np.allclose(size, model.geom_size[g][:len(size)], atol=1e-6), f"{model.geom(g).name} size"
            n += 1
        assert n == sum(len(mdl.links["link"].collisions) for name, mdl in world.models.items() if mdl.meta)


def test_book_masses_friction_and_colours_are_mujocos(exported):
    scene, sdf = exported[0]
    model, _ = _mujoco_model(scene)
    world = sdf_reader.read_world(sdf)
    root = ET.parse(sdf).getroot()
    for o in scene.by_category("book"):
        assert world.models[o.id].links["link"].mass == pytest.approx(model.body(f"obj:{o.id}").mass[0], rel=1e-6)
        assert not world.models[o.id].static
        visual = root.find(f".//model[@name='{o.id}']/link/visual/material/diffuse")
        g = model.geom(f"obj:{o.id}:0")
        assert np.allclose([float(v) for v in visual.text.split()], g.rgba, atol=1e-6)
        mu = float(root.find(f".//model[@name='{o.id}']/link/collision/surface/friction/ode/mu").text)
        assert mu == pytest.approx(g.friction[0])


def test_camera_sensor_is_the_mujoco_camera(exported):
    for scene, sdf in exported:
        model, data = _mujoco_model(scene)
        world = sdf_reader.read_world(sdf)
        cam = world.models[sdf_export.CAMERA_MODEL].pose
        # MuJoCo's camera looks along -z with +y up; the optical frame is that turned about x
        mj_optical = data.cam_xmat[model.camera(mjcf.CAMERA).id].reshape(3, 3) @ np.diag([1.0, -1.0, -1.0])
        assert np.linalg.norm(cam[:3, 3] - data.cam_xpos[model.camera(mjcf.CAMERA).id]) < TOL_M
        assert np.degrees(rotation_angle(cam[:3, :3] @ sdf_export.R_OPTICAL_GZCAM.T, mj_optical)) < 0.05
        lens = ET.parse(sdf).getroot().find(".//sensor[@type='rgbd_camera']/camera/lens/intrinsics")
        fy_mujoco = 0.5 * SimConfig().height / np.tan(np.radians(model.cam_fovy[0]) / 2)
        assert float(lens.findtext("fy")) == pytest.approx(fy_mujoco, rel=1e-6)


def test_robot_is_the_urdf_fixed_to_the_world_with_its_controllers(exported):
    _, sdf = exported[0]
    root = ET.parse(sdf).getroot()
    robot = root.find(f".//model[@name='{sdf_export.ROBOT_MODEL}']")
    uri = robot.findtext("include/uri")
    assert uri == sdf_export.default_robot_urdf().resolve().as_uri() and Path(uri[len("file://"):]).is_file()
    assert robot.find("include").get("merge") == "true"
    assert robot.findtext("joint/parent") == "world"
    assert robot.findtext("joint/child") == sdf_export.urdf_root_link(sdf_export.default_robot_urdf())
    jtc = robot.find("plugin[@name='gz::sim::systems::JointTrajectoryController']")
    assert jtc.findtext("joint_names").split() == list(mjcf.ARM_JOINTS)
    assert jtc.findtext("topic") == sdf_export.GZ_TRAJECTORY_TOPIC


def test_the_arm_starts_where_the_mujoco_arm_starts(exported):
    from spatial_manip.sim.world import SimWorld

    for scene, sdf in exported:
        jtc = ET.parse(sdf).getroot().find(".//plugin[@name='gz::sim::systems::JointTrajectoryController']")
        q = np.array([float(v) for v in jtc.findtext("initial_positions").split()])
        with SimWorld(scene, config=SimConfig(width=64, height=48)) as world:
            assert np.allclose(q, world.joint_positions()[:6], atol=1e-6), sdf.name


def test_reader_refuses_what_it_does_not_understand(tmp_path):
    f = tmp_path / "w.sdf"
    f.write_text('<sdf version="1.9"><world name="w"><model name="m"><pose relative_to="x">0 0 0 0 0 0</pose>'
                 '<link name="l"/></model></world></sdf>')
    with pytest.raises(sdf_reader.SdfReadError, match="relative_to"):
        sdf_reader.read_world(f)
    f.write_text("<robot name='r'/>")
    with pytest.raises(sdf_reader.SdfReadError, match="not <sdf>"):
        sdf_reader.read_world(f)


def test_calibration_file_beside_the_world_loads_as_the_camera_pose(exported):
    from spatial_manip.geometry.calibration import load_calibration
    from spatial_manip.sim.layouts import camera_pose

    scene, sdf = exported[1]
    cal = load_calibration(sdf.with_name(sdf.stem + ".calibration.yaml"))
    assert np.allclose(cal.T_base_camera(), camera_pose(scene.viewer), atol=1e-6)
