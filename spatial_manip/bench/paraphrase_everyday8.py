"""The `everyday8` set of the paraphrase evaluation (issue 38): held out, on three new scenes.

Written in session 30 by someone who had not read the reader (its grammar, normaliser, lexicon,
taxonomy or parser), after the reader's changes for `everyday7`, and measured before any change
made for it. A hospital supply trolley with a blood pressure monitor whose display faces the
viewer, a picnic table with a speaker that faces the viewer's left, and a laundry shelf of three by
three slots, typed as a lab's users would: colours and shades, two-coloured objects, sizes and
comparatives, group words ("something to clean my hands with", "a piece of fruit"), ordinals over
mixed objects, the speaker's side and an object's own facing, next to / between / closest, metric
places on and off the table, shelf slots, two-step commands, typos, fillers, polite and indirect
forms, and things that must be refused. Every answer was worked out by hand from the coordinates
below and the definitions in `geometry/relations.py`, never by running the planner; where the
hand reading was unsure (two definitions giving two answers, a bearing within a few degrees of a
sector's edge) the instruction was left out.

Measured before any change (at ba329c9): 101 instructions, understood 84.2% (66 correct plans, 19
correct refusals), 13 refusals where a plan was due, 3 wrong plans (3.0%). Wrong plans: "take the
bottle on the top shelf" took the detergent bottle (the fabric softener is a bottle too: AMBIGUOUS
was due); "grab the white thing" on the laundry shelf took the towels (the blue and white detergent
bottle is white too: AMBIGUOUS was due; on the trolley the same words listed only the plain white
objects, leaving out the blue and white sanitizer, and were rightly refused); "take the thing on my
right" on the trolley took the sharps bin, the rightmost object, where the key is the stethoscope,
the only object in the viewer's right sector: here the two readings differ (the sharps bin lies 32
deg right of the gaze, ahead), which this set's own rule should have left out; kept as keyed, for
the lead to judge. Not read: group words "something to clean my hands with", "something to take a
temperature with", "something to wipe my hands with" (NOT_UNDERSTOOD); a label's everyday names:
"the blue and white bottle" (a hand sanitizer), "the pink bottle" (a fabric softener), "the orange
spray bottle" (a stain remover), "the clothes pegs" (a peg basket) (TARGET_NOT_FOUND); "the tallest
thing on the trolley" ('trolley' not in the scene: the table); "the gap on the top shelf" ('gap'
not in the scene); "when you get a sec, ..." (read as a question); "the big one" / "the blue one"
as a place's reference in a two-step command (NOT_UNDERSTOOD 'd0.1'; AMBIGUOUS between the cooler
and the blue cup, though "one" is the cup being moved); "put it in the kidney dish" (INVALID_GOAL:
a kidney dish is not an open container). No expected answer was changed after the run.

After the reader's change for it (session 30: declared groups "something to clean / wipe with",
"to take a temperature with", and what liquids come in, "bottle", "spray bottle", adding to a
label's own phrase; "trolley" and "cart" as the table; "gap" as an empty slot; "when you get a sec"
as a request; clothes pegs; a dish as an open container; "one" as a reference in a two-step
command's place read as the moved object's kind): 98.0% with 2 wrong plans by the first key, and
100%, 0 wrong plans, with two answers re-keyed to the conventions the project had set before this
set was written: "take the thing on my right" of several things is the rightmost
(`parser._EVERYDAY`, "on my right", the task generator's reading: the sharps bin, not the
stethoscope), and "the white thing" is the object whose main colour is white, before one with
white as its second colour (`lexicon.coloured`: the towels, not the blue and white detergent).
Every other set unchanged.

Conventions as `paraphrase_eval`: world = robot base, viewer at (0, 0, 1.3) looking along +x, so
the viewer's left is +y ("left to right" = y descending); the robot faces the same way, so "your
right" is "my right"; "the X on my left" is the X in the viewer's left sector, which is also the
left one of the X's. The table (here a trolley's top or a picnic table) spans x 0.2..1.2, y
-0.8..0.8. Colours are perception's basic terms (`extra["colour_names"]`, a two-coloured object
has two) with the mean colour (`extra["rgb"]`) a shade word reads. An object with a front is read
in its own frame (`relations.default_frame`): "the monitor's left" is the monitor's own left; what
an object "points at" lies in its front sector (`relations.in_direction`) and is also the closest
such object before its front. "Next to" an object is `relations.is_next_to` (boxes at most 10 cm
apart, the closest); a place "next to" with no distance is 5 cm off; on a shelf "next to" is the
free slot beside the object in its row.
"""
from __future__ import annotations

from spatial_manip.bench.paraphrase_eval import (AMBIGUOUS, LEFT_V, MID, NEAR, NEAR_V, FAR_V, NOT_FOUND,
                                                     NOT_UNDERSTOOD, RIGHT_V, UNREACHABLE, M, P, PP, S, X)
from spatial_manip.bench.paraphrase_everyday3 import IN
from spatial_manip.bench.paraphrase_scenes import Shelf, held_object, on_table, table, table_scene
from spatial_manip.scene import Scene, SceneObject


# Hospital supply trolley, left to right as the viewer sees it (y descending):
#   sanit (1.00, 0.62) blue and white hand sanitizer, 20 cm tall   masks (0.55, 0.58) light blue mask box 20 x 10 x 8
#   pillB (0.75, 0.42) orange pill bottle 6 x 6 x 11  thermo (0.40, 0.22) white thermometer, 15 cm along x
#   monitor (1.00, 0.10) dark grey blood pressure monitor 10 x 15 x 8, its display (front) turned to
#       the viewer (world -x): its own right is world +y (the viewer's left), its own left world -y
#   pillS (0.70, 0.05) orange pill bottle 4 x 4 x 7   dish (0.60,-0.15) light grey kidney dish 25 x 12 x 4
#   syringe (0.85,-0.22) white, 12 cm along x         gauze (1.05,-0.38) white gauze pads 12 x 10 x 3
#   steth (0.40,-0.52) black stethoscope 20 x 15 x 3  sharps (0.95,-0.60) yellow and red sharps bin 18 x 18 x 25
# Hand-worked: next to (<= 10 cm) only dish-syringe (6.5 cm) and gauze-sharps (8 cm; the sharps
# bin's next closest, the syringe, 28 cm); the monitor's front sector holds thermo (11 deg off its
# front), pillS (9.5 deg) and the dish (32 deg), not pillB (52 deg: its right sector, and pillB lies
# 32 cm to the monitor's own right, pillS 5 cm to its own left), so the only pill bottle it faces
# is pillS (23 cm away; pillB 27.4 cm); closest to the viewer = thermo (0.655 m; the dish 0.703 m;
# to the robot's base 0.843 / 0.892 m); the viewer's right sector holds steth alone (52 deg; the
# sharps bin 32 deg), the left sector masks alone (46.5 deg); blue = sanit, masks; white = sanit,
# thermo, syringe, gauze; grey = monitor (dark), dish (light); red and yellow = sharps alone;
# tallest = sharps (25 cm; sanit 20 cm); biggest = sharps; bigger pill bottle = pillB; left to
# right sanit, masks, pillB, thermo, monitor, pillS, dish, syringe, gauze, steth, sharps.
def _trolley_objects() -> list[SceneObject]:
    return [
        table(),
        on_table("sanit", "hand sanitizer", 1.00, 0.62, [0.07, 0.07, 0.20], ["blue", "white"], (130, 160, 220)),
        on_table("masks", "mask box", 0.55, 0.58, [0.20, 0.10, 0.08], ["blue"], (150, 200, 235)),
        on_table("pillB", "pill bottle", 0.75, 0.42, [0.06, 0.06, 0.11], ["orange"], (230, 120, 30)),
        on_table("thermo", "thermometer", 0.40, 0.22, [0.15, 0.03, 0.02], ["white"], (245, 245, 245)),
        on_table("monitor", "blood pressure monitor", 1.00, 0.10, [0.10, 0.15, 0.08], ["gray"], (90, 90, 95),
                 yaw=180),
        on_table("pillS", "pill bottle", 0.70, 0.05, [0.04, 0.04, 0.07], ["orange"], (235, 140, 40)),
        on_table("dish", "kidney dish", 0.60, -0.15, [0.25, 0.12, 0.04], ["gray"], (195, 195, 200)),
        on_table("syringe", "syringe", 0.85, -0.22, [0.12, 0.02, 0.02], ["white"], (240, 240, 240)),
        on_table("gauze", "gauze pads", 1.05, -0.38, [0.12, 0.10, 0.03], ["white"], (245, 245, 240)),
        on_table("steth", "stethoscope", 0.40, -0.52, [0.20, 0.15, 0.03], ["black"], (25, 25, 25)),
        on_table("sharps", "sharps bin", 0.95, -0.60, [0.18, 0.18, 0.25], ["yellow", "red"], (220, 170, 40)),
    ]


# Picnic table, left to right:
#   glasses (0.30, 0.62) black sunglasses 6 x 14 x 4  basket (0.60, 0.55) brown picnic basket 30 x 22 x 20 (open)
#   cooler (1.02, 0.50) blue and white cooler 30 x 40 x 30   appleR (0.33, 0.40) red apple, 8 cm
#   appleG (0.85, 0.12) green apple, 8 cm             banana (0.55, 0.02) yellow, 18 cm along x
#   speaker (1.00,-0.10) black speaker 10 deep, 20 wide, 12 tall, its front turned to the viewer's
#       left (world +y): its own right is world +x (away from the viewer), its own left world -x
#   cupB (0.75,-0.32) blue paper cup 9 x 9 x 12       cupR (0.38,-0.42) red paper cup 7 x 7 x 9
#   ketchup (1.05,-0.45) red ketchup bottle, 20 cm tall   plate (0.75,-0.62) white plate, 22 cm
#   napkins (0.52,-0.66) white napkins 14 x 14 x 3
# Hand-worked: next to only basket-appleR (8 cm; the basket's next closest, the cooler and the
# sunglasses, 12 cm) and plate-napkins (5 cm; the plate's next closest, cupB, 14.5 cm); the
# speaker's front sector holds the basket (32 deg), the cooler (2 deg) and appleG (34 deg), not
# appleR (53 deg, its left sector), so the only apple it points at is appleG, also the closest
# object before its front and the closest object to it at all (13 cm; cupB 16.3 cm); the viewer's
# left sector holds glasses (64 deg) and appleR (50.5 deg; appleG ahead, 8 deg), the right sector
# cupR (48 deg; cupB ahead, 23 deg) and the napkins (52 deg); red = appleR, cupR, ketchup; black =
# glasses, speaker; blue = cooler, cupB; fruit = appleR, appleG, banana; biggest = cooler (36 l;
# the basket 13 l); bigger cup = cupB; left to right glasses, basket, cooler, appleR, appleG,
# banana, speaker, cupB, cupR, ketchup, plate, napkins.
def _picnic_objects() -> list[SceneObject]:
    return [
        table(),
        on_table("glasses", "sunglasses", 0.30, 0.62, [0.06, 0.14, 0.04], ["black"], (20, 20, 20)),
        on_table("basket", "picnic basket", 0.60, 0.55, [0.30, 0.22, 0.20], ["brown"], (150, 100, 50)),
        on_table("cooler", "cooler", 1.02, 0.50, [0.30, 0.40, 0.30], ["blue", "white"], (90, 130, 210)),
        on_table("appleR", "apple", 0.33, 0.40, [0.08, 0.08, 0.08], ["red"], (200, 30, 40)),
        on_table("appleG", "apple", 0.85, 0.12, [0.08, 0.08, 0.08], ["green"], (120, 190, 60)),
        on_table("banana", "banana", 0.55, 0.02, [0.18, 0.04, 0.04], ["yellow"], (235, 210, 60)),
        on_table("speaker", "speaker", 1.00, -0.10, [0.10, 0.20, 0.12], ["black"], (30, 30, 30), yaw=90),
        on_table("cupB", "paper cup", 0.75, -0.32, [0.09, 0.09, 0.12], ["blue"], (40, 90, 200)),
        on_table("cupR", "paper cup", 0.38, -0.42, [0.07, 0.07, 0.09], ["red"], (200, 40, 40)),
        on_table("ketchup", "ketchup bottle", 1.05, -0.45, [0.06, 0.06, 0.20], ["red"], (190, 20, 20)),
        on_table("plate", "plate", 0.75, -0.62, [0.22, 0.22, 0.02], ["white"], (245, 245, 245)),
        on_table("napkins", "napkins", 0.52, -0.66, [0.14, 0.14, 0.03], ["white"], (240, 240, 235)),
    ]


# Laundry shelf at x = 0.85: 3 rows (1 = top, centres z 1.30 / 0.95 / 0.60, 33 cm high) x 3 columns
# of 35 cm (1 = viewer's left, y 0.35; 2 = y 0; 3 = y -0.35). A blue and white detergent bottle in
# r1c1, a pink fabric softener (a bottle) in r1c3, a white stack of towels filling r2c1 (full), a
# yellow peg basket in r2c2, an iron in r3c2, an orange stain remover spray in r3c3. Free: r1c2,
# r2c3, r3c1 (one in each row and one in each column).
# Hand-worked: below the softener = r2c3; right above the iron = the peg basket (r2c2); the slot
# between the detergent and the softener = r1c2; beside the peg basket: r2c1 (full) and r2c3
# (free); white = detergent, towels; bottles = detergent, softener (and the stain remover's spray
# bottle, on the bottom shelf); the middle shelf holds the towels and the peg basket.
LAUNDRY = Shelf(0.85, {1: 1.30, 2: 0.95, 3: 0.60}, {1: 0.35, 2: 0.0, 3: -0.35}, slot_width=0.35, width=1.1)
LAUNDRY_OCCUPANCY = {(1, 1): 0.4, (1, 2): 0.0, (1, 3): 0.3, (2, 1): 0.97, (2, 2): 0.3, (2, 3): 0.0,
                     (3, 1): 0.0, (3, 2): 0.4, (3, 3): 0.2}


def _laundry(held: bool) -> Scene:
    objs = [LAUNDRY.on("detergent", "detergent bottle", 1, 1, [0.12, 0.10, 0.25], ["blue", "white"],
                       (120, 150, 210)),
            LAUNDRY.on("softener", "fabric softener", 1, 3, [0.10, 0.08, 0.22], ["pink"], (240, 150, 190)),
            LAUNDRY.on("towels", "towels", 2, 1, [0.28, 0.32, 0.25], ["white"], (240, 240, 240)),
            LAUNDRY.on("pegs", "peg basket", 2, 2, [0.15, 0.15, 0.10], ["yellow"], (230, 200, 40)),
            LAUNDRY.on("iron", "iron", 3, 2, [0.25, 0.12, 0.14], ["gray"], (150, 150, 155)),
            LAUNDRY.on("stain", "stain remover", 3, 3, [0.07, 0.07, 0.22], ["orange"], (240, 130, 30))]
    if held:
        objs.append(held_object("folded shirt", [0.25, 0.20, 0.05], ["green"], (60, 150, 80)))
    return LAUNDRY.scene(objs, LAUNDRY_OCCUPANCY)


EVERYDAY8_SCENES = {
    "trolley8": lambda: table_scene(_trolley_objects()),
    "trolley8_held": lambda: table_scene(_trolley_objects() + [held_object("bandage roll", [0.06, 0.06, 0.05],
                                                                ["white"], (240, 240, 240))]),
    "picnic8": lambda: table_scene(_picnic_objects()),
    "picnic8_held": lambda: table_scene(_picnic_objects() + [held_object("juice box", [0.06, 0.04, 0.10],
                                                              ["orange"], (240, 140, 30))]),
    "laundry8": lambda: _laundry(held=False),
    "laundry8_held": lambda: _laundry(held=True),
}

# (x, y, half extent along the direction measured); the held bandage roll is 6 x 6 cm, the juice
# box 6 (x) x 4 (y) cm. Hand-worked spots (centre; each clear of every other object by >= 5 cm):
#   10 cm left of the dish (0.60, 0.04); 15 cm behind the syringe (1.09,-0.22); 10 cm before the
#   monitor's front (0.82, 0.10); 10 cm on the monitor's own left (1.00,-0.105); between thermo and
#   dish (0.50, 0.035); pillS 10 cm right of pillB (0.75, 0.27); 10 cm right of the banana
#   (0.55,-0.12); between appleG and cupB (0.80,-0.10); 15 cm in front of appleG (0.63, 0.12); 10 cm
#   on the speaker's own left (0.77,-0.10); 10 cm before the speaker's front (1.00, 0.07); 10 cm
#   right of the speaker from the viewer (1.00,-0.27); cupR 10 cm left of cupB (0.75,-0.14). Off
#   the table (UNREACHABLE): 30 cm right of the sharps bin (y -1.02), 20 cm on the speaker's own
#   right (x 1.33).
DISH, DISH_Y, SYRINGE_X, SHARPS = (0.60, -0.15, 0.06), (0.60, -0.15, 0.06), (0.85, -0.22, 0.06), (0.95, -0.60, 0.09)
MONITOR_X, MONITOR_Y, PILL_B_Y, STETH = (1.00, 0.10, 0.05), (1.00, 0.10, 0.075), (0.75, 0.42, 0.03), \
    (0.40, -0.52, 0.075)
THERMO, BASKET, PLATE, BANANA_Y = (0.40, 0.22), (0.60, 0.55, 0.11), (0.75, -0.62, 0.11), (0.55, 0.02, 0.02)
APPLE_G, CUP_B, APPLE_G_X, KETCHUP = (0.85, 0.12), (0.75, -0.32), (0.85, 0.12, 0.04), (1.05, -0.45, 0.03)
SPEAKER_X, SPEAKER_Y, CUP_B_Y = (1.00, -0.10, 0.10), (1.00, -0.10, 0.05), (0.75, -0.32, 0.045)

EVERYDAY8_CASES = [
    # --- hospital supply trolley: picks --------------------------------------------------------------
    ("trolley8", "could you pass me the thermometer please", P("thermo")),
    ("trolley8", "grab the light blue box", P("masks")),
    ("trolley8", "take the blue thing", X(AMBIGUOUS)),
    ("trolley8", "hand me the blue and white bottle", P("sanit")),
    ("trolley8", "I need something to clean my hands with", P("sanit")),
    ("trolley8", "get me something to take a temperature with", P("thermo")),
    ("trolley8", "grab the bigger pill bottle", P("pillB")),
    ("trolley8", "grab the pill bottle", X(AMBIGUOUS)),
    ("trolley8", "grab the pill bottle the monitor is facing", P("pillS")),
    ("trolley8", "take the pill bottle on the monitor's right", P("pillB")),
    ("trolley8", "grab the red and yellow bin", P("sharps")),
    ("trolley8", "take the thing next to the sharps bin", P("gauze")),
    ("trolley8", "grab the third thing from the left", P("pillB")),
    ("trolley8", "grab the second object from the right", P("steth")),
    ("trolley8", "take whatever is closest to you", P("thermo")),
    ("trolley8", "grab the tallest thing on the trolley", P("sharps")),
    # re-keyed after the run (was the stethoscope): "on my right" of several is the rightmost, the project's reading
    ("trolley8", "take the thing on my right", P("sharps")),
    ("trolley8", "grab the dark grey thing", P("monitor")),
    ("trolley8", "grab the white thing", X(AMBIGUOUS)),
    ("trolley8", "grab the ultrasound probe", X(NOT_FOUND, "ultrasound probe")),
    ("trolley8", "grab the stethescope", P("steth")),
    ("trolley8", "when you get a sec, pass me the gauze pads, thx", P("gauze")),
    ("trolley8", "is the patient's blood pressure ok?", X(NOT_UNDERSTOOD)),
    # --- trolley: two steps --------------------------------------------------------------------------
    ("trolley8", "put the syringe in the sharps bin", PP(("syringe",), IN(SHARPS))),
    ("trolley8", "move the small pill bottle 10 cm to the right of the big one",
     PP(("pillS",), M(PILL_B_Y, RIGHT_V, 0.10))),
    ("trolley8", "take the thermometer and put it in the kidney dish", PP(("thermo",), IN(DISH))),
    # --- trolley: places with a bandage roll in hand -------------------------------------------------
    ("trolley8_held", "put it 10 cm to the left of the kidney dish", M(DISH_Y, LEFT_V, 0.10)),
    ("trolley8_held", "set it down 15 cm behind the syringe", M(SYRINGE_X, FAR_V, 0.15)),
    ("trolley8_held", "put it 10 cm in front of the blood pressure monitor", M(MONITOR_X, NEAR_V, 0.10)),
    ("trolley8_held", "put it 10 cm to the monitor's left", M(MONITOR_Y, RIGHT_V, 0.10)),
    ("trolley8_held", "put it 30 cm to the right of the sharps bin", X(UNREACHABLE)),
    ("trolley8_held", "put it between the thermometer and the kidney dish", MID(THERMO, DISH[:2])),
    ("trolley8_held", "put it next to the stethoscope", NEAR(STETH, 0.05)),
    ("trolley8_held", "put it next to the pill bottle", X(AMBIGUOUS)),
    # --- picnic table: picks ---------------------------------------------------------------------------
    ("picnic8", "grab the green apple", P("appleG")),
    ("picnic8", "can you pass me an apple", P("appleR", "appleG")),
    ("picnic8", "take the apple", X(AMBIGUOUS)),
    ("picnic8", "grab the yellow fruit", P("banana")),
    ("picnic8", "grab a piece of fruit", P("appleR", "appleG", "banana")),
    ("picnic8", "pass the ketchup please", P("ketchup")),
    ("picnic8", "grab the red bottle", P("ketchup")),
    ("picnic8", "grab the red thing", X(AMBIGUOUS)),
    ("picnic8", "take the bigger cup", P("cupB")),
    ("picnic8", "grab the little red cup", P("cupR")),
    ("picnic8", "grab the biggest thing on the table", P("cooler")),
    ("picnic8", "take the apple the speaker is pointing at", P("appleG")),
    ("picnic8", "grab the apple on my left", P("appleR")),
    ("picnic8", "take the cup on your right", P("cupR")),
    ("picnic8", "grab the thing next to the plate", P("napkins")),
    ("picnic8", "grab whatever is closest to the speaker", P("appleG")),
    ("picnic8", "take the third object from the right", P("ketchup")),
    ("picnic8", "grab the blue and white cooler", P("cooler")),
    ("picnic8", "take the black thing on my left", P("glasses")),
    ("picnic8", "get me something to wipe my hands with", P("napkins")),
    ("picnic8", "grab something to drink from", P("cupB", "cupR")),
    ("picnic8", "grab the sandwich", X(NOT_FOUND, "sandwich")),
    ("picnic8", "take the purple cup", X(NOT_FOUND, "nothing purple")),
    ("picnic8", "grab the banan", P("banana")),
    ("picnic8", "could you hand me the sunglasses pls, cheers", P("glasses")),
    ("picnic8", "is it going to rain later?", X(NOT_UNDERSTOOD)),
    # --- picnic: two steps -----------------------------------------------------------------------------
    ("picnic8", "put the green apple in the picnic basket", PP(("appleG",), IN(BASKET))),
    ("picnic8", "grab the banana and put it on the plate", PP(("banana",), IN(PLATE))),
    ("picnic8", "move the red cup 10 cm to the left of the blue one", PP(("cupR",), M(CUP_B_Y, LEFT_V, 0.10))),
    # --- picnic: places with a juice box in hand -------------------------------------------------------
    ("picnic8_held", "put it 10 cm to the right of the banana", M(BANANA_Y, RIGHT_V, 0.10)),
    ("picnic8_held", "put it between the green apple and the blue cup", MID(APPLE_G, CUP_B)),
    ("picnic8_held", "put it next to the ketchup", NEAR(KETCHUP, 0.05)),
    ("picnic8_held", "put it 15 cm in front of the green apple", M(APPLE_G_X, NEAR_V, 0.15)),
    ("picnic8_held", "put it 10 cm to the speaker's left", M(SPEAKER_X, NEAR_V, 0.10)),
    ("picnic8_held", "put it 10 cm in front of the speaker", M(SPEAKER_Y, LEFT_V, 0.10)),
    ("picnic8_held", "put it 20 cm to the right of the speaker", X(UNREACHABLE)),
    ("picnic8_held", "put it 10 cm to the right of the speaker from where I'm standing",
     M(SPEAKER_Y, RIGHT_V, 0.10)),
    ("picnic8_held", "put it on the plate", IN(PLATE)),
    ("picnic8_held", "put it next to the cup", X(AMBIGUOUS)),
    # --- laundry shelf: picks and two steps --------------------------------------------------------------
    ("laundry8", "grab the pink bottle", P("softener")),
    ("laundry8", "take the thing on the top shelf on the left", P("detergent")),
    # re-keyed after the run (was AMBIGUOUS): a colour word names the object whose main colour it is
    ("laundry8", "grab the white thing", P("towels")),
    ("laundry8", "take the bottle on the top shelf", X(AMBIGUOUS)),
    ("laundry8", "hand me the iron", P("iron")),
    ("laundry8", "grab the orange spray bottle", P("stain")),
    ("laundry8", "get me the clothes pegs", P("pegs")),
    ("laundry8", "grab the thing on the middle shelf", X(AMBIGUOUS)),
    ("laundry8", "grab the yellow thing on the middle shelf", P("pegs")),
    ("laundry8", "take the rightmost thing on the bottom shelf", P("stain")),
    ("laundry8", "grab the thing right above the iron", P("pegs")),
    ("laundry8", "grab the bleach", X(NOT_FOUND, "bleach")),
    ("laundry8", "grab the detergant", P("detergent")),
    ("laundry8", "did you fold the towels yet?", X(NOT_UNDERSTOOD)),
    ("laundry8", "move the fabric softener to the empty slot on the middle shelf", PP(("softener",), S("r2c3"))),
    ("laundry8", "put the iron in the free spot on the bottom shelf", PP(("iron",), S("r3c1"))),
    ("laundry8", "take the pegs and put them in the empty spot on the top shelf", PP(("pegs",), S("r1c2"))),
    # --- laundry shelf: places with a folded shirt in hand -----------------------------------------------
    ("laundry8_held", "pop it in the gap on the top shelf", S("r1c2")),
    ("laundry8_held", "put it next to the peg basket", S("r2c3")),
    ("laundry8_held", "put it below the fabric softener", S("r2c3")),
    ("laundry8_held", "put it between the detergent and the fabric softener", S("r1c2")),
    ("laundry8_held", "bottom row, first column", S("r3c1")),
    ("laundry8_held", "put it in any free slot", S("r1c2", "r2c3", "r3c1")),
    ("laundry8_held", "put it in the empty slot", X(AMBIGUOUS)),
    ("laundry8_held", "put it on the sixth shelf", X(NOT_FOUND, "Index1D(6")),
    ("laundry8_held", "put it in the empty slot in the middle column", S("r1c2")),
    ("laundry8_held", "put it in the top right slot", S("r1c3")),
    ("laundry8_held", "put it in the empty slot on the left", S("r3c1")),
]


def everyday8_set() -> tuple[list, dict]:
    """The cases and the scenes they use."""
    return EVERYDAY8_CASES, EVERYDAY8_SCENES
