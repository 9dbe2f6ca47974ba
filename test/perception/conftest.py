"""Rendered tabletop frames shared by the perception tests (rendered once per session)."""
import pytest

from spatial_manip.perception.synthetic import SyntheticObject, default_objects, render_tabletop


@pytest.fixture(scope="session")
def tabletop():
    return render_tabletop(default_objects())


@pytest.fixture(scope="session")
def tabletop_side_view():
    # Lower, from the robot's left: more side faces and more occlusion.
    return render_tabletop(default_objects(), camera_pos=(0.25, 0.7, 1.2), target=(0.65, 0.0, 0.75))


@pytest.fixture(scope="session")
def empty_table():
    return render_tabletop([])


@pytest.fixture(scope="session")
def touching_books():
    # Two books side by side with no gap, different colours: one cluster until split by colour.
    return render_tabletop([
        SyntheticObject("red book", (0.20, 0.14, 0.022), (0.65, 0.07), 0.0, (0.85, 0.12, 0.1, 1), "book"),
        SyntheticObject("blue book", (0.20, 0.14, 0.022), (0.65, -0.07), 0.0, (0.1, 0.25, 0.85, 1), "book"),
    ])
