"""The declared taxonomy the planner reads category words through (issue 38): which labels a
group word ("fruit", "a drink", "something to write with") names, and which words name the same
thing ("cup" and "mug"). Data only; `lexicon.py` reads it. A lab extends it by adding a line.

A label matches a word when the word is the label, the label's last word ("ceramic jar" is a
jar), a synonym of either, or a group holding either.
"""
from __future__ import annotations

FRUIT = ("apple", "banana", "orange", "pear", "lemon", "lime", "peach", "plum", "mango", "kiwi", "strawberry", "grape",
         "grapes", "apricot", "nectarine", "clementine", "mandarin", "tangerine", "satsuma", "cherry", "cherries",
         "melon", "pineapple", "grapefruit", "fig", "pomegranate")
# what people eat between meals: "grab me a snack"
SNACKS = ("crisps", "chips", "potato chips", "tortilla chips", "chocolate", "chocolates", "biscuit", "biscuits",
          "cookie", "cookies", "cracker", "crackers", "pretzels", "popcorn", "nuts", "mixed nuts", "peanuts", "granola",
          "muffin", "cupcake", "doughnut", "donut")
# words that make a label a group's member or a synonym's only as the whole label, not as its last
# word: "wing nuts" and "hex nuts" are hardware, "poker chips" and "wood chips" no snack nor crisps
# (a food of them is listed whole: "potato chips", "mixed nuts"); "the chips" still names poker chips
WHOLE_LABEL_ONLY: tuple[str, ...] = ("nuts", "chips")
# group word -> the labels (or labels' last words) it names
GROUPS: dict[str, tuple[str, ...]] = {
    "fruit": FRUIT,
    "flower": ("rose", "roses", "tulip", "tulips", "daisy", "daisies", "lily", "lilies", "sunflower", "sunflowers",
               "carnation", "carnations", "orchid", "peony", "peonies", "bouquet", "posy"),
    "vegetable": ("carrot", "tomato", "potato", "onion", "pepper", "cucumber", "broccoli", "corn"),
    "drink": ("bottle", "can", "carton", "soda", "juice", "milk"),
    "container": ("bowl", "jar", "box", "basket", "mug", "cup", "can", "bottle", "tin", "carton", "tub"),
    # a dish holds food (plate, bowl); cups and mugs are what one drinks from, not dishes
    "dish": ("plate", "bowl", "saucer", "platter"),
    "something to write with": ("pen", "pencil", "marker", "crayon"),
    "something to draw with": ("pen", "pencil", "marker", "crayon", "chalk"),
    "something to cut with": ("scissors", "shears", "knife", "cutter", "scalpel", "blade", "snips"),
    "something to slice with": ("knife", "cutter", "slicer", "cleaver"),
    "something to chop with": ("knife", "cleaver", "hatchet", "axe"),
    "something to dig with": ("trowel", "shovel", "spade"),
    "something to eat with": ("spoon", "fork", "chopsticks", "knife"),
    "something to drink from": ("mug", "cup", "glass"),
    "snack": SNACKS,
    # "I'm hungry, give me something to eat" (`parser`: a speaker's state before a request is filler)
    "something to eat": FRUIT + SNACKS + ("sandwich", "bread", "cake", "yoghurt", "yogurt"),
    "something to drink": ("bottle", "can", "carton"),
    "something to clean with": ("sanitizer", "soap", "wipes", "sponge", "cloth", "cleaner"),
    "something to wipe with": ("towel", "towels", "napkin", "napkins", "wipes", "cloth", "tissue", "tissues"),
    "something to take a temperature with": ("thermometer",),
    "something to tie with": ("ribbon", "string", "twine", "rope", "cord", "raffia", "band", "bands", "tie", "ties"),
    "something to write on": ("paper", "notebook", "notepad", "pad", "card", "cards", "envelope"),
    # "something to blow my nose on" (`parser`: "something to blow my nose on" -> "something to blow on")
    "something to blow on": ("tissue", "tissues", "handkerchief", "hanky", "napkin", "napkins"),
    # what a thing is for: "something for the mosquitoes" (`parser`: "something for the X" -> "something for X")
    "something for mosquitoes": ("spray", "repellent", "net", "coil"),
    "something for bugs": ("spray", "repellent"),
    "something for insects": ("spray", "repellent"),
    "something for flies": ("spray", "repellent", "swatter"),
    "something for a headache": ("aspirin", "ibuprofen", "paracetamol", "painkillers", "tablets", "pills"),
    # what comes in a can: "the yellow and black can" is the bug spray
    "can": ("spray", "deodorant", "hairspray", "soda", "cola", "tuna", "beans"),
    "cake": ("cupcake", "cheesecake", "gateau"),
    # what comes as a box: "the green and white box" is the first aid kit
    "box": ("kit",),
    # what liquids and sprays come in: "the pink bottle" is the fabric softener
    "bottle": ("sanitizer", "softener", "detergent", "shampoo", "conditioner", "lotion", "bleach", "remover", "cleaner",
               "ketchup", "vinegar", "syrup", "oil"),
    "spray bottle": ("remover", "cleaner", "spray", "starch"),
    # a toy box holds toys, it is not one (`lexicon.packaging_content`)
    "toy": ("ball", "block", "bear", "doll", "duck", "car", "truck", "train", "robot", "dinosaur", "puzzle", "top",
            "yoyo", "kite", "rattle", "figure", "lego"),
}
# words that name the same kind of thing
SYNONYMS: tuple[tuple[str, ...], ...] = (
    ("mug", "cup"),
    ("bottle", "flask"),
    ("box", "carton", "package"),
    ("can", "tin"),
    ("peg", "clothes peg", "clothespin"),
    ("donut", "doughnut"),
    ("register", "till", "cash register"),
    ("cat litter", "kitty litter"),
    ("shears", "secateurs", "pruners", "clippers"),
    ("spray bottle", "mister", "plant mister", "sprayer", "spritzer"),
    ("harmonica", "mouth organ"),
    ("cola", "coke"),
    ("crisps", "chips", "potato chips"),
)
# what one drinks, and what it is served in: "my glass of water" is the glass (`parser.scene_phrases`)
DRINKS: tuple[str, ...] = ("water", "tea", "coffee", "milk", "juice", "soda", "lemonade", "cola", "wine", "beer",
                           "cocoa", "squash", "smoothie")
DRINK_VESSELS: tuple[str, ...] = ("glass", "cup", "mug", "bottle", "jug", "flask", "thermos", "tumbler", "carton",
                                  "can", "beaker")
# the form a material comes in: "the pink yarn" is the pink yarn ball
FORM_HEADS: tuple[str, ...] = ("ball", "roll", "spool", "reel", "skein", "stick", "bar", "sheet")
# the forms a material is sold and kept in: "the spool" or "the spool of ribbon" is the ribbon, when
# the label names only the material (a bare form word yields to an object labelled by it: "the ball"
# is the toy ball, not the twine, when both are there)
MATERIAL_FORMS: dict[str, tuple[str, ...]] = {
    "yarn": ("ball", "skein"), "wool": ("ball", "skein"), "twine": ("ball", "roll"), "string": ("ball", "roll"),
    "ribbon": ("spool", "roll", "reel"), "thread": ("spool", "reel"), "wire": ("spool", "roll", "reel"),
    "tape": ("roll",), "foil": ("roll",), "paper": ("roll", "sheet"), "soap": ("bar",), "chocolate": ("bar",), "chalk": ("stick",),
}
# the last word of a label that names the packaging (or the form), not the thing: "the cereal" is the cereal box
PACKAGING_HEADS: tuple[str, ...] = ("box", "bottle", "jar", "can", "carton", "bag", "tin", "packet", "pack", "tub",
                                    "tube", "pot", "basket") + FORM_HEADS
# what things are put in (open at the top): "put it in the bowl" sets it down inside one of these
# (a tin as a box is kept in, a dish as a kidney dish holds instruments, "the button tin", "the pencil tin"; a can, its synonym, is not)
OPEN_CONTAINERS: tuple[str, ...] = ("bowl", "basket", "box", "tray", "bin", "crate", "bucket", "tub", "mug", "cup",
                                    "jar", "pot", "pan", "drawer", "container", "tin", "dish")
