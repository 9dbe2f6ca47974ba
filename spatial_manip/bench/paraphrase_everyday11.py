"""The `everyday11` set of the paraphrase evaluation (issue 38): held out, on three new scenes.

Written in session 34 by someone who had not read the reader (its grammar, normaliser, lexicon,
taxonomy or guide), after the reader's changes for `everyday10`, and measured before any change
made for it. A school desk with a laptop whose screen faces the viewer (so its own left is the
viewer's right), a music teacher's table with a metronome whose face turns to the viewer's right
(its own right is towards the viewer) and a hotel minibar of three shelves by four slots, typed as
a lab's users would: requests and hedges ("um, could you maybe ... if that's ok", "any chance you
could ..."), typos ("calculater", "protracter", "harmonika", "tunning fork", "teh"), everyday names
("the uke", "the mouth organ", "a coke", "the chips"), colours (a colour word names the object
whose main colour it is, `everyday8`'s convention), sizes, group words ("something to eat", "a
snack", "the drink", "something to drink from"), ordinals over mixed objects, the table's halves,
the speaker's side and an object's own frame where the two give different answers ("the marker on
the laptop's left" is the black one on the viewer's right; "the maraca in front of the metronome"
is the red one before its face, though from the viewer both are nearer), next to / beside /
closest / between, metric places on and off the table, shelf slots (four columns have no middle
one: AMBIGUOUS), two-step commands, things that are not there and questions that are not requests.
Every answer was worked out by hand from the coordinates below and the definitions in
`geometry/relations.py` (test_paraphrase_everyday11 checks that geometry), never by running the
planner; where the hand reading was unsure (a bearing within 5 degrees of a sector's edge, two
distances within 3 cm, the viewer and the robot's base ranking "closest to you" differently, a
slot beside a partly filled one) the instruction was left out.

Measured before any change (at e6daf9d): 117 instructions, understood 90.6% (80 correct plans, 26
correct refusals), 10 refusals where a plan was due, 1 wrong plan: "grab the chocolate" took the
chocolate bar where AMBIGUOUS was due (a box of chocolates stands on the bottom shelf). Not read:
everyday names "the mouth organ" (a harmonica), "a coke" (the cola can), "the chips" (the crisps)
(TARGET_NOT_FOUND); the group word "a snack" (TARGET_NOT_FOUND 'snack') and "something to eat"
after "I'm hungry," (NOT_UNDERSTOOD); "the purple box" for a box of chocolates (TARGET_NOT_FOUND
'purple'); hedges "..., if that's ok" and "any chance you could ...?" (NOT_UNDERSTOOD); "the slot
to the right of the wine" (AMBIGUOUS among the six slots right of it, where the one beside it was
due); refused with another code than due: "play me a song" (TARGET_NOT_FOUND 'song' where
NOT_UNDERSTOOD was due). No expected answer was changed after the run.

After the reader's change for it (session 34, test_reader_rules_everyday11: synonyms mouth organ /
harmonica, coke / cola, chips / crisps; the groups "snack" and "something to eat"; a speaker's
state before a request ("I'm hungry, ..."); a label "<packaging> of <content>" named by its
packaging and its content, also in the singular; "if that's ok" / "any chance you could"; "the
slot to the left / right of X" as the one beside it; a sentence with no action the reader knows
and an unknown object is NOT_UNDERSTOOD): 100%, 0 wrong plans; every other set unchanged.

Conventions as `paraphrase_eval` and `everyday10`: world = robot base, viewer at (0, 0, 1.3)
looking along +x, so the viewer's left is +y ("left to right" = y descending); the table spans x
0.2..1.2, y -0.8..0.8. "The X on the left" is asked only where the left X is the one X in the
table's left half (`relations.part_of`); "the X on my left" where it is the one X in the viewer's
left sector. An object with a front is read in its own frame (`relations.default_frame`), also
without a possessive ("the marker to the left of the laptop"). "Next to" an object is the closest
within 30 cm (`relations.next_to`); a place "next to" with no distance is 5 cm off; on a shelf
"next to" is the free slot beside the object in its row.
"""
from __future__ import annotations

from spatial_manip.bench.paraphrase_eval import (AMBIGUOUS, LEFT_V, MID, NEAR, NEAR_V, NOT_FOUND,
                                                     NOT_UNDERSTOOD, RIGHT_V, UNREACHABLE, M, P, PP, S, X)
from spatial_manip.bench.paraphrase_scenes import Shelf, held_object, on_table, table, table_scene
from spatial_manip.scene import Scene, SceneObject


# School desk, left to right as the viewer sees it (y descending): ruler (0.45, 0.70) yellow, 30 cm
# along x; lunch box (1.00, 0.60) red; pencil case (0.60, 0.48) blue; calculator (0.30, 0.36) black;
# markerR (0.82, 0.29) red; glue stick (0.55, 0.20) white and purple; banana (0.35, 0.08) yellow;
# laptop (1.00, 0.00) grey, 24 deep, 33 wide, 20 tall, its screen (front) facing the viewer (world
# -x): its own right is world +y; water bottle (0.60, -0.10) blue, 25 cm tall; eraser (0.40, -0.22)
# pink; markerB (0.85, -0.31) black; pear (0.75, -0.40) green; box of crayons (1.00, -0.52) yellow
# and green; protractor (0.35, -0.62) orange; pencil (0.75, -0.72) yellow.
# Hand-worked: next to (<= 10 cm) only markerB-pear (4.5 cm; the pear's next closest, the crayons,
# 16 cm); closest to the ruler = the pencil case (16.5 cm; the calculator 28.5 cm); in the laptop's
# own frame markerB (296 deg) and the pear (302 deg) lie in its left sector and left half-plane,
# markerR (58 deg) in its right, the banana in its right half-plane: from the viewer markerR and the
# banana are the ones left of the laptop; the viewer's left sector holds the ruler and the
# calculator; closest to the viewer = the banana (0.576 m; the water bottle 0.643 m; to the base
# 0.796 / 0.864 m); tallest = the water bottle (25 cm; the laptop 20 cm); main colours: yellow =
# ruler, banana, crayons, pencil; blue = pencil case, bottle; black = calculator, markerB; red =
# lunch box, markerR; white = the glue stick alone; pink = the eraser; orange = the protractor.
def _school_objects() -> list[SceneObject]:
    return [
        table(),
        on_table("ruler", "ruler", 0.45, 0.70, [0.30, 0.03, 0.01], ["yellow"], (240, 210, 40)),
        on_table("lunchbox", "lunch box", 1.00, 0.60, [0.22, 0.16, 0.08], ["red"], (200, 40, 40)),
        on_table("pencase", "pencil case", 0.60, 0.48, [0.20, 0.08, 0.05], ["blue"], (40, 80, 200)),
        on_table("calc", "calculator", 0.30, 0.36, [0.16, 0.08, 0.02], ["black"], (30, 30, 35)),
        on_table("markerR", "marker", 0.82, 0.29, [0.13, 0.02, 0.02], ["red"], (210, 30, 30)),
        on_table("glue", "glue stick", 0.55, 0.20, [0.03, 0.03, 0.10], ["white", "purple"], (230, 225, 240)),
        on_table("banana", "banana", 0.35, 0.08, [0.18, 0.04, 0.04], ["yellow"], (235, 210, 60)),
        on_table("laptop", "laptop", 1.00, 0.00, [0.24, 0.33, 0.20], ["gray"], (150, 150, 155), yaw=180),
        on_table("bottle", "water bottle", 0.60, -0.10, [0.07, 0.07, 0.25], ["blue"], (50, 110, 210)),
        on_table("eraser", "eraser", 0.40, -0.22, [0.05, 0.02, 0.01], ["pink"], (235, 140, 170)),
        on_table("markerB", "marker", 0.85, -0.31, [0.13, 0.02, 0.02], ["black"], (25, 25, 25)),
        on_table("pear", "pear", 0.75, -0.40, [0.07, 0.07, 0.10], ["green"], (130, 180, 60)),
        on_table("crayons", "box of crayons", 1.00, -0.52, [0.12, 0.09, 0.02], ["yellow", "green"], (220, 200, 60)),
        on_table("protractor", "protractor", 0.35, -0.62, [0.15, 0.08, 0.005], ["orange"], (240, 140, 40)),
        on_table("pencil", "pencil", 0.75, -0.72, [0.18, 0.01, 0.01], ["yellow"], (245, 200, 40)),
    ]


# Music teacher's table, left to right: maracaG (0.45, 0.68) green, 18 cm; sheet music (1.00, 0.58)
# white; guitar pick tin (0.30, 0.45) blue; ukulele (0.70, 0.36) brown, 55 cm along x; harmonica
# (0.40, 0.22) grey; metronome (1.00, 0.12) black, 10 x 10 x 22, its face (front) turned to the
# viewer's right (world -y): its own right is world -x (towards the viewer), its own left +x; mug
# (0.60, 0.02) blue; rosin (0.85, -0.08) orange; capo (0.30, -0.15) black; maracaR (0.75, -0.25) red,
# 25 cm; headphones (1.05, -0.35) black and white; recorder (0.40, -0.45) white, 32 cm along x;
# tuning fork (0.85, -0.55) grey; drumsticks (0.45, -0.68) brown, 40 cm along x.
# Hand-worked: closest to the metronome = the ukulele (10 cm; the rosin 14.6 cm); to the headphones
# = maracaR (8.5 cm; the tuning fork 12.1 cm); maracaR lies before the metronome's face (34 deg in
# its front sector), maracaG behind it (135 deg), from the viewer both are nearer than it; of the
# black things the capo alone is on the metronome's right (69 deg; the headphones 354 deg, before
# its face), from the viewer both are right of it; the viewer's left sector holds maracaG and the
# pick tin; closest to the viewer = the capo (0.597 m; the harmonica 0.667 m; to the base 0.805 /
# 0.853 m); biggest = the ukulele (5.9 l; the headphones 2.3 l); bigger maraca = maracaR.
def _music_objects() -> list[SceneObject]:
    return [
        table(),
        on_table("maracaG", "maraca", 0.45, 0.68, [0.18, 0.06, 0.06], ["green"], (60, 160, 70)),
        on_table("sheets", "sheet music", 1.00, 0.58, [0.30, 0.22, 0.01], ["white"], (240, 240, 235)),
        on_table("picks", "guitar pick tin", 0.30, 0.45, [0.07, 0.07, 0.02], ["blue"], (40, 90, 200)),
        on_table("uke", "ukulele", 0.70, 0.36, [0.55, 0.18, 0.06], ["brown"], (150, 95, 50)),
        on_table("harmonica", "harmonica", 0.40, 0.22, [0.10, 0.03, 0.02], ["gray"], (180, 180, 185)),
        on_table("metronome", "metronome", 1.00, 0.12, [0.10, 0.10, 0.22], ["black"], (30, 30, 30), yaw=-90),
        on_table("mug", "mug", 0.60, 0.02, [0.09, 0.09, 0.10], ["blue"], (60, 110, 220)),
        on_table("rosin", "rosin", 0.85, -0.08, [0.05, 0.05, 0.02], ["orange"], (210, 120, 30)),
        on_table("capo", "capo", 0.30, -0.15, [0.07, 0.05, 0.03], ["black"], (35, 35, 35)),
        on_table("maracaR", "maraca", 0.75, -0.25, [0.25, 0.08, 0.08], ["red"], (200, 30, 40)),
        on_table("headphones", "headphones", 1.05, -0.35, [0.18, 0.16, 0.08], ["black", "white"], (60, 60, 60)),
        on_table("recorder", "recorder", 0.40, -0.45, [0.32, 0.03, 0.03], ["white"], (235, 235, 225)),
        on_table("fork", "tuning fork", 0.85, -0.55, [0.12, 0.02, 0.01], ["gray"], (190, 190, 195)),
        on_table("sticks", "drumsticks", 0.45, -0.68, [0.40, 0.04, 0.02], ["brown"], (170, 120, 70)),
    ]


# Hotel minibar at x = 0.80: 3 rows (1 = top, centres z 1.25 / 0.90 / 0.55) x 4 columns of 26 cm
# (1 = the viewer's left, y 0.39 / 0.13 / -0.13 / -0.39). A blue water bottle (25 cm) in r1c1, a red
# cola can in r1c3, an orange and white juice carton in r1c4, a brown chocolate bar in r2c2, yellow
# crisps in r2c3, a green beer can in r2c4, a grey ice bucket filling r3c1 (full), a green wine
# bottle (30 cm) in r3c2, a purple box of chocolates in r3c4. Free: r1c2, r2c1, r3c3.
# Hand-worked: beside the water bottle: r1c2; right above the ice bucket: r2c1; below the crisps:
# r3c3; right of the wine: r3c3; between the water bottle and the cola: r1c2; the rightmost free
# slot r3c3; above the crisps the cola; below the juice the beer; leftmost on the middle shelf the
# chocolate bar; rightmost on the bottom shelf the box of chocolates; four columns have no middle.
MINIBAR = Shelf(0.80, {1: 1.25, 2: 0.90, 3: 0.55}, {1: 0.39, 2: 0.13, 3: -0.13, 4: -0.39}, slot_width=0.26,
                width=1.06)
MINIBAR_OCCUPANCY = {(1, 1): 0.15, (1, 2): 0.0, (1, 3): 0.15, (1, 4): 0.2,
                     (2, 1): 0.0, (2, 2): 0.2, (2, 3): 0.5, (2, 4): 0.15,
                     (3, 1): 0.97, (3, 2): 0.2, (3, 3): 0.0, (3, 4): 0.4}


def _minibar(held: bool) -> Scene:
    objs = [MINIBAR.on("water", "water bottle", 1, 1, [0.07, 0.07, 0.25], ["blue"], (60, 120, 220)),
            MINIBAR.on("cola", "cola can", 1, 3, [0.066, 0.066, 0.12], ["red"], (200, 20, 30)),
            MINIBAR.on("juice", "juice carton", 1, 4, [0.07, 0.07, 0.20], ["orange", "white"], (235, 150, 50)),
            MINIBAR.on("choc", "chocolate bar", 2, 2, [0.15, 0.05, 0.02], ["brown"], (110, 60, 30)),
            MINIBAR.on("crisps", "crisps", 2, 3, [0.18, 0.08, 0.25], ["yellow"], (240, 200, 40)),
            MINIBAR.on("beer", "beer can", 2, 4, [0.066, 0.066, 0.15], ["green"], (40, 140, 60)),
            MINIBAR.on("icebucket", "ice bucket", 3, 1, [0.24, 0.24, 0.30], ["gray"], (170, 170, 175)),
            MINIBAR.on("wine", "wine bottle", 3, 2, [0.08, 0.08, 0.30], ["green"], (30, 80, 40)),
            MINIBAR.on("chocbox", "box of chocolates", 3, 4, [0.20, 0.15, 0.05], ["purple"], (120, 50, 130))]
    if held:
        objs.append(held_object("bottle opener", [0.10, 0.04, 0.02], ["gray"], (170, 170, 175)))
    return MINIBAR.scene(objs, MINIBAR_OCCUPANCY)


EVERYDAY11_SCENES = {
    "school11": lambda: table_scene(_school_objects()),
    "school11_held": lambda: table_scene(_school_objects() + [held_object("juice box", [0.06, 0.06, 0.10],
                                                               ["green"], (80, 170, 70))]),
    "music11": lambda: table_scene(_music_objects()),
    "music11_held": lambda: table_scene(_music_objects() + [held_object("tuner", [0.06, 0.06, 0.02],
                                                             ["black"], (30, 30, 30))]),
    "minibar11": lambda: _minibar(held=False),
    "minibar11_held": lambda: _minibar(held=True),
}

# (x, y, half extent along the direction measured); the held juice box and the held tuner are 6 x 6
# cm, the moved eraser 2 cm across (along y), the glue stick 3 cm, the harmonica 3 cm.
PENCASE_Y, LAPTOP_Y, LAPTOP_X, ERASER_X = (0.60, 0.48, 0.04), (1.00, 0.00, 0.165), (1.00, 0.00, 0.12), \
    (0.40, -0.22, 0.025)
PEAR, LUNCHBOX, LAPTOP = (0.75, -0.40, 0.035), (1.00, 0.60), (1.00, 0.00)
MUG, METRO, CAPO, RECORDER_Y = (0.60, 0.02, 0.045), (1.00, 0.12, 0.05), (0.30, -0.15), (0.40, -0.45, 0.015)

EVERYDAY11_CASES = [
    # --- school desk: picks ------------------------------------------------------------------------------
    ("school11", "grab the calculater pls", P("calc")),
    ("school11", "um, could you maybe grab the banana for me, if that's ok", P("banana")),
    ("school11", "grab the marker", X(AMBIGUOUS)),
    ("school11", "take a marker", P("markerR", "markerB")),
    ("school11", "give me the red marker", P("markerR")),
    ("school11", "grab the marker on the left", P("markerR")),
    # the laptop's screen faces the viewer: its own left is the viewer's right
    ("school11", "grab the marker on the laptop's left", P("markerB")),
    ("school11", "take the marker to the left of the laptop", P("markerB")),
    ("school11", "grab the marker on the laptop's right", P("markerR")),
    ("school11", "grab the fruit on the laptop's left", P("pear")),
    ("school11", "grab the fruit", X(AMBIGUOUS)),
    ("school11", "grab the fruit on the left", P("banana")),
    ("school11", "I'm hungry, give me something to eat", P("banana", "pear")),
    ("school11", "grab the white thing", P("glue")),
    ("school11", "pass me the pink thing", P("eraser")),
    ("school11", "grab the blue thing on the left", P("pencase")),
    ("school11", "grab the yellow thing", X(AMBIGUOUS)),
    ("school11", "grab the yellow thing on my left", P("ruler")),
    ("school11", "grab the black thing on the right", P("markerB")),
    ("school11", "grab the tallest thing", P("bottle")),
    ("school11", "take the thing next to the pear", P("markerB")),
    ("school11", "grab whatever is next to the ruler", P("pencase")),
    ("school11", "grab the thing closest to you", P("banana")),
    ("school11", "grab the marker closest to the pear", P("markerB")),
    ("school11", "take the second thing from the left", P("lunchbox")),
    ("school11", "grab the third item from the right", P("crayons")),
    ("school11", "grab the last thing on the right", P("pencil")),
    ("school11", "pass me the protracter", P("protractor")),
    ("school11", "grab teh glue stick", P("glue")),
    ("school11", "grab the stapler", X(NOT_FOUND, "stapler")),
    ("school11", "take the green marker", X(NOT_FOUND, "nothing green")),
    ("school11", "is the laptop charged?", X(NOT_UNDERSTOOD)),
    ("school11", "can you help me with my maths homework", X(NOT_UNDERSTOOD)),
    # --- school desk: two steps ----------------------------------------------------------------------------
    ("school11", "take the eraser and put it 10 cm to the right of the pear", PP(("eraser",), M(PEAR, RIGHT_V, 0.10))),
    ("school11", "move the glue stick 10 cm in front of the laptop", PP(("glue",), M(LAPTOP_X, NEAR_V, 0.10))),
    # --- school desk: places with a juice box in hand ------------------------------------------------------
    ("school11_held", "put it 10 cm to the right of the pencil case", M(PENCASE_Y, RIGHT_V, 0.10)),
    ("school11_held", "put it 10 cm to the laptop's left", M(LAPTOP_Y, RIGHT_V, 0.10)),
    ("school11_held", "set it down 10 cm in front of the laptop", M(LAPTOP_X, NEAR_V, 0.10)),
    ("school11_held", "put it between the lunch box and the laptop", MID(LUNCHBOX, LAPTOP)),
    ("school11_held", "put it 5 cm in front of the eraser", M(ERASER_X, NEAR_V, 0.05)),
    ("school11_held", "put it down next to the pear", NEAR(PEAR, 0.05)),
    ("school11_held", "put it next to the marker", X(AMBIGUOUS)),
    ("school11_held", "put it 20 cm to the left of the ruler", X(UNREACHABLE)),
    ("school11_held", "put it 30 cm behind the lunch box", X(UNREACHABLE)),
    ("school11_held", "put it 10 cm left of the stapler", X(NOT_FOUND, "stapler")),
    # --- music teacher's table: picks ----------------------------------------------------------------------
    ("music11", "grab the uke", P("uke")),
    ("music11", "could you hand me the sheet music?", P("sheets")),
    ("music11", "grab the mouth organ", P("harmonica")),
    ("music11", "I need the tin of guitar picks", P("picks")),
    ("music11", "grab my headphones, thanks", P("headphones")),
    ("music11", "grab the maraca", X(AMBIGUOUS)),
    ("music11", "take the bigger maraca", P("maracaR")),
    ("music11", "grab the maraca on my left", P("maracaG")),
    ("music11", "take the maraca on the right", P("maracaR")),
    # the metronome's face turns to the viewer's right: its own right is towards the viewer
    ("music11", "grab the maraca in front of the metronome", P("maracaR")),
    ("music11", "grab the black thing on the metronome's right", P("capo")),
    ("music11", "grab the black thing", X(AMBIGUOUS)),
    ("music11", "grab the orange thing", P("rosin")),
    ("music11", "grab the grey thing on the right", P("fork")),
    ("music11", "grab the biggest thing", P("uke")),
    ("music11", "give me something to drink from", P("mug")),
    ("music11", "grab the thing next to the metronome", P("uke")),
    ("music11", "grab the thing beside the headphones", P("maracaR")),
    ("music11", "grab the thing nearest to you", P("capo")),
    ("music11", "take the third thing from the left", P("picks")),
    ("music11", "grab the harmonika", P("harmonica")),
    ("music11", "hand me the tunning fork please", P("fork")),
    ("music11", "any chance you could pass me the drumsticks?", P("sticks")),
    ("music11", "grab the violin", X(NOT_FOUND, "violin")),
    ("music11", "take the yellow maraca", X(NOT_FOUND, "nothing yellow")),
    ("music11", "play me a song", X(NOT_UNDERSTOOD)),
    # --- music teacher's table: two steps ------------------------------------------------------------------
    ("music11", "take the harmonica and put it 10 cm left of the mug", PP(("harmonica",), M(MUG, LEFT_V, 0.10))),
    ("music11", "put the rosin next to the metronome", PP(("rosin",), NEAR(METRO, 0.05))),
    # --- music teacher's table: places with a tuner in hand ------------------------------------------------
    ("music11_held", "put it 5 cm right of the mug", M(MUG, RIGHT_V, 0.05)),
    ("music11_held", "put it 10 cm in front of the metronome", M(METRO, RIGHT_V, 0.10)),
    ("music11_held", "put it 5 cm to the metronome's right", M(METRO, NEAR_V, 0.05)),
    ("music11_held", "put it 20 cm to the metronome's left", X(UNREACHABLE)),
    ("music11_held", "put it between the mug and the capo", MID(MUG, CAPO)),
    ("music11_held", "put it next to the mug", NEAR(MUG, 0.05)),
    ("music11_held", "put it 10 cm to the left of the recorder", M(RECORDER_Y, LEFT_V, 0.10)),
    ("music11_held", "put it 30 cm behind the sheet music", X(UNREACHABLE)),
    ("music11_held", "put it next to the maraca", X(AMBIGUOUS)),
    ("music11_held", "put it 10 cm left of the piano", X(NOT_FOUND, "piano")),
    # --- hotel minibar: picks and two steps ----------------------------------------------------------------
    ("minibar11", "grab the water", P("water")),
    ("minibar11", "get me a coke", P("cola")),
    ("minibar11", "could I have a beer please", P("beer")),
    ("minibar11", "pass me the chips", P("crisps")),
    ("minibar11", "grab the can", X(AMBIGUOUS)),
    ("minibar11", "grab the green can", P("beer")),
    ("minibar11", "grab the bottle", X(AMBIGUOUS)),
    ("minibar11", "grab the taller bottle", P("wine")),
    ("minibar11", "grab the green thing", X(AMBIGUOUS)),
    ("minibar11", "grab the purple box", P("chocbox")),
    ("minibar11", "grab the chocolate", X(AMBIGUOUS)),
    ("minibar11", "grab me a snack from the middle shelf", P("choc", "crisps")),
    ("minibar11", "grab the drink on the middle shelf", P("beer")),
    ("minibar11", "take the can on the top shelf", P("cola")),
    ("minibar11", "grab the thing right above the crisps", P("cola")),
    ("minibar11", "take the thing directly below the juice", P("beer")),
    ("minibar11", "get the leftmost thing on the middle shelf", P("choc")),
    ("minibar11", "grab the rightmost thing on the bottom shelf", P("chocbox")),
    ("minibar11", "grab the thing in row 3, column 4", P("chocbox")),
    ("minibar11", "grab the champagne", X(NOT_FOUND, "champagne")),
    ("minibar11", "how much does the minibar cost?", X(NOT_UNDERSTOOD)),
    ("minibar11", "move the beer to the empty slot on the top shelf", PP(("beer",), S("r1c2"))),
    ("minibar11", "put the cola in the free slot on the bottom shelf", PP(("cola",), S("r3c3"))),
    ("minibar11", "take the chocolate bar and put it next to the water bottle", PP(("choc",), S("r1c2"))),
    # --- hotel minibar: places with a bottle opener in hand ------------------------------------------------
    ("minibar11_held", "put it next to the water bottle", S("r1c2")),
    ("minibar11_held", "put it right above the ice bucket", S("r2c1")),
    ("minibar11_held", "put it under the crisps", S("r3c3")),
    ("minibar11_held", "put it between the water bottle and the cola", S("r1c2")),
    ("minibar11_held", "put it in any free slot", S("r1c2", "r2c1", "r3c3")),
    ("minibar11_held", "middle shelf, first column", S("r2c1")),
    ("minibar11_held", "put it in the rightmost empty slot", S("r3c3")),
    ("minibar11_held", "put it in the slot to the right of the wine", S("r3c3")),
    # four columns have no single middle one
    ("minibar11_held", "put it in the middle column", X(AMBIGUOUS)),
    ("minibar11_held", "put it on the fifth shelf", X(NOT_FOUND, "Index1D(5")),
]


def everyday11_set() -> tuple[list, dict]:
    """The cases and the scenes they use."""
    return EVERYDAY11_CASES, EVERYDAY11_SCENES
