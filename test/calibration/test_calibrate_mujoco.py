"""End to end in MuJoCo: OpenCV's ChArUco image as a texture on a plate beyond the simulated
2F-85's fingertips (eye-to-hand) or on the table under a flange camera (eye-in-hand), rendered
with pixel noise; samples written as a real session writes them (PNGs + a 125 Hz joint stream),
paired by stamps, solved, and compared with the MuJoCo model's own camera pose."""
import json
import os

import numpy as np
import pytest

os.environ.setdefault("MUJOCO_GL", "egl")

from spatial_manip.calibration.board import BoardConfig  # noqa: E402
from spatial_manip.calibration.procedure import calibrate_folder, write_calibration  # noqa: E402
from spatial_manip.calibration.result import Bounds, CalibrationRejected, pose_error  # noqa: E402
from spatial_manip.calibration.samples import load_samples  # noqa: E402
from spatial_manip.sim.calibration_cell import capture, sample_poses, write_capture  # noqa: E402
from spatial_manip.cli import main  # noqa: E402
from spatial_manip.geometry.calibration import load_calibration  # noqa: E402

BOARD = BoardConfig()
BOUNDS = Bounds()


@pytest.fixture(scope="module", params=["eye_to_hand", "eye_in_hand"])
def session(request, tmp_path_factory, cells):
    """A rendered session folder and its ground truth (one per set-up, shared by the tests)."""
    rng = np.random.default_rng(7)
    cell = cells(request.param)
    cap = capture(cell, sample_poses(cell, 14, rng), rng)
    folder = tmp_path_factory.mktemp(request.param)
    write_capture(cap, folder)
    return request.param, folder, cap


def test_calibration_recovers_the_simulated_camera(session, tmp_path):
    mode, folder, cap = session
    report = calibrate_folder(load_samples(folder), BOARD)
    assert report.mode == mode and len(report.solution.inliers) == 14 and not report.skipped
    mm, deg = pose_error(report.T_mount_camera, cap.T_mount_camera_true)
    assert mm < 3.0 and deg < 0.3, f"{mode}: {mm:.2f} mm {deg:.3f} deg from the truth"
    for name, r in report.solution.methods.items():     # every OpenCV method lands near the truth
        m_mm, m_deg = pose_error(r.X, cap.T_mount_camera_true)
        assert m_mm < 6.0 and m_deg < 0.5, (name, m_mm, m_deg)
    out = write_calibration(report, tmp_path / "cal.yaml", BOUNDS)
    loaded = load_calibration(out)          # the stack's own loader reads what we wrote
    assert loaded.mode == mode and loaded.intrinsics == cap.intrinsics
    np.testing.assert_allclose(loaded.T_mount_camera, report.T_mount_camera, atol=1e-5)
    text = out.read_text()
    assert "# per sample (residual at the board centre" in text and "#   img_013.png" in text


def test_shuffled_poses_are_refused_naming_the_samples(session, tmp_path, capsys):
    mode, folder, _ = session
    data = json.loads((folder / "samples.json").read_text())
    stamps = [im["stamp"] for im in data["images"]]
    rng = np.random.default_rng(3)
    for im, s in zip(data["images"], rng.permutation(stamps)):   # every image now meets another pose
        im["stamp"] = float(s)
    bad = tmp_path / "shuffled"
    bad.mkdir()
    for im in data["images"]:
        (bad / im["file"]).symlink_to(folder / im["file"])
    (bad / "samples.json").write_text(json.dumps(data))
    report = calibrate_folder(load_samples(bad), BOARD)
    with pytest.raises(CalibrationRejected, match=r"samples exceed 5.0 mm / 0.5 deg: img_\d{3}\.png \(\d+\.\d mm"):
        write_calibration(report, tmp_path / "cal.yaml", BOUNDS)
    assert not (tmp_path / "cal.yaml").exists()
    # the command says the same and exits 1, writing nothing
    assert main(["calibrate", "--samples", str(bad), "--out", str(tmp_path / "cal.yaml")]) == 1
    err = capsys.readouterr().err
    assert "calibration refused, nothing written" in err and "img_0" in err and not (tmp_path / "cal.yaml").exists()


def test_a_single_mispaired_image_is_rejected_and_the_result_kept(session):
    mode, folder, cap = session
    data = json.loads((folder / "samples.json").read_text())
    a, b = data["images"][2], data["images"][9]
    a["stamp"], b["stamp"] = b["stamp"], a["stamp"]       # two images swapped their instants
    bad = folder.parent / f"{folder.name}_swapped"
    bad.mkdir(exist_ok=True)
    for im in data["images"]:
        if im["file"] != "img_005.png" and not (bad / im["file"]).is_symlink():   # and one image went missing
            (bad / im["file"]).symlink_to(folder / im["file"])
    (bad / "samples.json").write_text(json.dumps(data))
    report = calibrate_folder(load_samples(bad), BOARD)
    assert sorted(report.names[i] for i in report.solution.rejected) == ["img_002.png", "img_009.png"]
    assert list(report.skipped) == ["img_005.png"] and "cannot read image" in report.skipped["img_005.png"]
    mm, deg = pose_error(report.T_mount_camera, cap.T_mount_camera_true)
    assert mm < 3.0 and deg < 0.3
    assert report.problems(BOUNDS) == []


def test_cli_sim_automatic_mode_writes_a_loadable_file_and_prints_its_error(tmp_path, capsys):
    """The automatic mode's plan (rough board position, nominal mount, safety envelope) in the sim."""
    out = tmp_path / "sim.yaml"
    assert main(["calibrate", "--sim", "--mode", "eye_in_hand", "--auto", "--poses", "12", "--seed", "1", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    line = next(ln for ln in text.splitlines() if ln.startswith("calibration error:"))
    mm, deg = float(line.split()[2]), float(line.split()[4])
    assert mm < 3.0 and deg < 0.3
    assert load_calibration(out).eye_in_hand


def _subset(folder, dest, keep):
    """A samples folder with only the images `keep` (by index), linked to the originals."""
    data = json.loads((folder / "samples.json").read_text())
    data["images"] = [im for k, im in enumerate(data["images"]) if k in keep]
    dest.mkdir()
    for im in data["images"]:
        (dest / im["file"]).symlink_to(folder / im["file"])
    (dest / "samples.json").write_text(json.dumps(data))
    return dest


def test_check_calibration_on_held_out_images_and_a_bumped_camera(session, tmp_path, capsys):
    mode, folder, _ = session
    train = _subset(folder, tmp_path / "train", set(range(10)))
    held_out = _subset(folder, tmp_path / "held_out", set(range(10, 14)))
    cal = tmp_path / "cal.yaml"
    assert main(["calibrate", "--samples", str(train), "--out", str(cal)]) == 0
    assert f"written by `spatial-manip calibrate --samples {train}` on" in cal.read_text()
    capsys.readouterr()
    assert main(["check-calibration", str(cal), "--samples", str(held_out)]) == 0
    out = capsys.readouterr().out
    assert "4 samples checked; the board's mounting from the file" in out and "calibration holds" in out
    rms_px = float(out.split("reprojection rms ")[1].split()[0])
    assert rms_px < 1.0
    # the camera was knocked 1 cm sideways since: every sample says so, by name
    import yaml
    d = yaml.safe_load(cal.read_text())
    key = "T_base_camera" if mode == "eye_to_hand" else "T_tool0_camera"
    d[key]["translation"][0] += 0.01
    bumped = tmp_path / "bumped.yaml"
    bumped.write_text(yaml.safe_dump(d))
    assert main(["check-calibration", str(bumped), "--samples", str(held_out)]) == 1
    err = capsys.readouterr().err
    assert "check failed: 4 samples beyond 5.0 mm / 0.5 deg: img_010.png (" in err and "calibrate again" in err
