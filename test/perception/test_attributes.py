import numpy as np
import pytest

from spatial_manip.perception.attributes import book_size_class, colour_distance, colour_name, size_mismatch


@pytest.mark.parametrize("rgb,name", [
    ((220, 30, 25), "red"), ((30, 60, 210), "blue"), ((40, 170, 60), "green"), ((230, 215, 30), "yellow"),
    ((240, 240, 240), "white"), ((15, 15, 15), "black"), ((128, 128, 130), "gray"), ((120, 70, 30), "brown"),
    ((140, 50, 180), "purple"), ((240, 130, 20), "orange")])
def test_colour_names(rgb, name):
    assert colour_name(rgb) == name


def test_colour_name_survives_shading():
    assert colour_name((110, 15, 12)) == colour_name((220, 30, 25)) == "red"


@pytest.mark.parametrize("size,cls", [
    ((0.18, 0.12, 0.016), "small"), ((0.12, 0.017, 0.18), "small"),      # any axis order
    ((0.235, 0.16, 0.022), "medium"), ((0.28, 0.22, 0.038), "large"),
    ((0.06, 0.06, 0.08), None), ((0.5, 0.3, 0.03), None)])
def test_book_size_classes_follow_espire_table_20(size, cls):
    assert book_size_class(size) == cls


def test_colour_distance_and_size_mismatch():
    assert colour_distance("red", (220, 30, 25)) == 0.0
    assert colour_distance("blue", (220, 30, 25)) > 0.5
    assert colour_distance((220, 30, 25), (110, 15, 12)) < colour_distance((220, 30, 25), (30, 60, 210))
    assert size_mismatch((0.1, 0.2, 0.03), (0.2, 0.03, 0.1)) == pytest.approx(0.0)
    assert size_mismatch((0.1, 0.2, 0.03), (0.3, 0.2, 0.03)) > 0.2


def test_colour_aliases_and_unknown_names():
    assert colour_distance("grey", (128, 128, 130)) == 0.0
    assert colour_distance("chartreuse-ish", (128, 128, 130)) == 0.5
