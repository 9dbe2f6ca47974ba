"""Of several places the words allow, the program chooses one the arm reaches (geometry.reach, the
launched arm's rule, which the planner is given): a slot in reach before a nearer one that is not,
and for "beside X" the freest side that rests and is in reach, not a free corner beyond it
(objects-93-00011: "set it down beside the pillar bookend" chose the table's far corner behind it,
0.93 m away, and ended UNREACHABLE)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from spatial_manip.geometry import relations as rel
from spatial_manip.geometry.reach import Reach, slot_wrist
from spatial_manip.control.config import load_reach
from spatial_manip.reasoning.examples import rot_z, shelf_scene
from spatial_manip.reasoning.program import execute
from spatial_manip.program_text import parse_program
from spatial_manip.reasoning.mssr_loop import Answer, Recorder, evaluate_answer
from spatial_manip.reasoning.vlm_tools import ToolSet
from spatial_manip.scene import Scene, SceneObject, Viewpoint

EMPTY_SLOTS = "place(unique(filterAttr$Empty(filterSlot(SHELF))))"      # r1c1, r1c3 and r2c2
# an arm whose shoulder stands 1.6 m above its base: the top row's wrists (0.84 m from it) are in
# reach, the middle row's (0.91 m) are not, though the middle row is nearer the base
HIGH_SHOULDER = Reach(shoulder_z_m=1.6, reach_m=0.87, slot_reach_m=0.87)


def _flag(scene: Scene, out_of_reach: set) -> Scene:
    regions = [replace(s, extra={**s.extra, "reachable": s.id not in out_of_reach}) for s in scene.regions]
    return Scene(scene.viewer, scene.robot, scene.objects, regions)


def _placed_slot(scene: Scene, res) -> str:
    return next(s.id for s in scene.regions if rel.point_in_box(res.place_pose.position, s))


def test_a_slot_out_of_reach_gives_way_to_one_the_words_allow_in_reach():
    scene = shelf_scene()
    res = execute(EMPTY_SLOTS, scene, reach=HIGH_SHOULDER)
    assert res.targets == ["slot_r1c1", "slot_r1c3", "slot_r2c2"]              # the answer set is the words'
    assert _placed_slot(scene, res) in ("slot_r1c1", "slot_r1c3")
    assert [t["out_of_reach"] for t in res.trace if t.get("node") == "reach"] == [["slot_r2c2"]]


def test_a_slot_short_of_full_stretch_comes_before_a_nearer_one_at_it():
    """An arm whose wrist goes 0.84 m from its shoulder only at full stretch (slot_reach_m) and 0.80
    m short of it (reach_m): the top row (0.84 m) is reached only at full stretch, the middle row
    (0.91 m) not at all; with reach_m raised to cover the top row, it is chosen short of stretch.
    A slot at full stretch is taken only when none short of it is allowed (books place 109: a flat
    set-down into the bottom slot 0.97 m out needed a wrist flip while nearer-to-stretch slots
    were allowed)."""
    scene = shelf_scene()
    stretch = Reach(shoulder_z_m=1.6, reach_m=0.80, slot_reach_m=0.87)
    tiers = {s: stretch.slot_tier(scene.get(s), scene.robot.position) for s in ("slot_r1c1", "slot_r1c3", "slot_r2c2")}
    assert tiers == {"slot_r1c1": 1, "slot_r1c3": 1, "slot_r2c2": 2}
    assert _placed_slot(scene, execute(EMPTY_SLOTS, scene, reach=stretch)) in ("slot_r1c1", "slot_r1c3")
    comfortable = Reach(shoulder_z_m=1.6, reach_m=0.87, slot_reach_m=0.95)      # r2c2 now at full stretch
    assert comfortable.slot_tier(scene.get("slot_r2c2"), scene.robot.position) == 1
    assert _placed_slot(scene, execute(EMPTY_SLOTS, scene, reach=comfortable)) in ("slot_r1c1", "slot_r1c3")


def test_when_no_slot_the_words_allow_is_in_reach_the_nearest_is_still_planned():
    """The real cell's UR5e (arm.yaml: 0.80 m into a slot until measured) reaches none of r1c1, r1c3
    and r2c2 (r2c2's wrist is 1.04 m from its shoulder, beyond even the simulated arm's 1.0 m). A
    flag a workspace file carries (captures wrote arm.yaml's verdict) is not the launched arm's and
    counts for nothing."""
    scene = _flag(shelf_scene(), {"slot_r1c1", "slot_r1c3"})
    assert not load_reach().reaches_into(scene.get("slot_r2c2"), scene.robot.position)
    res = execute(EMPTY_SLOTS, scene, reach=load_reach())
    assert _placed_slot(scene, res) == "slot_r2c2"      # the arm's own check says UNREACHABLE
    assert not [t for t in res.trace if t.get("node") == "reach"]


def test_a_slot_is_reached_through_its_face_towards_the_robot():
    """The wrist enters 6 cm past the slot's front face (the one nearest the robot), 16 cm over its
    floor: turning the slot round (its depth axis the other way) or standing the robot behind the
    shelf moves the wrist to the face nearest the robot, not across the slot."""
    slot = shelf_scene().get("slot_r2c2")         # depth 0.30 m from x 0.75 to 1.05, floor at z 0.81
    assert np.allclose(slot_wrist(slot), [0.75 - 0.096, 0.0, 0.97])
    assert np.allclose(slot_wrist(replace(slot, rotation=rot_z(180))), [0.75 - 0.096, 0.0, 0.97])
    assert np.allclose(slot_wrist(slot, base=[2.0, 0.0, 0.0]), [1.05 + 0.096, 0.0, 0.97])


def test_the_model_s_programs_place_with_the_launched_arm_s_reach():
    """vlm_tools' run_program chose slots with arm.yaml's reach whatever arm was launched; it runs
    the program with the reach the planner was given, as the program planner does."""
    scene = shelf_scene()
    for reach, slots in ((HIGH_SHOULDER, ("slot_r1c1", "slot_r1c3")), (load_reach(), ("slot_r2c2",))):
        out = ToolSet(scene, reach=reach).call("run_program", {"program": EMPTY_SLOTS})
        assert out.ok, out.error
        p = out.result["place_pose"]["position"]
        assert next(s.id for s in scene.regions if rel.point_in_box(p, s)) in slots



def test_the_model_s_final_answer_places_with_the_launched_arm_s_reach():
    """The model's final answer (a program, or the slots it names as TARGETS) is run like its
    run_program calls: with the launched arm's reach, not arm.yaml's (review of d564158)."""
    scene = shelf_scene()
    program = parse_program(EMPTY_SLOTS)
    for answer in (Answer(program=program), Answer(targets=["slot_r1c1", "slot_r1c3", "slot_r2c2"])):
        for reach, slots in ((HIGH_SHOULDER, ("slot_r1c1", "slot_r1c3")), (load_reach(), ("slot_r2c2",))):
            res = evaluate_answer(answer, scene, "place", None, Recorder(), 0.0, ToolSet(scene, reach=reach))
            p = res.place_pose.position
            assert next(s.id for s in scene.regions if rel.point_in_box(p, s)) in slots, (answer, reach)


def test_a_targets_answer_and_a_program_pass_over_the_same_slots_out_of_reach():
    """One ranking (program.slot_to_place) for both: the model's TARGETS answer places where the
    program does and says which nearer slots it passed over, as the program's trace does."""
    scene = shelf_scene()
    program = execute(EMPTY_SLOTS, scene, reach=HIGH_SHOULDER)
    targets = evaluate_answer(Answer(targets=program.targets), scene, "place", None, Recorder(), 0.0,
                              ToolSet(scene, reach=HIGH_SHOULDER))
    assert np.allclose(targets.place_pose.position, program.place_pose.position)
    passed_over = [e["out_of_reach"] for e in targets.trace if e.get("event") == "reach"]
    assert passed_over == [t["out_of_reach"] for t in program.trace if t.get("node") == "reach"] == [["slot_r2c2"]]


def _bookend_scene() -> Scene:
    """objects-93-00011's table: the robot's base at the origin level with the table top, a pillar
    bookend near the table's back right corner (viewer's left), a lying bottle in the hand."""
    up = np.eye(3)
    objects = [
        SceneObject("table", "table", "table", [0.55, 0.0, -0.35], [0.6, 1.4, 0.7], rot_z(180), True),
        SceneObject("bottle_1", "bottle", "bottle", [0.466, -0.136, 0.055], [0.05, 0.033, 0.114], up),
        SceneObject("carton_2", "carton", "carton", [0.536, 0.084, 0.026], [0.054, 0.143, 0.055], up),
        SceneObject("bottle_3", "bottle", "bottle", [0.399, 0.388, 0.017], [0.065, 0.149, 0.043], up),
        SceneObject("near_1", "pillar bookend", "bookend", [0.619, 0.39, 0.065], [0.07, 0.16, 0.13], rot_z(180)),
        SceneObject("held", "bottle", "bottle", [0.29, -0.185, 0.625], [0.064, 0.147, 0.044], up, held=True),
    ]
    return Scene(Viewpoint([-0.61, 0.29, 0.98], [0.65, -0.14, -0.75]), Viewpoint([0, 0, 0], [1, 0, 0]), objects, [])


def test_beside_an_object_near_the_far_corner_is_the_free_side_in_reach():
    scene = _bookend_scene()
    res = execute("place(metric$Near(0.05, near_1), pose=keep)", scene)
    p = np.asarray(res.place_pose.position)
    top = p[2] + 0.022
    assert load_reach().reaches_from_above([p[0], p[1], top])
    assert np.linalg.norm(p[:2]) < 0.75                 # was (0.75, 0.54): 0.93 m out, behind the bookend
    placed = SceneObject("p", "bottle", "bottle", p, [0.064, 0.147, 0.044], np.eye(3))
    assert rel.distance(placed, scene.get("near_1")) <= rel.NEXT_TO_MAX_M     # still beside it
    note = next(t for t in res.trace if t.get("node") == "reach")
    assert note["out_of_reach"] and all(not load_reach().reaches_from_above([x, y, z + 0.022]) for x, y, z in note["out_of_reach"])


def test_reach_from_above_is_measured_from_the_robots_base():
    assert load_reach().reaches_from_above([0.5, 0.2, 0.05])
    assert not load_reach().reaches_from_above([0.75, 0.54, 0.05])
    assert load_reach().reaches_from_above([1.0, 0.2, 0.05], base=[0.5, 0.0, 0.0])


def test_the_reach_is_the_one_of_the_arm_the_planner_was_given():
    """The planner read arm.yaml's model at plan time, whatever arm the graph was started with
    (planner_node's ur_type). Given a shorter arm's reach (the agent passes the one of its
    arm_config_file, arm_backend and ur_type), the place beside the bookend is one that arm
    reaches, nearer than the default arm's."""
    from spatial_manip.reasoning.planner import make_planner

    scene, usual = _bookend_scene(), load_reach()
    short = Reach(usual.shoulder_z_m, reach_m=0.7)
    default = np.asarray(make_planner("program").plan(scene, "set it down beside the pillar bookend").place_pose.position)
    assert not short.reaches_from_above(default + [0, 0, 0.022])
    res = make_planner("program", reach=short).plan(scene, "set it down beside the pillar bookend")
    p = np.asarray(res.place_pose.position)
    assert short.reaches_from_above(p + [0, 0, 0.022]) and usual.reaches_from_above(p + [0, 0, 0.022])
