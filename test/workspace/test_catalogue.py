"""The enrolled library as the planner's catalogue (workspace/catalogue.py): planner_node's
library_file, read and checked at start-up, joined to whichever workspace the planner has."""
import json

import numpy as np
import pytest

from spatial_manip.errors import ConfigError
from spatial_manip.scene import Scene, SceneObject, Viewpoint
from spatial_manip.workspace.catalogue import load_library_file, with_library
from spatial_manip.workspace.enroll import Library, LibraryEntry


def _entry(id, name, size=(0.09, 0.09, 0.11)):
    return LibraryEntry(id=id, name=name, category=name, size_m=size, rgb=(200, 30, 30), colours=("red",),
                        shape="cylinder")


def _workspace(*objects) -> Scene:
    you = Viewpoint((0.0, 0.0, 0.5), (1.0, 0.0, 0.0))
    table = SceneObject("table", "table", "table", (0.5, 0.0, -0.02), (0.8, 1.0, 0.04))
    return Scene(viewer=you, robot=you, objects=[table, *objects], extra={"revision": "7"})


def test_the_library_is_the_catalogue_replacing_old_entries_never_a_fixture_or_the_held_object():
    old_mug = SceneObject("red_mug", "mug", "mug", np.zeros(3), (0.05, 0.05, 0.05), extra={"catalogue": True})
    jar = SceneObject("jar", "jar", "jar", np.zeros(3), (0.1, 0.1, 0.1), extra={"catalogue": True})
    held = SceneObject("held_cup", "cup", "cup", np.zeros(3), (0.07, 0.07, 0.1), held=True, extra={"catalogue": True})
    library = Library([_entry("red_mug", "mug", (0.12, 0.09, 0.1)), _entry("table", "table"),
                       _entry("held_cup", "cup"), _entry("bowl", "bowl")])
    joined = with_library(_workspace(old_mug, jar, held), library)
    by_id = {o.id: o for o in joined.objects}
    assert sorted(by_id) == ["bowl", "held_cup", "jar", "red_mug", "table"]
    assert np.allclose(by_id["red_mug"].size, (0.12, 0.09, 0.1)) and by_id["red_mug"].extra["catalogue"]
    assert by_id["table"].category == "table" and by_id["held_cup"].held     # placed objects stay
    assert by_id["jar"] is jar and by_id["bowl"].extra["colours"] == ["red"]
    assert joined.extra == {"revision": "7"}


def test_a_bad_library_file_is_refused_at_start_up_naming_the_file_and_what_is_wrong(tmp_path):
    with pytest.raises(ConfigError, match=r"library_file '.*none.json'.*does not exist"):
        load_library_file(str(tmp_path / "none.json"))
    bad = tmp_path / "ws.json"
    bad.write_text(json.dumps({"objects": []}))                       # a workspace file given by mistake
    with pytest.raises(ConfigError, match=r"ws.json.*format 'spatial_manip.library/1'"):
        load_library_file(str(bad))
    bad.write_text(json.dumps({"format": "spatial_manip.library/1", "objects": [{"id": "mug", "name": "mug"}]}))
    with pytest.raises(ConfigError, match="an entry needs id, name, category, size_m"):
        load_library_file(str(bad))
    bad.write_text(json.dumps({"format": "spatial_manip.library/1", "objects": []}))
    with pytest.raises(ConfigError, match="holds no object"):
        load_library_file(str(bad))
    with pytest.raises(ConfigError, match=r"library_file '.*'"):            # a folder, not a file
        load_library_file(str(tmp_path))


def test_a_relative_library_file_is_found_under_config_as_an_installed_launch_gives_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    library = load_library_file("library/sim_assets.json")
    assert len(library.entries) > 50 and "book_blue_large" in library.entries
