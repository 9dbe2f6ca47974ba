"""Everyday objects from the LIBERO-PRO wheels (and any folder in their layout) in real MuJoCo:
measured from their meshes, named from their textures, standing still on the table, held when
carried, and a lab's own folder added with --objects."""
import shutil

import numpy as np
import pytest

from spatial_manip.sim import object_scenes as OSc
from spatial_manip.sim import object_sets as OS
from spatial_manip.sim.world import SimConfig, SimWorld

pytestmark = pytest.mark.skipif(OS.libero_root() is None, reason="needs requirements-bench.txt's LIBERO-PRO wheels")
CFG = SimConfig(width=320, height=240)


@pytest.fixture(scope="module")
def models():
    return OS.everyday_models()


def test_models_measured_from_meshes_and_named_from_textures(models):
    assert set(OS.EVERYDAY_MODELS) <= set(models)
    mug = models["red_coffee_mug"]
    assert mug.category == "mug" and "red" in mug.colours      # seen by perception: gray shading, red
    assert 0.11 < mug.size_m[2] < 0.15 and 0.05 < mug.mass_kg < 0.3      # a 13.5 cm mug of ~120 g
    assert models["yellow_bowl"].colours[0] == "yellow" and models["white_bowl"].colours[0] == "white"
    # the bowls of one category differ in size, so "the smaller bowl" is a fair question
    assert models["yellow_bowl"].size_m[0] > models["white_bowl"].size_m[0] + 0.02
    assert {m.category for m in models.values()} >= {"mug", "bowl", "bottle", "carton", "can"}


def test_category_map_and_bad_folders(tmp_path):
    assert OS.category_of("green_bbq_sauce") == "bottle" and OS.category_of("orange_juice") == "carton"
    assert OS.category_of("my_scanned_thing") == "object"
    with pytest.raises(OS.ObjectSetError, match="not a folder"):
        OS.load_set(tmp_path / "missing")
    with pytest.raises(OS.ObjectSetError, match="<name>/<name>.xml"):
        OS.load_set(tmp_path)


def test_a_labs_own_folder_joins_the_models(tmp_path, monkeypatch, models):
    """--objects DIR: a folder in the LIBERO layout (here a copy of the red mug renamed 'blue_cup')."""
    src = OS.libero_root() / "turbosquid_objects" / "red_coffee_mug"
    dst = tmp_path / "lab" / "blue_cup"
    shutil.copytree(src, dst)
    (dst / "red_coffee_mug.xml").rename(dst / "blue_cup.xml")
    monkeypatch.setenv(OS.OBJECTS_ENV, "")
    OS.add_folders([tmp_path / "lab"])
    got = OS.everyday_models()
    assert got["blue_cup"].category == "mug" and got["blue_cup"].size_m == pytest.approx(models["red_coffee_mug"].size_m)


def _moved(before, after) -> float:
    init = {o.id: o.center for o in before.objects}
    return max(float(np.linalg.norm(o.center - init[o.id])) for o in after.objects if OS.is_everyday(o) and not o.held)


def test_scene_has_a_pair_and_objects_rest_seen_on_the_table(models):
    scene = OSc.sample_objects_tabletop(np.random.default_rng(3), n_objects=5, models=models)
    objs = [o for o in scene.objects if OS.is_everyday(o)]
    cats = [o.category for o in objs]
    assert len(objs) == 5 and max(cats.count(c) for c in cats) >= 2
    assert len({o.extra["model"] for o in objs}) == 5
    with SimWorld(scene, config=CFG, seed=0) as w:
        w.step(250)
        assert _moved(scene, w.export_scene()) < 0.005            # 0.5 s: nothing slides, rolls or sinks
        obs = w.render()
        seen = {obs.segment_ids[i] for i in np.unique(obs.segmentation) if i >= 0}
        assert seen & {o.id for o in objs}


def test_carried_object_is_held_and_the_table_stays_put(models):
    scene = OSc.sample_objects_tabletop(np.random.default_rng(5), n_objects=4, held=True, models=models)
    held = scene.held_object()
    assert held is not None and OS.is_everyday(held)
    with SimWorld(scene, config=CFG, seed=0) as w:
        w.step(250)
        assert w.held_object_id() == held.id
        assert _moved(scene, w.export_scene()) < 0.005


def test_enrollment_scene_names_an_everyday_object_by_its_category():
    from spatial_manip.sim.library import enrollable_keys, enrollment_scene, object_key

    assert object_key("yellow_bowl") in enrollable_keys()
    scene, obj, said = enrollment_scene(object_key("yellow_bowl"))
    assert said == {"name": "bowl", "category": "bowl", "has_front": False, "id": "yellow_bowl"}
    assert obj in scene.objects and OS.is_everyday(obj) and obj.center[2] > 0.02
    with pytest.raises(OS.ObjectSetError, match="no object model .teapot."):
        enrollment_scene("object:teapot")


def test_objects_option_on_tasks_and_bench(tmp_path):
    import argparse

    from spatial_manip.bench import runner
    from spatial_manip.commands import tasks as tasks_cli

    for mod in (tasks_cli, runner):
        p = argparse.ArgumentParser()
        mod.add_arguments(p)
        args = p.parse_args(["--objects", "/a", "--objects", "/b", "--out", str(tmp_path / "out")])
        assert args.objects == ["/a", "/b"]


def test_shipped_measurements_cover_the_suite(monkeypatch, tmp_path):
    """config/objects/libero_models.json holds every suite model as installed (else a fresh clone
    renders all 13 on first use; regenerate with python -m spatial_manip.sim.object_sets)."""
    import json

    from spatial_manip.paths import resolve_config

    shipped = json.loads(resolve_config(OS.SHIPPED_MEASUREMENTS).read_text())
    root = OS.libero_root()
    xmls = [x for s in OS.LIBERO_SETS for x in OS._model_xmls(root / s) if x.stem in OS.EVERYDAY_MODELS]
    assert len(xmls) == len(OS.EVERYDAY_MODELS)
    assert all(OS._cache_key(x) in shipped for x in xmls), "stale: run python -m spatial_manip.sim.object_sets"
