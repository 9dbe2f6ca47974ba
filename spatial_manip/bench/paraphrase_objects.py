"""The `objects` set of the paraphrase evaluation (issue 38): everyday instructions about mugs,
bottles, fruit, jars, cans, boxes and coloured books, by colour, size and category word.

Written before any planner change made for them, the way a lab types, on four hand-built scenes.
Every answer was worked out by hand from the coordinates below, never by running the planner.
Colours are given as perception reports them (`extra["colour_names"]`, basic colour terms).

Conventions as `paraphrase_eval`: world = robot base, viewer at (0, 0, 1.3) looking along +x, so
the viewer's left is +y. Category words are read as a person would: fruit = apple, banana;
a drink = a bottle or a can; "something to write with" = the pen; a cup = a mug; silver = gray.
"""
from __future__ import annotations

from spatial_manip.reasoning.examples import TABLE_TOP, book, rot_z
from spatial_manip.bench.paraphrase_eval import (AMBIGUOUS, EMPTY, FAR_V, LEFT_V, MID, NEAR, NEAR_V,
                                                     NOT_FOUND, NOT_UNDERSTOOD, RIGHT_V, VIEWER, M, P, PP, S, X,
                                                     _held_book, _shelf)
from spatial_manip.scene import Scene, SceneObject, Viewpoint


def thing(id_, label, x, y, size, colours, category="reference") -> SceneObject:
    """An object standing on the table, its colour names as perception reports them."""
    return SceneObject(id_, label, category, [x, y, TABLE_TOP + size[2] / 2], size,
                       extra={"colour_names": list(colours)})


# Kitchen table, left to right as the viewer sees it (y descending):
#   jar (1.00, 0.55) brown            mugR (0.55, 0.40) red          botG (0.85, 0.28) green, 25 cm tall
#   apple (0.35, 0.05) red            box (1.05,-0.02) orange, 30 cm (cereal box)
#   mugW (0.60,-0.10) white           bowl (0.95,-0.22) yellow       can (0.45,-0.30) gray
#   botB (0.50,-0.45) blue, 18 cm     banana (0.75,-0.60) yellow
# Hand-worked: tallest = box; shortest = banana (4 cm); closest to the viewer = apple (0.35 m in xy;
# the can 0.54); mug closest to botG = mugR (0.32 vs 0.46); bottle closest to the banana = botB
# (0.29). The mugs are the same size.
def _kitchen_objects() -> list[SceneObject]:
    return [
        SceneObject("table", "table", "table", [0.7, 0.0, 0.375], [1.0, 1.6, 0.75], rot_z(180), True),
        thing("jar", "jar", 1.00, 0.55, [0.10, 0.10, 0.14], ["brown"]),
        thing("mugR", "mug", 0.55, 0.40, [0.09, 0.09, 0.10], ["red"]),
        thing("botG", "bottle", 0.85, 0.28, [0.07, 0.07, 0.25], ["green"]),
        thing("apple", "apple", 0.35, 0.05, [0.08, 0.08, 0.08], ["red"]),
        thing("box", "cereal box", 1.05, -0.02, [0.07, 0.20, 0.30], ["orange"]),
        thing("mugW", "mug", 0.60, -0.10, [0.09, 0.09, 0.10], ["white"]),
        thing("bowl", "bowl", 0.95, -0.22, [0.16, 0.16, 0.07], ["yellow"]),
        thing("can", "can", 0.45, -0.30, [0.07, 0.07, 0.11], ["gray"]),
        thing("botB", "bottle", 0.50, -0.45, [0.06, 0.06, 0.18], ["blue"]),
        thing("banana", "banana", 0.75, -0.60, [0.18, 0.05, 0.04], ["yellow"]),
    ]


def kitchen_scene() -> Scene:
    return Scene(Viewpoint(*VIEWER), Viewpoint([0, 0, 0], [1, 0, 0]), _kitchen_objects(), [])


def kitchen_held_scene() -> Scene:
    s = kitchen_scene()
    s.objects.append(_held_book())
    return s


def pantry_scene() -> Scene:
    """The kitchen table in front of `paraphrase_eval`'s shelf at x = 1.45 (nothing held).
    Free slots r1c1, r1c3, r2c2, r3c2; plant in r2c1, globe in r2c3."""
    objs, regions = _shelf(1.45)
    return Scene(Viewpoint(*VIEWER), Viewpoint([0, 0, 0], [1, 0, 0]), _kitchen_objects() + objs, regions)


# Study desk, left to right: g1 (0.55, 0.40) green small flat book; mug (0.80, 0.30) black;
# pen (0.40, 0.20) blue; r1 (0.60, 0.05) red medium upright book; stapler (0.90,-0.10) gray;
# b1 (0.70,-0.30) blue large flat book; b2 (0.45,-0.55) blue small upright book.
# Book closest to the mug = g1 (0.27 vs r1 0.32).
def _study_objects() -> list[SceneObject]:
    def coloured(b: SceneObject, colour: str) -> SceneObject:
        b.extra["colour_names"] = [colour]
        return b
    return [
        SceneObject("table", "table", "table", [0.7, 0.0, 0.375], [1.0, 1.6, 0.75], rot_z(180), True),
        coloured(book("g1", 0.55, 0.40, "flat", "small"), "green"),
        thing("mug", "mug", 0.80, 0.30, [0.09, 0.09, 0.10], ["black"]),
        thing("pen", "pen", 0.40, 0.20, [0.14, 0.012, 0.012], ["blue"]),
        coloured(book("r1", 0.60, 0.05, "upright", "medium"), "red"),
        thing("stapler", "stapler", 0.90, -0.10, [0.15, 0.04, 0.05], ["gray"]),
        coloured(book("b1", 0.70, -0.30, "flat", "large"), "blue"),
        coloured(book("b2", 0.45, -0.55, "upright", "small", yaw=90.0), "blue"),
    ]


def study_scene() -> Scene:
    return Scene(Viewpoint(*VIEWER), Viewpoint([0, 0, 0], [1, 0, 0]), _study_objects(), [])


def study_held_scene() -> Scene:
    s = study_scene()
    s.objects.append(_held_book())
    return s


OBJECT_SCENES = {"kitchen": kitchen_scene, "kitchen_held": kitchen_held_scene, "pantry": pantry_scene,
                 "study": study_scene, "study_held": study_held_scene}

# (x, y, half extent) of the references the metric places are measured from
MUG_R, MUG_W, BOT_B, APPLE, CAN = (0.55, 0.40, 0.045), (0.60, -0.10, 0.045), (0.50, -0.45, 0.03), \
    (0.35, 0.05, 0.04), (0.45, -0.30, 0.035)
BANANA, BOWL, RED_BOOK = (0.75, -0.60, 0.025), (0.95, -0.22, 0.08), (0.60, 0.05, 0.075)
MUGS, FRUIT, BOTTLES = ("mugR", "mugW"), ("apple", "banana"), ("botG", "botB")
TOP_ROW, MIDDLE_ROW, BOTTOM_ROW = ("r1c1", "r1c2", "r1c3"), ("r2c1", "r2c2", "r2c3"), ("r3c1", "r3c2", "r3c3")

OBJECT_CASES = [
    # --- kitchen: colour tells two mugs (and two bottles) apart ----------------------------
    ("kitchen", "could you pass me the red mug?", P("mugR")),
    ("kitchen", "grab the white mug", P("mugW")),
    ("kitchen", "hand me the white cup", P("mugW")),
    ("kitchen", "the red mug please", P("mugR")),
    ("kitchen", "Can you get me the red mug, the one on the left", P("mugR")),
    ("kitchen", "take the white mug on the right", P("mugW")),
    ("kitchen", "grab the red mug on the right", X(NOT_FOUND, "Right(mugR")),
    ("kitchen", "take the purple mug", X(NOT_FOUND, "nothing purple")),
    ("kitchen", "grab the green mug", X(NOT_FOUND, "nothing green")),
    ("kitchen", "take the blue mug", X(NOT_FOUND, "nothing blue")),
    ("kitchen", "take the black mug", X(NOT_FOUND, "nothing black")),
    ("kitchen", "take the mug", X(AMBIGUOUS)),
    ("kitchen", "pick up the mug please", X(AMBIGUOUS)),
    ("kitchen", "grab a mug", P(*MUGS)),
    ("kitchen", "pick up one of the mugs", P(*MUGS)),
    ("kitchen", "any mug will do", P(*MUGS)),
    ("kitchen", "take the leftmost mug", P("mugR")),
    ("kitchen", "the mug on the right pls", P("mugW")),
    ("kitchen", "get the second mug from the left", P("mugW")),
    ("kitchen", "grab the smaller mug", X(AMBIGUOUS)),
    ("kitchen", "take the mug closest to the green bottle", P("mugR")),
    ("kitchen", "grab the mug next to the green bottle", P("mugR")),
    ("kitchen", "grab the green bottle", P("botG")),
    ("kitchen", "hand me the blue bottle", P("botB")),
    ("kitchen", "pass the green bottle over", P("botG")),
    ("kitchen", "take the bottle", X(AMBIGUOUS)),
    ("kitchen", "grab a bottle", P(*BOTTLES)),
    ("kitchen", "take the red bottle", X(NOT_FOUND, "nothing red")),
    # --- kitchen: size ------------------------------------------------------------------------
    ("kitchen", "get the smaller of the two bottles", P("botB")),
    ("kitchen", "take the bigger bottle", P("botG")),
    ("kitchen", "the tall bottle pls", P("botG")),
    ("kitchen", "grab the short bottle", P("botB")),
    ("kitchen", "grab the biggest bottle", P("botG")),
    ("kitchen", "take the smallest bottle", P("botB")),
    ("kitchen", "pick up the taller of the bottles", P("botG")),
    ("kitchen", "which bottle is bigger?", X(NOT_UNDERSTOOD)),
    ("kitchen", "pick up the tallest object", P("box")),
    ("kitchen", "grab the tallest thing on the table", P("box")),
    ("kitchen", "take the shortest object", P("banana")),
    # --- kitchen: any object ------------------------------------------------------------------
    ("kitchen", "pick up the leftmost object", P("jar")),
    ("kitchen", "take the rightmost thing", P("banana")),
    ("kitchen", "grab the thing furthest to the left", P("jar")),
    ("kitchen", "pick up the object on the far right", P("banana")),
    ("kitchen", "take the item on the far left", P("jar")),
    ("kitchen", "grab the object closest to you", P("apple")),
    ("kitchen", "pick up the thing nearest the camera", P("apple")),
    ("kitchen", "take the leftmost bottle", P("botG")),
    ("kitchen", "take the rightmost bottle", P("botB")),
    ("kitchen", "take the bottle next to the banana", P("botB")),
    ("kitchen", "grab the bottle closest to the banana", P("botB")),
    # --- kitchen: fruit and other category words ---------------------------------------------
    ("kitchen", "pick up the fruit on the right", P("banana")),
    ("kitchen", "grab the fruit on the left", P("apple")),
    ("kitchen", "could you hand me a piece of fruit", P(*FRUIT)),
    ("kitchen", "grab some fruit", P(*FRUIT)),
    ("kitchen", "grab the fruit", X(AMBIGUOUS)),
    ("kitchen", "take the red fruit", P("apple")),
    ("kitchen", "grab the yellow fruit", P("banana")),
    ("kitchen", "grab the leftmost fruit", P("apple")),
    ("kitchen", "take the rightmost fruit", P("banana")),
    ("kitchen", "take the banana", P("banana")),
    ("kitchen", "get me the apple", P("apple")),
    ("kitchen", "the apple please", P("apple")),
    ("kitchen", "pick up the pineapple", X(NOT_FOUND, "pineapple")),
    ("kitchen", "grab the orange", X(NOT_FOUND, "orange")),
    ("kitchen", "grab something to drink", P("botG", "botB", "can")),
    ("kitchen", "take the bowl", P("bowl")),
    ("kitchen", "take the yellow bowl", P("bowl")),
    ("kitchen", "pick up the jar", P("jar")),
    ("kitchen", "take the brown jar", P("jar")),
    ("kitchen", "grab the cereal box", P("box")),
    ("kitchen", "take the orange box", P("box")),
    ("kitchen", "get the can", P("can")),
    ("kitchen", "pick up the grey can", P("can")),
    ("kitchen", "take the silver can", P("can")),
    # --- kitchen: colour alone ---------------------------------------------------------------
    ("kitchen", "grab the red thing", X(AMBIGUOUS)),
    ("kitchen", "take the yellow object", X(AMBIGUOUS)),
    ("kitchen", "i want the red one", X(AMBIGUOUS)),
    ("kitchen", "grab something red", P("mugR", "apple")),
    ("kitchen", "take a yellow thing", P("bowl", "banana")),
    ("kitchen", "give me the white one", P("mugW")),
    ("kitchen", "grab the blue one", P("botB")),
    ("kitchen", "take the orange one", P("box")),
    ("kitchen", "can you grab the brown thing", P("jar")),
    ("kitchen", "grab the green thing", P("botG")),
    ("kitchen", "take the pink thing", X(NOT_FOUND, "nothing pink")),
    ("kitchen", "what colour is the bowl?", X(NOT_UNDERSTOOD)),
    ("kitchen", "do the dishes", X(NOT_UNDERSTOOD)),
    # --- kitchen, a book in hand: places by non-book references -------------------------------
    ("kitchen_held", "put it 10 cm to the right of the white mug", M(MUG_W, RIGHT_V, 0.10)),
    ("kitchen_held", "place it 10 cm left of the red mug", M(MUG_R, LEFT_V, 0.10)),
    ("kitchen_held", "put it 5 cm in front of the white mug", M(MUG_W, NEAR_V, 0.05)),
    ("kitchen_held", "set it down 10 cm to the right of the blue bottle", M(BOT_B, RIGHT_V, 0.10)),
    ("kitchen_held", "put it 5 cm in front of the smaller bottle", M(BOT_B, NEAR_V, 0.05)),
    ("kitchen_held", "put it 10 cm to the left of the banana", M(BANANA, LEFT_V, 0.10)),
    ("kitchen_held", "put it 5 cm in front of the yellow bowl", M(BOWL, NEAR_V, 0.05)),
    ("kitchen_held", "put it between the apple and the can", MID(APPLE, CAN)),
    ("kitchen_held", "put it between the red mug and the white mug", MID(MUG_R, MUG_W)),
    ("kitchen_held", "place it in between the two mugs", MID(MUG_R, MUG_W)),
    ("kitchen_held", "put it down next to the red mug", NEAR(MUG_R, 0.05)),
    ("kitchen_held", "put it 10 cm left of the mug", X(AMBIGUOUS)),
    ("kitchen_held", "put it 10 cm right of the fruit", X(AMBIGUOUS)),
    ("kitchen_held", "put it 10 cm right of the purple bottle", X(NOT_FOUND, "nothing purple")),
    ("kitchen_held", "put it next to the toaster", X(NOT_FOUND, "toaster")),
    # --- pantry: the kitchen's objects onto the shelf ----------------------------------------
    ("pantry", "put the red mug on the top shelf", PP(("mugR",), S(*TOP_ROW))),
    ("pantry", "move the white mug to the free slot on the middle shelf", PP(("mugW",), S("r2c2"))),
    ("pantry", "put the green bottle in the bottom shelf's empty slot", PP(("botG",), S("r3c2"))),
    ("pantry", "take the banana and put it in the top left slot", PP(("banana",), S("r1c1"))),
    ("pantry", "put the fruit on the right in the top right slot", PP(("banana",), S("r1c3"))),
    ("pantry", "put the smaller bottle on the middle shelf in the empty slot", PP(("botB",), S("r2c2"))),
    ("pantry", "move the jar to row 1, column 3", PP(("jar",), S("r1c3"))),
    ("pantry", "put the apple between the plant and the globe", PP(("apple",), S("r2c2"))),
    ("pantry", "put the leftmost object in the emptiest slot", PP(("jar",), S(*EMPTY))),
    ("pantry", "move the yellow bowl to the free slot on the bottom shelf", PP(("bowl",), S("r3c2"))),
    ("pantry", "grab the can and then put it in the top right slot", PP(("can",), S("r1c3"))),
    ("pantry", "put the tall bottle in an empty slot on the top shelf", PP(("botG",), S("r1c1", "r1c3"))),
    ("pantry", "put the orange box on the middle shelf, free slot", PP(("box",), S("r2c2"))),
    ("pantry", "put the white mug in the slot above the globe", PP(("mugW",), S("r1c3"))),
    ("pantry", "put the brown jar in the leftmost free slot on the top shelf", PP(("jar",), S("r1c1"))),
    ("pantry", "move the blue one to the bottom shelf's free slot", PP(("botB",), S("r3c2"))),
    ("pantry", "put something red on the top shelf", PP(("mugR", "apple"), S(*TOP_ROW))),
    ("pantry", "take the red mug and put it 10 cm to the right of the white mug",
     PP(("mugR",), M(MUG_W, RIGHT_V, 0.10))),
    ("pantry", "put the mug on the top shelf", X(AMBIGUOUS)),
    ("pantry", "put the red bottle on the top shelf", X(NOT_FOUND, "nothing red")),
    ("pantry", "put the fruit on the bottom shelf", X(AMBIGUOUS)),
    ("pantry", "put the tallest object in the free slot on the middle shelf", PP(("box",), S("r2c2"))),
    # --- study: coloured books, two of one colour and different sizes ------------------------
    ("study", "could you pass me the green book?", P("g1")),
    ("study", "grab the red book", P("r1")),
    ("study", "take the blue book", X(AMBIGUOUS)),
    ("study", "take a blue book", P("b1", "b2")),
    ("study", "take the big blue book", P("b1")),
    ("study", "grab the small blue book", P("b2")),
    ("study", "take the smaller of the two blue books", P("b2")),
    ("study", "pick up the larger blue book", P("b1")),
    ("study", "take the blue book lying flat", P("b1")),
    ("study", "grab the standing blue book", P("b2")),
    ("study", "take the leftmost blue book", P("b1")),
    ("study", "the small green book", P("g1")),
    ("study", "take the large green book", X(NOT_FOUND, "Large(g1")),
    ("study", "get the yellow book", X(NOT_FOUND, "nothing yellow")),
    ("study", "pick up the rightmost book", P("b2")),
    ("study", "take the biggest book", P("b1")),
    ("study", "grab the mug", P("mug")),
    ("study", "take the black mug", P("mug")),
    ("study", "hand me something to write with", P("pen")),
    ("study", "grab the pen", P("pen")),
    ("study", "take the book closest to the mug", P("g1")),
    ("study", "grab the green one", P("g1")),
    ("study", "take the red thing", P("r1")),
    ("study", "grab the blue thing", X(AMBIGUOUS)),
    ("study", "pick up the leftmost object", P("g1")),
    ("study", "take the thing on the far right", P("b2")),
    ("study", "grab the gray stapler", P("stapler")),
    ("study", "grab the red stapler", X(NOT_FOUND, "nothing red")),
    ("study_held", "put it 5 cm behind the red book", M(RED_BOOK, FAR_V, 0.05)),
    ("study_held", "put it next to the blue book", X(AMBIGUOUS)),
    ("study_held", "put it 10 cm to the right of the purple book", X(NOT_FOUND, "nothing purple")),
]
