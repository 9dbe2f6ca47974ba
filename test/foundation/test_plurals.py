"""Plurals have one home (spatial_manip/plurals.py), read alike by the parser's lexicon and by
perception's naming by the instruction's words; they once disagreed on "buses" and "tomatoes"."""
import pytest

from spatial_manip.perception.labelling import name_from_words
from spatial_manip.plurals import plural, plurals, singulars
from spatial_manip.reasoning.lexicon import scene_lexicon
from spatial_manip.scene import Scene, SceneObject, Viewpoint

NOUNS = ("bus", "tomato", "box", "glass", "peach", "dish", "berry", "toy", "mug", "alarm clock", "house", "shoe",
         "photo", "vase", "fez")


@pytest.mark.parametrize("noun", NOUNS)
def test_every_plural_form_reads_back_as_its_noun(noun):
    assert plural(noun) in plurals(noun)
    for form in plurals(noun):
        assert noun.split()[-1] in singulars(form.split()[-1]), (noun, form)


def test_the_forms_once_read_two_ways():
    assert singulars("buses") == {"bus", "buse"} and singulars("tomatoes") == {"tomato", "tomatoe"}
    assert plurals("bus") == {"buses"} and plurals("tomato") == {"tomatos", "tomatoes"}
    assert singulars("glasses") == {"glass"} and singulars("hummus") == {"hummus"}


VIEWER, ROBOT = Viewpoint([-0.8, 0.0, 0.9], [1.0, 0.0, -0.6]), Viewpoint([0, 0, 0], [1, 0, 0])


def _scene(*objects) -> Scene:
    return Scene(VIEWER, ROBOT, objects=list(objects))


def _object(id_, label, category, x):
    return SceneObject(id_, label, category, [x, 0.0, 0.0], [0.08, 0.08, 0.08])


def test_the_lexicon_and_the_words_naming_read_tomatoes_alike():
    scene = _scene(_object("t1", "tomato", "tomato", 0.4), _object("t2", "tomato", "tomato", 0.6))
    lex = scene_lexicon(scene)
    assert lex["tomatoes"].ids == ("t1", "t2") and lex["tomatoes"].plural
    tied = _object("object_0", "object", "object", 0.5)
    tied.extra["candidates"] = [{"label": "bus", "category": "toy", "id": "toy_bus", "tie": True},
                                {"label": "mug", "category": "mug", "id": "red_mug", "tie": True}]
    named, notes = name_from_words(_scene(tied), "put the buses away")
    assert [o.label for o in named.objects] == ["bus"] and len(notes) == 1
