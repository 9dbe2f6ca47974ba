"""The `everyday10` set of the paraphrase evaluation (issue 38): held out, on three new scenes.

Written in session 32 by someone who had not read the reader (its grammar, normaliser, lexicon,
taxonomy or parser), after the reader's changes for `everyday9`, and measured before any change
made for it. A bedside table with an alarm clock whose face turns to the viewer's left, a florist's
bench with a watering can whose spout points away from the viewer, and a first-aid cabinet of
three rows by three slots, typed as a lab's users would: colours and shades, two-coloured objects,
sizes and comparatives, group words ("something to blow my nose on", "something to drink from",
"something to tie the bouquet with", "a bunch of flowers"), ordinals over mixed objects, the
speaker's side and an object's own facing (where the two give different answers: "the fruit in
front of the alarm clock" is the clementine on the viewer's left, as the clock faces that way,
while from the viewer both fruit are in front of it; "15 cm in front of the alarm clock" is towards
the viewer's left, "10 cm in front of the watering can" away from the viewer), next to / between /
closest, metric places on and off the table, shelf slots, two-step commands, typos, fillers, polite
and indirect forms, and things that must be refused. Every answer was worked out by hand from the
coordinates below and the definitions in `geometry/relations.py`, never by running the planner;
where the hand reading was unsure (two definitions giving two answers, a bearing within a few
degrees of a sector's edge, two distances within 3 cm, the viewer and the robot's base ranking
"closest to you" differently) the instruction was left out. Keys follow the convention the project
set before this set was written (`everyday8`'s docstring): a colour word names the object whose
main colour it is ("the pink thing" is the hand cream, not the white and pink tissue box; "the
white thing" is the lamp or the tissue box). "The X on the left" is asked only where the left one
of the X's is also the one X in the table's left half (`relations.part_of`).

Measured before any change (at 0e971af): 115 instructions, understood 82.6% (73 correct plans, 22
correct refusals), 18 refusals where a plan was due, 2 wrong plans: "grab the fruit" took the
apple where AMBIGUOUS was due and "could I have some fruit" offered the apple alone (the
clementine not read as a fruit). Not read: the clementine as a fruit also in "the fruit in front
of the alarm clock" (TARGET_NOT_FOUND: the apple alone, behind the clock's face, was tried);
"flowers" as a group of roses and tulips ("the yellow flowers", "the flowers on the right", "the
flowers closest to you": TARGET_NOT_FOUND 'flowers'; "grab the flowers": TARGET_NOT_FOUND where
AMBIGUOUS was due; "a bunch of flowers": 'bunch' corrected to 'bench', NOT_UNDERSTOOD); group
words "something to blow my nose on" and "something to tie the bouquet with" (NOT_UNDERSTOOD); a
label's everyday names and forms: "the secateurs" (pruning shears), "the plant mister" (a spray
bottle), "the roll of wrapping paper" ('roll' not found), "my glass of water" ('water' not read),
"the green and white box" (a first aid kit: TARGET_NOT_FOUND naming the colour as missing); polite
and indirect forms "sorry to bother you, can you ..." and "I'd love my glasses case if you can
reach it" (NOT_UNDERSTOOD); refused with another code than due: "put it 10 cm left of the book"
(NOT_UNDERSTOOD 'd0.1' 'left' where TARGET_NOT_FOUND was due; "10 cm left of the tulips" is read).
Two more misses of that run were keyed wrong by my own hand-check and were taken out of the set
after it (the figure above counts them as misses; without them the run is 95 of 113, 84.1%):
"take the vase on the left" (keyed the white and blue vase, the left one; but both vases stand in
the table's left half, `relations.part_of`, so two definitions give two answers, which this set
leaves out; the planner said AMBIGUOUS) and "put the roses in the bucket" (a 30 x 12 cm bunch lying
flat fits a 28 x 28 cm bucket at no yaw, 29.7 cm across at best at 45 deg, and a place keeps the
pose; the planner said UNREACHABLE). No other expected answer was changed after the run.

Conventions as `paraphrase_eval`: world = robot base, viewer at (0, 0, 1.3) looking along +x, so
the viewer's left is +y ("left to right" = y descending); the robot faces the same way, so "your
right" is "my right"; "the X on my left" is the X in the viewer's left sector, which is also the
left one of the X's. The table (here a bedside table or a florist's bench) spans x 0.2..1.2, y
-0.8..0.8. Colours are perception's basic terms (`extra["colour_names"]`, a two-coloured object
has two) with the mean colour (`extra["rgb"]`) a shade word reads. An object with a front is read
in its own frame (`relations.default_frame`): "in front of the alarm clock" is before its face.
"Next to" an object is the closest within 30 cm (`relations.next_to`); a place "next to" with no
distance is 5 cm off; on a shelf "next to" is the free slot beside the object in its row.
"""
from __future__ import annotations

from spatial_manip.bench.paraphrase_eval import (AMBIGUOUS, LEFT_V, MID, NEAR, NEAR_V, FAR_V, NOT_FOUND,
                                                     NOT_UNDERSTOOD, RIGHT_V, UNREACHABLE, M, P, PP, S, X)
from spatial_manip.bench.paraphrase_everyday3 import IN
from spatial_manip.bench.paraphrase_scenes import Shelf, held_object, on_table, table, table_scene
from spatial_manip.scene import Scene, SceneObject


# Bedside table, left to right as the viewer sees it (y descending):
#   clementine (0.55, 0.70) orange, 6 cm          lamp (1.05, 0.55) white lamp 20 x 20 x 40
#   case (0.30, 0.47) purple glasses case 16 along x   mugG (0.80, 0.36) green mug 9 x 9 x 10
#   phone (0.45, 0.15) black phone 15 x 7 x 1
#   clock (0.98, 0.08) black and white alarm clock 8 deep, 14 wide, 12 tall, its face (front) turned
#       to the viewer's left (world +y): its own right is world +x (away from the viewer), its own
#       left world -x; it spans x 0.91..1.05, y 0.04..0.12
#   glass (0.85,-0.05) light blue glass 7 x 7 x 12   tray (0.60,-0.15) brown tray 20 x 14 x 2
#   mugY (0.28,-0.22) yellow mug 8 x 8 x 9          tissues (1.00,-0.36) white and pink tissue box 24 x 12 x 10
#   cream (0.60,-0.45) pink hand cream 5 x 5 x 15    apple (0.80,-0.58) red apple 8 cm
#   pills (0.30,-0.66) orange and white pill bottle 5 x 5 x 8   candle (1.08,-0.74) purple candle 7 x 7 x 10
# Hand-worked: next to (<= 10 cm) only clock-glass (6 cm; the clock's next closest, mugG, 20.6 cm;
# the glass's, the tray, 11.5 cm); closest to the lamp = mugG (11.4 cm; the clock 33 cm); in the
# clock's own frame the clementine (325 deg) and mugG (327 deg) lie in its front sector and before
# its face, the apple (195 deg) and mugY (247 deg) behind its face, so "the fruit / the mug in front
# of the clock" is the clementine / mugG, though from the viewer both fruit and both mugs are nearer
# than the clock; the viewer's left sector holds the clementine (308 deg) and the glasses case (303
# deg), the right sector the pill bottle alone (66 deg); closest to the viewer = mugY (0.549 m; the
# phone 0.667 m; to the robot's base 0.808 / 0.846 m), farthest = the candle (1.338 m; the lamp
# 1.062 m; to the base 1.467 / 1.291 m); tallest and biggest = the lamp (40 cm, 16 l; the hand cream
# 15 cm, the tissue box 2.9 l); bigger mug = mugG (0.81 l; mugY 0.58 l); main colours: orange =
# clementine, pills; purple = case, candle; black = phone, clock; white = lamp, tissues; pink = the
# cream alone (the tissue box's second colour); blue = the glass alone; red = the apple alone;
# fruit = clementine, apple; things to drink from = glass, mugG, mugY; left to right clementine,
# lamp, case, mugG, phone, clock, glass, tray, mugY, tissues, cream, apple, pills, candle (every
# neighbour 7 cm or more apart).
def _bedside_objects() -> list[SceneObject]:
    return [
        table(),
        on_table("clementine", "clementine", 0.55, 0.70, [0.06, 0.06, 0.05], ["orange"], (240, 140, 30)),
        on_table("lamp", "lamp", 1.05, 0.55, [0.20, 0.20, 0.40], ["white"], (235, 235, 220)),
        on_table("case", "glasses case", 0.30, 0.47, [0.16, 0.06, 0.04], ["purple"], (110, 50, 140)),
        on_table("mugG", "mug", 0.80, 0.36, [0.09, 0.09, 0.10], ["green"], (40, 140, 60)),
        on_table("phone", "phone", 0.45, 0.15, [0.15, 0.07, 0.01], ["black"], (25, 25, 30)),
        on_table("clock", "alarm clock", 0.98, 0.08, [0.08, 0.14, 0.12], ["black", "white"], (50, 50, 55), yaw=90),
        on_table("glass", "glass", 0.85, -0.05, [0.07, 0.07, 0.12], ["blue"], (150, 190, 230)),
        on_table("tray", "tray", 0.60, -0.15, [0.20, 0.14, 0.02], ["brown"], (140, 90, 50)),
        on_table("mugY", "mug", 0.28, -0.22, [0.08, 0.08, 0.09], ["yellow"], (230, 200, 40)),
        on_table("tissues", "tissue box", 1.00, -0.36, [0.24, 0.12, 0.10], ["white", "pink"], (240, 215, 225)),
        on_table("cream", "hand cream", 0.60, -0.45, [0.05, 0.05, 0.15], ["pink"], (230, 130, 170)),
        on_table("apple", "apple", 0.80, -0.58, [0.08, 0.08, 0.08], ["red"], (200, 30, 30)),
        on_table("pills", "pill bottle", 0.30, -0.66, [0.05, 0.05, 0.08], ["orange", "white"], (230, 140, 40)),
        on_table("candle", "candle", 1.08, -0.74, [0.07, 0.07, 0.10], ["purple"], (140, 60, 170)),
    ]


# Florist's bench, left to right:
#   bucket (1.05, 0.64) grey bucket 28 x 28 x 30 (open)
#   can (0.50, 0.50) green watering can 30 long, 12 wide, 22 tall, its spout (front) pointing away
#       from the viewer (world +x): its own left and right are the viewer's, its own front is
#       further away, its own back nearer the viewer; it spans x 0.35..0.65, y 0.44..0.56
#   vaseS (0.35, 0.22) white and blue vase 9 x 9 x 15   vaseT (1.05, 0.12) dark blue vase 12 x 12 x 35
#   roses (0.68, 0.05) red bunch of roses, 30 along x    pot (1.05,-0.05) brown plant pot 14 x 14 x 12
#   tulips (0.40,-0.22) yellow bunch of tulips, 30 along x   ribbon (0.98,-0.30) pink ribbon spool 8 x 8 x 5
#   shears (0.72,-0.40) orange and black pruning shears 20 along x   mister (0.40,-0.55) white and green
#   spray bottle 7 x 7 x 20   paper (1.00,-0.62) brown roll of wrapping paper, 30 along y
# Hand-worked: next to (<= 10 cm) only vaseT-pot (4 cm; the vase's next closest, the roses, 16 cm);
# the flowers closest to the viewer = the tulips (0.567 m; the roses 0.708 m; to the robot's base
# 0.809 / 0.918 m); the taller vase = vaseT (35 cm; vaseS 15 cm); biggest = the bucket (23.5 l; the
# can 7.9 l); the viewer's right sector holds the spray bottle alone (54 deg); main colours: white =
# vaseS, mister; blue = vaseT alone (vaseS's second colour); green = the can alone (the mister's
# second colour); brown = pot, paper; pink = the ribbon; red = the roses; yellow = the tulips;
# flowers = roses, tulips (the roses the left bunch); left to right bucket, can, vaseS, vaseT,
# roses, pot, tulips, ribbon, shears, mister, paper (every neighbour 7 cm or more apart).
def _florist_objects() -> list[SceneObject]:
    return [
        table(),
        on_table("bucket", "bucket", 1.05, 0.64, [0.28, 0.28, 0.30], ["gray"], (150, 150, 155)),
        on_table("can", "watering can", 0.50, 0.50, [0.30, 0.12, 0.22], ["green"], (50, 130, 70), yaw=0),
        on_table("vaseS", "vase", 0.35, 0.22, [0.09, 0.09, 0.15], ["white", "blue"], (220, 225, 240)),
        on_table("vaseT", "vase", 1.05, 0.12, [0.12, 0.12, 0.35], ["blue"], (30, 50, 130)),
        on_table("roses", "roses", 0.68, 0.05, [0.30, 0.12, 0.08], ["red"], (190, 20, 40)),
        on_table("pot", "plant pot", 1.05, -0.05, [0.14, 0.14, 0.12], ["brown"], (170, 90, 50)),
        on_table("tulips", "tulips", 0.40, -0.22, [0.30, 0.10, 0.07], ["yellow"], (240, 210, 50)),
        on_table("ribbon", "ribbon spool", 0.98, -0.30, [0.08, 0.08, 0.05], ["pink"], (230, 120, 170)),
        on_table("shears", "pruning shears", 0.72, -0.40, [0.20, 0.06, 0.02], ["orange", "black"], (220, 120, 30)),
        on_table("mister", "spray bottle", 0.40, -0.55, [0.07, 0.07, 0.20], ["white", "green"], (225, 235, 225)),
        on_table("paper", "wrapping paper", 1.00, -0.62, [0.08, 0.30, 0.08], ["brown"], (180, 140, 90)),
    ]


# First-aid cabinet at x = 0.80: 3 rows (1 = top, centres z 1.25 / 0.90 / 0.55, 33 cm high) x 3
# columns of 35 cm (1 = viewer's left, y 0.35; 2 = y 0.0; 3 = y -0.35). A white and blue
# thermometer in r1c1, orange scissors in r1c3, a white bandage roll in r2c2, a yellow and red box
# of plasters in r2c3, a green and white first aid kit filling r3c1 (full), a blue ice pack in
# r3c2. Free: r1c2, r2c1, r3c3.
# Hand-worked: beside the thermometer (r1c1): r1c2 only (free); right below the thermometer: r2c1;
# below the plasters: r3c3; the slot between the thermometer and the scissors in their row: r1c2;
# the object right below the scissors: the plasters; the object right above the ice pack: the
# bandage; the top shelf holds the thermometer and the scissors; the leftmost thing on the middle
# shelf = the bandage; blue as main colour = the ice pack alone (the thermometer's second colour);
# the one free slot in the left column = r2c1, on the middle shelf = r2c1, on the top = r1c2, on
# the bottom = r3c3.
CABINET = Shelf(0.80, {1: 1.25, 2: 0.90, 3: 0.55}, {1: 0.35, 2: 0.0, 3: -0.35}, slot_width=0.35, width=1.10)
CABINET_OCCUPANCY = {(1, 1): 0.15, (1, 2): 0.0, (1, 3): 0.2,
                     (2, 1): 0.0, (2, 2): 0.3, (2, 3): 0.3,
                     (3, 1): 0.97, (3, 2): 0.35, (3, 3): 0.0}


def _cabinet(held: bool) -> Scene:
    objs = [CABINET.on("thermo", "thermometer", 1, 1, [0.14, 0.03, 0.03], ["white", "blue"], (220, 225, 240)),
            CABINET.on("scissors", "scissors", 1, 3, [0.15, 0.07, 0.02], ["orange"], (230, 120, 30)),
            CABINET.on("bandage", "bandage roll", 2, 2, [0.08, 0.08, 0.10], ["white"], (240, 240, 235)),
            CABINET.on("plasters", "plasters", 2, 3, [0.12, 0.08, 0.06], ["yellow", "red"], (230, 190, 60)),
            CABINET.on("kit", "first aid kit", 3, 1, [0.30, 0.30, 0.25], ["green", "white"], (40, 150, 80)),
            CABINET.on("icepack", "ice pack", 3, 2, [0.18, 0.12, 0.04], ["blue"], (60, 120, 220))]
    if held:
        objs.append(held_object("gauze pads", [0.10, 0.10, 0.04], ["white"], (245, 245, 245)))
    return CABINET.scene(objs, CABINET_OCCUPANCY)


EVERYDAY10_SCENES = {
    "bedside10": lambda: table_scene(_bedside_objects()),
    "bedside10_held": lambda: table_scene(_bedside_objects() + [held_object("water bottle", [0.07, 0.07, 0.22],
                                                                 ["blue"], (40, 90, 200))]),
    "florist10": lambda: table_scene(_florist_objects()),
    "florist10_held": lambda: table_scene(_florist_objects() + [held_object("glass jar", [0.08, 0.08, 0.12],
                                                                 ["white"], (230, 235, 235))]),
    "cabinet10": lambda: _cabinet(held=False),
    "cabinet10_held": lambda: _cabinet(held=True),
}

# (x, y, half extent along the direction measured); the held water bottle is 7 x 7 cm, the glass
# jar 8 x 8 cm, the moved glass 7 cm and the moved spray bottle 7 cm. Hand-worked spots (centre;
# each clear of every other object by >= 5 cm):
#   10 cm right of the lamp (1.05, 0.315); 15 cm in front of the alarm clock, before its face
#   (0.98, 0.305; from the viewer it would be (0.725, 0.08)); 5 cm on the clock's own left, towards
#   the viewer (0.825, 0.08); between the glasses case and the green mug (0.55, 0.415); 10 cm in
#   front of the tissue box (0.745,-0.36); the glass 10 cm left of the phone (0.45, 0.32); 10 cm in
#   front of the watering can, beyond its spout (0.79, 0.50; from the viewer it would be (0.21,
#   0.50)); 10 cm on the can's left (0.50, 0.70); 5 cm on its right (0.50, 0.35); 10 cm right of the
#   roses (0.68,-0.15); between the tulips and the ribbon (0.69,-0.26); the spray bottle 10 cm left
#   of the tulips (0.40,-0.035). Off the table (UNREACHABLE): 30 cm right of the candle (y -1.11),
#   20 cm behind the lamp (x 1.385), 30 cm left of the watering can (y 0.90), 10 cm behind the tall
#   vase (x 1.25).
LAMP, CLOCK_Y, CLOCK_X, TRAY = (1.05, 0.55, 0.10), (0.98, 0.08, 0.04), (0.98, 0.08, 0.07), (0.60, -0.15, 0.07)
CASE, MUG_G, TISSUES_X, PHONE_Y = (0.30, 0.47), (0.80, 0.36), (1.00, -0.36, 0.12), (0.45, 0.15, 0.035)
CAN_X, CAN_Y, ROSES_Y, TULIPS, TULIPS_Y = (0.50, 0.50, 0.15), (0.50, 0.50, 0.06), (0.68, 0.05, 0.06), \
    (0.40, -0.22), (0.40, -0.22, 0.05)
RIBBON, BUCKET, POT = (0.98, -0.30), (1.05, 0.64, 0.14), (1.05, -0.05, 0.07)

EVERYDAY10_CASES = [
    # --- bedside table: picks --------------------------------------------------------------------------
    ("bedside10", "could you pass me my phone please", P("phone")),
    ("bedside10", "grab the alarm clock", P("clock")),
    ("bedside10", "take the black and white clock", P("clock")),
    ("bedside10", "grab the black thing", X(AMBIGUOUS)),
    ("bedside10", "hand me the light blue glass", P("glass")),
    ("bedside10", "pass me my glass of water", P("glass")),
    ("bedside10", "grab the mug", X(AMBIGUOUS)),
    ("bedside10", "take the bigger mug", P("mugG")),
    ("bedside10", "grab the mug on the left", P("mugG")),
    # a colour word names the object whose main colour it is (the tissue box's pink is its second colour)
    ("bedside10", "grab the pink thing", P("cream")),
    ("bedside10", "take the white and pink box", P("tissues")),
    ("bedside10", "grab the white thing", X(AMBIGUOUS)),
    ("bedside10", "take the purple thing on my left", P("case")),
    ("bedside10", "grab the orange thing on the left", P("clementine")),
    ("bedside10", "take the orange thing on your right", P("pills")),
    ("bedside10", "grab the red fruit", P("apple")),
    ("bedside10", "grab the fruit", X(AMBIGUOUS)),
    ("bedside10", "could I have some fruit", P("clementine", "apple")),
    ("bedside10", "I need something to blow my nose on", P("tissues")),
    ("bedside10", "give me something to drink from", P("glass", "mugG", "mugY")),
    ("bedside10", "grab the tallest thing", P("lamp")),
    ("bedside10", "grab the fruit in front of the alarm clock", P("clementine")),
    ("bedside10", "take the mug in front of the clock", P("mugG")),
    ("bedside10", "grab the thing next to the alarm clock", P("glass")),
    ("bedside10", "grab the thing beside the lamp", P("mugG")),
    ("bedside10", "grab the thing nearest to you", P("mugY")),
    ("bedside10", "grab the thing farthest away from you", P("candle")),
    ("bedside10", "take the second object from the left", P("lamp")),
    ("bedside10", "take the third thing from the right", P("apple")),
    ("bedside10", "grab the book", X(NOT_FOUND, "filterBook")),
    ("bedside10", "take the green glass", X(NOT_FOUND, "nothing green")),
    ("bedside10", "grab the allarm clock", P("clock")),
    ("bedside10", "pass me the hand creme pls", P("cream")),
    ("bedside10", "um, could you grab me the tissues, thanks", P("tissues")),
    ("bedside10", "sorry to bother you, can you get the clementine for me?", P("clementine")),
    ("bedside10", "I'd love my glasses case if you can reach it", P("case")),
    ("bedside10", "what time is it?", X(NOT_UNDERSTOOD)),
    ("bedside10", "could you turn off the lamp?", X(NOT_UNDERSTOOD)),
    # --- bedside table: two steps --------------------------------------------------------------------
    ("bedside10", "put the apple on the tray", PP(("apple",), IN(TRAY))),
    ("bedside10", "move the glass 10 cm to the left of the phone", PP(("glass",), M(PHONE_Y, LEFT_V, 0.10))),
    ("bedside10", "take the yellow mug and put it next to the lamp", PP(("mugY",), NEAR(LAMP, 0.05))),
    # --- bedside table: places with a water bottle in hand -------------------------------------------
    ("bedside10_held", "put it 10 cm to the right of the lamp", M(LAMP, RIGHT_V, 0.10)),
    ("bedside10_held", "set it down 15 cm in front of the alarm clock", M(CLOCK_Y, LEFT_V, 0.15)),
    ("bedside10_held", "put it 5 cm to the clock's left", M(CLOCK_X, NEAR_V, 0.05)),
    ("bedside10_held", "put it between the glasses case and the green mug", MID(CASE, MUG_G)),
    ("bedside10_held", "put it on the tray", IN(TRAY)),
    ("bedside10_held", "put it next to the lamp", NEAR(LAMP, 0.05)),
    ("bedside10_held", "put it 10 cm in front of the tissue box", M(TISSUES_X, NEAR_V, 0.10)),
    ("bedside10_held", "put it next to the mug", X(AMBIGUOUS)),
    ("bedside10_held", "put it 30 cm to the right of the candle", X(UNREACHABLE)),
    ("bedside10_held", "put it 20 cm behind the lamp", X(UNREACHABLE)),
    ("bedside10_held", "put it 10 cm left of the book", X(NOT_FOUND, "no book")),
    # --- florist's bench: picks ------------------------------------------------------------------------
    ("florist10", "hand me the secateurs", P("shears")),
    ("florist10", "I need something to cut the stems with", P("shears")),
    ("florist10", "pass me something to tie the bouquet with", P("ribbon")),
    ("florist10", "grab the yellow flowers", P("tulips")),
    ("florist10", "take the red roses", P("roses")),
    ("florist10", "grab the flowers", X(AMBIGUOUS)),
    ("florist10", "hand me a bunch of flowers", P("roses", "tulips")),
    ("florist10", "grab the flowers on the right", P("tulips")),
    ("florist10", "take the flowers closest to you", P("tulips")),
    ("florist10", "grab the taller vase", P("vaseT")),
    ("florist10", "take the white and blue vase", P("vaseS")),
    ("florist10", "grab the dark blue vase", P("vaseT")),
    ("florist10", "grab the vase", X(AMBIGUOUS)),
    ("florist10", "grab the pink thing", P("ribbon")),
    ("florist10", "take the brown thing", X(AMBIGUOUS)),
    # a colour word names the object whose main colour it is (the spray bottle's green is its second colour)
    ("florist10", "grab the green thing", P("can")),
    ("florist10", "hand me the plant mister", P("mister")),
    ("florist10", "grab the thing next to the tall vase", P("pot")),
    ("florist10", "take the biggest thing", P("bucket")),
    ("florist10", "take the third thing from the left", P("vaseS")),
    ("florist10", "grab the second item from the right", P("mister")),
    ("florist10", "grab the bottle on my right", P("mister")),
    ("florist10", "grab the wattering can", P("can")),
    ("florist10", "would you mind passing me the roll of wrapping paper", P("paper")),
    ("florist10", "grab the lilies", X(NOT_FOUND, "lilies")),
    ("florist10", "take the purple ribbon", X(NOT_FOUND, "nothing purple")),
    ("florist10", "what time does the flower market open?", X(NOT_UNDERSTOOD)),
    # --- florist's bench: two steps --------------------------------------------------------------------
    ("florist10", "move the spray bottle 10 cm left of the tulips", PP(("mister",), M(TULIPS_Y, LEFT_V, 0.10))),
    # --- florist's bench: places with a glass jar in hand ----------------------------------------------
    ("florist10_held", "put it 10 cm in front of the watering can", M(CAN_X, FAR_V, 0.10)),
    ("florist10_held", "put it 10 cm to the left of the watering can", M(CAN_Y, LEFT_V, 0.10)),
    ("florist10_held", "put it 5 cm to the watering can's right", M(CAN_Y, RIGHT_V, 0.05)),
    ("florist10_held", "put it 30 cm to the left of the watering can", X(UNREACHABLE)),
    ("florist10_held", "put it 10 cm to the right of the roses", M(ROSES_Y, RIGHT_V, 0.10)),
    ("florist10_held", "put it between the tulips and the ribbon", MID(TULIPS, RIBBON)),
    ("florist10_held", "pop it in the bucket", IN(BUCKET)),
    ("florist10_held", "put it next to the plant pot", NEAR(POT, 0.05)),
    ("florist10_held", "put it next to the vase", X(AMBIGUOUS)),
    ("florist10_held", "put it 10 cm behind the tall vase", X(UNREACHABLE)),
    # --- first-aid cabinet: picks and two steps --------------------------------------------------------
    ("cabinet10", "grab the thermometer", P("thermo")),
    ("cabinet10", "pass me the scissors please", P("scissors")),
    ("cabinet10", "I need something to cut the bandage with", P("scissors")),
    # a colour word names the object whose main colour it is (the thermometer's blue is its second colour)
    ("cabinet10", "take the blue thing", P("icepack")),
    ("cabinet10", "grab the thing on the top shelf", X(AMBIGUOUS)),
    ("cabinet10", "take the thing right below the scissors", P("plasters")),
    ("cabinet10", "grab the thing directly above the ice pack", P("bandage")),
    ("cabinet10", "get the leftmost thing on the middle shelf", P("bandage")),
    ("cabinet10", "take the green and white box", P("kit")),
    ("cabinet10", "grab the ice pakc", P("icepack")),
    ("cabinet10", "grab the burn cream", X(NOT_FOUND, "burn cream")),
    ("cabinet10", "do we need to buy more plasters?", X(NOT_UNDERSTOOD)),
    ("cabinet10", "move the ice pack to the empty slot on the top shelf", PP(("icepack",), S("r1c2"))),
    ("cabinet10", "put the bandage in the free spot on the bottom shelf", PP(("bandage",), S("r3c3"))),
    # --- first-aid cabinet: places with gauze pads in hand ---------------------------------------------
    ("cabinet10_held", "put it next to the thermometer", S("r1c2")),
    ("cabinet10_held", "put it right below the thermometer", S("r2c1")),
    ("cabinet10_held", "put it under the plasters", S("r3c3")),
    ("cabinet10_held", "put it between the thermometer and the scissors", S("r1c2")),
    ("cabinet10_held", "put it in any free slot", S("r1c2", "r2c1", "r3c3")),
    ("cabinet10_held", "put it in the empty slot on the middle shelf", S("r2c1")),
    ("cabinet10_held", "top row, middle column", S("r1c2")),
    ("cabinet10_held", "put it on the fourth shelf", X(NOT_FOUND, "Index1D(4")),
    ("cabinet10_held", "put it in the free slot in the left column", S("r2c1")),
]


def everyday10_set() -> tuple[list, dict]:
    """The cases and the scenes they use."""
    return EVERYDAY10_CASES, EVERYDAY10_SCENES
