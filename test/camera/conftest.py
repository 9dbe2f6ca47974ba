import pytest

from spatial_manip.camera.synthetic import SyntheticConfig, build_recording


@pytest.fixture(scope="session")
def vga_recording(tmp_path_factory):
    """A 12-frame 640x480 synthetic L515 recording (0.25 mm depth units)."""
    path = tmp_path_factory.mktemp("rec") / "vga.db3"
    return build_recording(str(path), SyntheticConfig(n_frames=12, distinct_frames=4))
