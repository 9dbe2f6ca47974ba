import numpy as np
import pytest

from spatial_manip.perception.attributes import (book_size_class, colour_distance, seen_colour_distance, colour_name, colour_names, lit_alike, mean_rgb,
                                                  size_mismatch)


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


def test_a_named_colour_under_a_dimmer_or_brighter_light_is_a_near_match():
    dim_orange = (122, 64, 13)            # an orange book under a dim light reads brown
    assert colour_name(dim_orange) == "brown"
    assert colour_distance("brown", dim_orange) == 0.0
    assert colour_distance("orange", dim_orange) == pytest.approx(0.2)
    assert colour_distance("blue", dim_orange) > 0.5          # no light turns it blue
    assert colour_distance("white", (157, 157, 148)) == pytest.approx(0.2)   # a shaded white jar


def test_one_colour_for_one_pixel_and_for_an_object_of_that_pixel():
    """The single-colour name and the object's names are one definition (CIELAB)."""
    for rgb in [(220, 30, 25), (0, 0, 255), (40, 98, 255), (140, 50, 180), (235, 235, 230), (214, 199, 154)]:
        assert colour_names(np.array([rgb] * 10)) == [colour_name(rgb)]


def test_a_pixel_clipped_in_some_channels_says_nothing_of_the_hue():
    # a yellow cube's lit top clipped to (255, 255, 40) and its side unclipped: the material is the side's
    top, side = (255, 255, 40), (174, 147, 18)
    rgb = np.array([[top] * 6 + [side] * 4], np.uint8)
    assert mean_rgb(rgb, np.ones(rgb.shape[:2], bool)) == (174.0, 147.0, 18.0)
    # white clipped in all three channels stays white, and a cover clipped nearly everywhere keeps its pixels
    white = np.array([[(255, 255, 255)] * 6 + [(200, 200, 200)] * 4], np.uint8)
    assert mean_rgb(white, np.ones(white.shape[:2], bool)) == (255.0, 255.0, 255.0)
    cover = np.array([[top] * 9 + [side]], np.uint8)
    assert mean_rgb(cover, np.ones(cover.shape[:2], bool)) == (255.0, 255.0, 40.0)


def test_clipped_pixels_that_are_most_of_a_mask_are_the_object_when_the_rest_is_another_colour():
    # a yellow cube on a lit shelf, its mask 70% cube (red and green clipped) and 30% the brown shelf
    # the misregistered depth takes in (place-80-00004): the cube's colour, not the shelf's
    cube, shelf = (255, 235, 32), (163, 129, 88)
    rgb = np.array([[cube] * 7 + [shelf] * 3], np.uint8)
    assert not lit_alike(cube, shelf)
    assert mean_rgb(rgb, np.ones(rgb.shape[:2], bool)) == (255.0, 235.0, 32.0)
    # an orange book's lit top over its shaded side is one colour more lit: the side's
    top, side = (255, 179, 32), (228, 122, 22)
    assert lit_alike(top, side) and lit_alike((41, 97, 255), (10, 25, 74))
    book = np.array([[top] * 7 + [side] * 3], np.uint8)
    assert mean_rgb(book, np.ones(book.shape[:2], bool)) == (228.0, 122.0, 22.0)
    # the shelf as most of the mask stays what it is read as, as before
    mostly_shelf = np.array([[cube] * 4 + [shelf] * 6], np.uint8)
    assert mean_rgb(mostly_shelf, np.ones(mostly_shelf.shape[:2], bool)) == (163.0, 129.0, 88.0)



@pytest.mark.parametrize("rgb,name", [((0, 0, 255), "blue"), ((0, 0, 128), "blue"), ((60, 60, 255), "blue"),
                                      ((128, 0, 255), "purple"), ((148, 0, 211), "purple"), ((255, 105, 180), "pink")])
def test_saturated_blues_are_blue_and_violets_purple(rgb, name):
    # CIELAB crowds them together (pure blue at hue 306, a violet at 312): a blue ketchup bottle
    # rendered pure blue was named purple
    assert colour_name(rgb) == name


def test_colour_aliases_and_unknown_names():
    assert colour_distance("grey", (128, 128, 130)) == 0.0
    assert colour_distance("chartreuse-ish", (128, 128, 130)) == 0.5



def _synth_box(centre, size):
    """An axis-aligned rendered box of one colour, for the hidden-foot frames below."""
    from spatial_manip.geometry import synthetic as S
    return S.SynthBox(np.array(centre), np.array(size), np.eye(3), (200, 60, 40))

def _box(size, mode, center=(0.5, 0.0, 0.1), R=None):
    from spatial_manip.geometry.boxes import Box3D
    return Box3D(np.asarray(center, float), np.asarray(size, float), np.eye(3) if R is None else R, mode, 500, 500,
                 1.0, 0.001)


def test_a_leaning_cover_gets_its_class_thickness_grown_away_from_the_camera():
    from spatial_manip.perception.box import complete_leaning_book
    # a small book's cover (0.12 x 0.18) seen face-on: thin axis y, the camera on the -y side
    box = _box((0.12, 0.003, 0.18), "full")
    assert complete_leaning_book(box, np.array([0.5, -1.0, 0.5]))
    assert box.size[1] == pytest.approx(0.0165)                 # ESPIRE small: 15-18 mm
    assert box.center[1] == pytest.approx((0.0165 - 0.003) / 2)   # grown on the hidden side
    # a thin slab whose face is no book's cover stays as measured
    other = _box((0.40, 0.003, 0.40), "full")
    assert not complete_leaning_book(other, np.array([0.5, -1.0, 0.5]))
    assert other.size[1] == pytest.approx(0.003)


def test_an_upright_fit_of_a_leaning_book_still_matches_its_expected_size():
    from spatial_manip.perception.base import Detection, ExpectedObject
    from spatial_manip.perception.labelling import leaning_extents, match_cost
    book = ExpectedObject("book", "book", size_m=(0.14, 0.02, 0.239), colour="cyan", id="book_1")
    seen = leaning_extents(book.size_m, tilts_deg=[40])[0] * np.array([1.0, 0.9, 0.9])   # edges only
    det = Detection("", "object", "object", np.zeros((2, 2), bool), 0.5, _box(seen, "yaw"), (20, 180, 200))
    assert match_cost(det, book) < 0.8
    # the same box is no match for a reference of those dimensions (it does not lean)
    ref = ExpectedObject("jar", "reference", size_m=(0.14, 0.02, 0.239), colour="cyan")
    assert match_cost(det, ref) > 0.8


def test_a_book_seen_only_in_part_gets_the_one_class_that_can_hold_it():
    # a leaning large book cut by the image's edge: no class fits as measured
    part = (0.214, 0.085, 0.044)
    assert book_size_class(part) is None
    assert book_size_class(part, at_least=True) == "large"     # only a large book is 4.4 cm thick
    assert book_size_class((0.15, 0.05, 0.015), at_least=True) is None   # any class could hold it
    assert book_size_class((0.40, 0.10, 0.02), at_least=True) is None    # no book is 40 cm long


def test_a_lower_bound_size_forgives_a_shortfall_but_not_an_excess():
    shrub = (0.34, 0.45, 0.46)
    seen = (0.19, 0.19, 0.25)            # the part of it in view
    assert size_mismatch(seen, shrub) > 0.4
    assert size_mismatch(seen, shrub, at_least=True) < 0.15
    bigger = (0.5, 0.6, 0.6)
    assert size_mismatch(bigger, shrub, at_least=True) == pytest.approx(size_mismatch(bigger, shrub))


def test_a_detection_touching_the_image_edge_is_truncated_and_matched_as_a_lower_bound():
    from spatial_manip.perception.base import Detection, ExpectedObject, touches_image_edge
    from spatial_manip.perception.labelling import match_cost
    inside, at_edge = np.zeros((48, 64), bool), np.zeros((48, 64), bool)
    inside[10:20, 10:20] = True
    at_edge[10:20, 0:10] = True
    assert not touches_image_edge(inside) and touches_image_edge(at_edge)
    shrub = ExpectedObject("juniperus communis", "reference", size_m=(0.34, 0.45, 0.46), colour="green")
    seen = _box((0.19, 0.19, 0.25), "yaw")
    cut = Detection("", "object", "object", at_edge, 0.5, seen, (40, 160, 60))
    whole = Detection("", "object", "object", inside, 0.5, seen, (40, 160, 60))
    assert cut.truncated and not whole.truncated
    assert match_cost(cut, shrub) < 0.8 < match_cost(whole, shrub)


def test_a_cluster_two_pixels_across_is_a_depth_edge_not_an_object():
    from spatial_manip.perception.classical import EDGE_BAND_PX, image_width_px
    strip, lying, book = (np.zeros((48, 64), bool) for _ in range(3))
    strip[5:40, 30:32] = True
    lying[20:22, 5:60] = True
    book[5:40, 30:33] = True             # the thinnest book's spine 3 m away
    assert image_width_px(strip) <= EDGE_BAND_PX and image_width_px(lying) <= EDGE_BAND_PX
    assert image_width_px(book) > EDGE_BAND_PX


def test_a_face_smeared_by_the_range_noise_has_its_level_sides_along_the_line_of_sight():
    from spatial_manip.perception.base import along_line_of_sight
    camera = np.array([-1.7, 0.0, 0.6])            # 2.7 m from the box, looking 13 degrees down
    c, s = np.cos(np.radians(40)), np.sin(np.radians(40))
    turned = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])   # by the noise: neither side along the sight
    spine = _box((0.049, 0.030, 0.179), "yaw", center=(1.0, 0.0, 0.0), R=turned)
    assert along_line_of_sight(spine, camera).tolist() == [True, True, False]
    deep = _box((0.30, 0.030, 0.179), "yaw", center=(1.0, 0.0, 0.0), R=turned)    # its depth was seen
    assert along_line_of_sight(deep, camera).tolist() == [False, False, False]
    near = _box((0.049, 0.030, 0.179), "yaw", center=(-1.0, 0.0, 0.0), R=turned)  # 0.9 m: little noise
    assert along_line_of_sight(near, camera).tolist() == [False, False, False]


def test_a_lower_bound_on_some_sides_pairs_each_side_with_the_expected_side_that_fits_it():
    frame = (0.13, 0.22, 0.18)
    face_on = (0.22, 0.03, 0.18)         # its depth, along the line of sight, is hidden
    assert size_mismatch(face_on, frame) > 0.2
    assert size_mismatch(face_on, frame, at_least=[False, True, False]) < 0.08
    # a side seen in full is not forgiven: a 2 cm slab is no 20 cm teddy bear, even cut by the edge
    teddy, slab = (0.2, 0.23, 0.25), (0.22, 0.14, 0.02)
    assert size_mismatch(slab, teddy, at_least=[True, True, False]) > 0.25 > size_mismatch(slab, teddy, at_least=True)


def test_an_excess_within_the_range_noise_along_a_side_costs_nothing():
    cube, carton = (0.062, 0.059, 0.062), (0.135, 0.054, 0.055)
    seen = (0.077, 0.041, 0.061)         # the demo's cube at 1.8 m, long along the line of sight
    assert size_mismatch(seen, cube, at_least=True) > size_mismatch(seen, carton, at_least=True)
    smear = [0.018, 0.005, 0.009]
    assert size_mismatch(seen, cube, at_least=True, excess_tol_m=smear) < size_mismatch(seen, carton, at_least=True,
                                                                                         excess_tol_m=smear)
    # only an excess is forgiven, and only up to the allowance: a shortfall costs as before
    assert size_mismatch((0.05, 0.05, 0.05), cube, excess_tol_m=0.02) == pytest.approx(size_mismatch((0.05,) * 3, cube))
    assert size_mismatch((0.09, 0.062, 0.062), cube, excess_tol_m=[0.01, 0.0, 0.0]) == pytest.approx(
        size_mismatch((0.08, 0.062, 0.062), cube))


def test_the_range_noise_allowance_follows_the_line_of_sight_and_the_range():
    from spatial_manip.geometry.pointcloud import range_tolerance_m
    from spatial_manip.perception.base import RANGE_SMEAR_SIGMAS, range_smear_sides_m

    box = _box((0.06, 0.06, 0.06), "yaw")
    box.center = np.array([1.8, 0.0, 0.0])
    along, across, up = range_smear_sides_m(box, (0.0, 0.0, 0.0))
    assert along == pytest.approx(float(range_tolerance_m(1.8, sigmas=RANGE_SMEAR_SIGMAS)))
    assert across == pytest.approx(0.0) and up == pytest.approx(0.0)
    near = range_smear_sides_m(box, (1.0, 0.0, 0.0))[0]
    assert 0 < near < along


def test_only_the_sides_along_the_line_of_sight_or_towards_a_touched_edge_are_lower_bounds():
    from spatial_manip.camera_model import CameraIntrinsics
    from spatial_manip.transforms import look_at
    from spatial_manip.perception.base import lower_bound_sides

    T = look_at((0.0, 0.0, 0.5), (1.0, 0.0, 0.5))     # level, looking along +x
    K = CameraIntrinsics.from_fovy(64, 48, 45.0)
    box = _box((0.2, 0.1, 0.3), "yaw")
    box.center = np.array([1.0, 0.0, 0.5])
    inside, at_right = np.zeros((48, 64), bool), np.zeros((48, 64), bool)
    inside[10:20, 10:20] = True
    at_right[10:20, 54:] = True
    assert lower_bound_sides(box, inside, K, T) == [True, False, False]     # x: away from the camera
    assert lower_bound_sides(box, at_right, K, T) == [True, True, False]    # y runs across the image


def test_the_hidden_part_of_an_object_cut_by_the_image_s_edge_lies_beyond_that_edge():
    """A box cut by the image's right edge may run on only out through it: along its side whose
    image crosses that edge, pointed out of the image (world -y, the camera's right when it looks
    along +x); the left edge the other way, the top edge upwards. A cut edge that no side crosses
    leaves the direction unknown (None); an object inside the image has none."""
    from spatial_manip.camera_model import CameraIntrinsics
    from spatial_manip.transforms import look_at
    from spatial_manip.perception.base import hidden_directions

    T = look_at((0.0, 0.0, 0.5), (1.0, 0.0, 0.5))     # level, looking along +x
    K = CameraIntrinsics.from_fovy(64, 48, 45.0)
    box = _box((0.2, 0.1, 0.3), "yaw", center=(1.0, 0.0, 0.5))
    masks = {name: np.zeros((48, 64), bool) for name in ("inside", "right", "left", "top", "top_right")}
    masks["inside"][10:20, 10:20] = True
    masks["right"][10:20, 54:] = True
    masks["left"][10:20, :10] = True
    masks["top"][:10, 20:30] = True
    masks["top_right"][:10, 54:] = True
    assert hidden_directions(box, masks["inside"], K, T) == []
    assert np.allclose(hidden_directions(box, masks["right"], K, T), [[0.0, -1.0, 0.0]])
    assert np.allclose(hidden_directions(box, masks["left"], K, T), [[0.0, 1.0, 0.0]])
    assert np.allclose(hidden_directions(box, masks["top"], K, T), [[0.0, 0.0, 1.0]])
    assert np.allclose(hidden_directions(box, masks["top_right"], K, T), [[0.0, -1.0, 0.0], [0.0, 0.0, 1.0]])
    a_pillar = _box((0.0, 0.0, 0.3), "yaw", center=(1.0, 0.0, 0.5))    # no side of it crosses the image
    assert hidden_directions(a_pillar, masks["right"], K, T) is None


def test_a_cluster_that_fits_a_book_and_a_listed_object_about_equally_is_refused_that_name():
    from spatial_manip.perception.base import Detection, ExpectedObject
    from spatial_manip.perception.labelling import assign_labels, match_cost
    mask = np.zeros((48, 64), bool)
    mask[10:20, 10:20] = True
    # a red alarm clock in a shelf, its depth along the line of sight; a red book leaning 10
    # degrees has the same upright box
    det = Detection("", "object", "object", mask, 0.5, _box((0.129, 0.047, 0.166), "yaw"), (197, 36, 36),
                    extra={"lower_bound_sides": [False, True, False]})
    book = ExpectedObject("book", "book", size_m=(0.129, 0.017, 0.176), colour="red", id="book_3")
    clock = ExpectedObject("alarm clock", "reference", size_m=(0.07, 0.13, 0.17), colour=(217, 38, 38), id="near_1")
    assert match_cost(det, book) < match_cost(det, clock) < 0.3
    # it was named the alarm clock because the episode's list held one clock and a book entry
    # left over cost little; a library holds both and the cluster fits the book better: unsure
    assign_labels([det], [book, clock])
    assert det.label != "alarm clock" and det.id != "near_1" and det.extra["refused"] == "alarm clock or book"


def test_a_refused_name_is_given_when_the_instruction_names_one_of_its_candidates():
    """place-51-00005/6/13 (seeds no tuning used): the red alarm clock in the top slot, seen
    face-on, fitted the alarm clock or a red book (refused, as above), and "a slot on the alarm
    clock's right" found no alarm clock in all three. The person's words say an alarm clock is
    there: the one cluster that fits it is it. Never a book, never a second object of a name
    the scene has, never one of two clusters that fit equally."""
    from spatial_manip.perception.base import Detection, ExpectedObject, detections_to_scene
    from spatial_manip.perception.labelling import assign_labels, name_from_words
    from spatial_manip.observation import RGBDObservation
    from spatial_manip.camera_model import CameraIntrinsics
    mask = np.zeros((48, 64), bool)
    mask[10:20, 10:20] = True
    obs = RGBDObservation(rgb=np.full((48, 64, 3), 200, np.uint8), depth_m=np.ones((48, 64), np.float32),
                          intrinsics=CameraIntrinsics.from_fovy(64, 48, 45.0), T_base_cam=np.eye(4))

    def seen(center):
        return Detection("", "object", "object", mask, 0.5, _box((0.129, 0.047, 0.166), "yaw", center=center),
                         (197, 36, 36), extra={"lower_bound_sides": [False, True, False]})
    book = ExpectedObject("book", "book", size_m=(0.129, 0.017, 0.176), colour="red", id="book_red_small")
    clock = ExpectedObject("alarm clock", "reference", size_m=(0.07, 0.13, 0.17), colour=(217, 38, 38), id="alarm_clock")
    dets = assign_labels([seen((0.9, 0.3, 0.6))], [book, clock])
    scene = detections_to_scene(dets, obs, fronts=["alarm_clock"])
    named, notes = name_from_words(scene, "put the book into a slot on the alarm clock's right as you see it")
    clock_seen = named.get("alarm_clock")
    assert clock_seen.label == "alarm clock" and clock_seen.category == "reference" and clock_seen.extra["has_front"]
    assert len(notes) == 1 and "alarm clock" in notes[0]
    assert name_from_words(scene, "take the red book") == (scene, [])          # words that name no candidate
    # two clusters that fit the clock equally: the words cannot say which
    two = detections_to_scene(assign_labels([seen((0.9, 0.3, 0.6)), seen((0.9, -0.3, 0.6))], [book, clock]), obs)
    assert name_from_words(two, "the slot left of the alarm clock")[1] == []


def test_a_side_seen_in_full_of_an_object_cut_elsewhere_is_forgiven_a_little():
    shrub, seen = (0.63, 0.61, 0.6), (0.3, 0.25, 0.2)
    full = size_mismatch(seen, shrub, at_least=[True, True, False])
    assert size_mismatch(seen, shrub, at_least=True) < size_mismatch(seen, shrub, at_least=[0.25, 0.25, 0.6]) < full


def test_a_reference_said_to_stand_on_the_table_is_not_a_detection_beyond_it():
    """pick-14-00006 (a seed no tuning used): the picture frame at the table's edge, seen in
    part, fitted the floor lamp's catalogue entry, and the floor lamp on its plinth 1.4 m away,
    seen in part, took the picture frame's label, so "a book closer than 25 cm to the picture
    frame" found none. Where the cell says each stands, the frame's label stays on the table."""
    from spatial_manip.perception.base import Detection, ExpectedObject, FixturePart
    from spatial_manip.perception.labelling import assign_labels
    mask = np.zeros((48, 64), bool)
    mask[10:20, 0:10] = True                    # both run out of the image
    table = FixturePart(np.array([0.55, 0.0, -0.35]), np.array([0.6, 1.4, 0.7]), np.eye(3))
    # the two detections as the classical segmenter gave them to the labelling
    frame_seen = _box((0.136, 0.043, 0.179), "yaw", center=(0.526, 0.423, 0.09))
    lamp_seen = _box((0.227, 0.172, 0.142), "full", center=(1.416, -0.386, 0.034))
    dets = [Detection("", "object", "object", mask, 0.5, frame_seen, (143, 114, 57),
                      extra={"lower_bound_sides": [True, True, True]}),
            Detection("", "object", "object", mask, 0.5, lamp_seen, (34, 34, 34),
                      extra={"lower_bound_sides": [False, True, True]})]
    frame = ExpectedObject("picture frame", "reference", size_m=(0.13, 0.22, 0.18), colour=(191, 153, 76),
                           id="near_1", placement="near")
    lamp = ExpectedObject("floor lamp", "reference", size_m=(0.48, 0.48, 0.59), colour=(242, 230, 153),
                          id="distant_1", placement="distant")
    assign_labels(dets, [frame, lamp], work_areas=(table,))
    assert dets[0].label == "picture frame" and dets[1].label != "picture frame"
    with pytest.raises(ValueError, match="placement"):
        ExpectedObject("lamp", placement="far away")


def test_a_distant_plant_seen_only_as_its_pot_is_left_unnamed_not_named_by_elimination():
    """pick-15-00009: the philadelphus shrub on its plinth behind the table showed only its pot
    at the image's top edge (brown, 31 x 11 x 18 cm); nothing in its catalogue entry (63 x 61 x
    60 cm, green) matches that. It used to be named by elimination (the one distant object the
    episode's list left); a lab's library is no complete list, so the pot stays unnamed."""
    from spatial_manip.perception.base import Detection, ExpectedObject, FixturePart
    from spatial_manip.perception.labelling import assign_labels
    at_top = np.zeros((48, 64), bool)
    at_top[0:5, 20:30] = True
    table = FixturePart(np.array([0.55, 0.0, -0.35]), np.array([0.6, 1.4, 0.7]), np.eye(3))
    shrub = ExpectedObject("philadelphus shrub", "reference", size_m=(0.63, 0.61, 0.6), colour=(60, 140, 50),
                           id="distant_1", placement="distant")
    pot = Detection("", "object", "object", at_top, 0.5, _box((0.313, 0.11, 0.179), "yaw", center=(1.503, 0.133, 0.04)),
                    (117, 64, 43), extra={"lower_bound_sides": [False, True, True]})
    assign_labels([pot], [shrub], work_areas=(table,))
    assert pot.label == "object" and pot.id != "distant_1"


def test_a_cluster_two_listed_objects_fit_about_equally_is_refused_a_name():
    """With a library most of whose objects are absent, a cluster that fits two of them (a jar and
    a cup of one size and colour) is left unnamed and says why, rather than guessed."""
    from spatial_manip.perception.base import Detection, ExpectedObject
    from spatial_manip.perception.labelling import assign_labels
    mask = np.zeros((48, 64), bool)
    mask[10:20, 20:30] = True

    def seen():
        return Detection("", "object", "object", mask, 0.5, _box((0.06, 0.06, 0.08), "yaw", center=(0.5, 0, 0.04)),
                         (230, 230, 220))
    jar = ExpectedObject("ceramic jar", "reference", size_m=(0.06, 0.06, 0.08), colour=(230, 230, 217), id="jar")
    cup = ExpectedObject("cup", "object", size_m=(0.06, 0.062, 0.081), colour=(228, 230, 220), id="cup")
    d = seen()
    assign_labels([d], [jar, cup])
    assert d.label == "object" and d.extra["refused"] in ("ceramic jar or cup", "cup or ceramic jar")
    red = ExpectedObject("cup", "object", size_m=(0.06, 0.062, 0.081), colour=(200, 30, 30), id="cup")
    d = seen()
    assign_labels([d], [jar, red])      # a red cup is no rival: the white cluster is the jar
    assert d.label == "ceramic jar" and d.id == "jar"


def test_an_outline_hidden_by_something_nearer_makes_that_side_a_lower_bound():
    """place-8-00014: a geosphere in a shelf slot, a quarter of it seen past what stands in front
    of it, measured 6 x 3 x 11 cm: as a whole object it matched nothing (cost 1.1 over a gate of
    0.8) and "the slot immediately to the right of the geosphere sculpture" found none. The side
    that runs behind the nearer thing is only a lower bound, as one that runs out of the image."""
    from spatial_manip.camera_model import CameraIntrinsics
    from spatial_manip.transforms import look_at
    from spatial_manip.perception.base import hidden_edges, lower_bound_sides

    depth = np.full((48, 64), 2.0)
    mask = np.zeros((48, 64), bool)
    mask[10:30, 20:30] = True
    depth[mask] = 1.0
    assert hidden_edges(mask, depth) == (False, False, False, False)     # the background is farther
    depth[5:35, 30:40] = 0.6                                             # something nearer on its right
    assert hidden_edges(mask, depth) == (False, True, False, False)
    depth[30:33, 15:35] = 0.98                                           # the table just before its foot
    assert hidden_edges(mask, depth)[3] is False

    T = look_at((0.0, 0.0, 0.5), (1.0, 0.0, 0.5))     # level, looking along +x: image right is -y
    K = CameraIntrinsics.from_fovy(64, 48, 45.0)
    box = _box((0.1, 0.2, 0.3), "yaw", center=(1.0, 0.0, 0.5))
    assert lower_bound_sides(box, mask, K, T) == [True, False, False]
    assert lower_bound_sides(box, mask, K, T, depth) == [True, True, False]


def test_a_cut_takes_a_slabs_faces_not_its_thickness_unless_it_crosses_it_squarely():
    """pick-93-00012: a book lying on a pedestal, cut by the image's left edge to a 22 x 6 x 2.6 cm
    strip, had its thickness (its image 30% across the edge, by perspective) taken for a lower
    bound, and the pagoda statue fit it better than a book. A statue cut to a thin strip by the
    edge has its thin side running into the edge: that one stays a lower bound."""
    from spatial_manip.camera_model import CameraIntrinsics
    from spatial_manip.transforms import look_at
    from spatial_manip.perception.base import lower_bound_sides

    roll = np.radians(25.0)                  # rolled: a vertical side's image leans 25 degrees
    T = look_at((0.0, 0.0, 0.5), (1.0, 0.0, 0.5), up=(0.0, np.sin(roll), np.cos(roll)))
    K = CameraIntrinsics.from_fovy(64, 48, 45.0)
    at_left = np.zeros((48, 64), bool)
    at_left[20:30, :8] = True
    lying = _box((0.22, 0.06, 0.026), "yaw", center=(1.0, 0.0, 0.5))      # its thickness is its height
    assert lower_bound_sides(lying, at_left, K, T) == [True, True, False]
    strip = _box((0.22, 0.03, 0.2), "yaw", center=(1.0, 0.0, 0.5))        # its thin side runs into the edge
    assert lower_bound_sides(strip, at_left, K, T) == [True, True, True]


def test_a_foot_hidden_by_something_standing_in_front_makes_the_height_a_lower_bound():
    """pick-18-00015: a book in its holder, the holder's near wall hiding its lower 5 cm, measured
    13.5 cm tall instead of 18.3: not a book (cost 0.83 over a gate of 0.8), and "a book at least
    1.5 m away from you" found none. The table in front of a foot hides nothing; a wall rising
    above the table in front of it does."""
    from spatial_manip.geometry import synthetic as S
    from spatial_manip.camera_model import CameraIntrinsics
    from spatial_manip.perception.base import foot_hidden
    from spatial_manip.perception.planes import known_plane

    T = S.look_at(np.array([0.0, 0.0, 0.6]), np.array([1.0, 0.0, 0.05]))
    K = CameraIntrinsics.from_fovy(160, 120, 30.0)

    book, wall = _synth_box((1.0, 0.0, 0.09), (0.017, 0.12, 0.18)), _synth_box((0.975, 0.0, 0.035), (0.015, 0.08, 0.07))
    table, pedestal_top = known_plane(0.0, (0.5, -0.5), (1.5, 0.5)), known_plane(0.07, (0.95, -0.1), (1.05, 0.1))

    def hidden(boxes, support):              # the book is box 0: its own pixels are its mask
        obs = S.render(K, T, boxes)
        mask = obs.segmentation == 0
        assert mask.sum() > 100
        return foot_hidden(mask, obs.depth_m, K, T, support)
    assert not hidden([book], table)
    assert hidden([book, wall], table)
    # on a pedestal, the pedestal's top in front of its foot is its support and hides nothing
    raised, pedestal = _synth_box((1.0, 0.0, 0.16), (0.017, 0.12, 0.18)), _synth_box((1.0, 0.0, 0.035), (0.1, 0.2, 0.07))
    assert not hidden([raised, pedestal], pedestal_top)


def test_a_hidden_foot_leaves_the_height_of_a_box_standing_on_its_support_measured_in_full():
    """objects-75-00012: a white mug behind a ceramic jar, its foot hidden by the jar, measured
    10.0 x 8.4 x 10.8 cm with its box reaching down to the table (object_box extends it there):
    its height was taken for a lower bound, and a small book leaning 20 degrees (17.4 cm high)
    fit it about as well as its own entry, which left it unnamed. A hidden foot cuts the height
    of a box only when the box does not reach its support (a book in a holder whose wall hides
    more than the support gap, pick-18-00015)."""
    from spatial_manip.geometry import synthetic as S
    from spatial_manip.camera_model import CameraIntrinsics
    from spatial_manip.perception.base import lower_bound_sides
    from spatial_manip.perception.planes import known_plane

    T = S.look_at(np.array([0.0, 0.0, 0.6]), np.array([1.0, 0.0, 0.05]))
    K = CameraIntrinsics.from_fovy(160, 120, 30.0)

    mug, jar = _synth_box((1.0, 0.0, 0.09), (0.017, 0.12, 0.18)), _synth_box((0.975, 0.0, 0.02), (0.015, 0.08, 0.04))
    table = known_plane(0.0, (0.5, -0.5), (1.5, 0.5))
    obs = S.render(K, T, [mug, jar])
    mask = obs.segmentation == 0
    standing = _box((0.017, 0.12, 0.18), "yaw", center=(1.0, 0.0, 0.09))      # reaches the table
    raised = _box((0.017, 0.12, 0.14), "yaw", center=(1.0, 0.0, 0.11))        # its own lowest point, 4 cm up
    assert lower_bound_sides(raised, mask, K, T, obs.depth_m, table)[2]
    assert lower_bound_sides(standing, mask, K, T, obs.depth_m, table) == [True, False, False]


def test_the_table_in_front_of_a_foot_read_through_l515_noise_hides_nothing():
    """pick-51-00001 under realistic sensing: at 1.6 m the table just in front of the armento
    rider's foot read 0.4-2 cm above its plane, which a fixed centimetre took for a wall hiding
    the foot; every side became a lower bound and a brown book fitted as well as the rider (its
    name refused, TARGET_NOT_FOUND). The tolerance is 3 sigma of the sensor's range noise at the
    foot's range: a table in front hides nothing on noisy frames, a wall in front still does."""
    from spatial_manip.geometry import synthetic as S
    from spatial_manip.camera_model import CameraIntrinsics
    from scipy.spatial.transform import Rotation

    from spatial_manip.geometry.noise import L515Noise
    from spatial_manip.transforms import make_transform
    from spatial_manip.perception.base import foot_hidden
    from spatial_manip.perception.planes import known_plane

    T = S.look_at(np.array([0.0, 0.0, 0.6]), np.array([1.55, 0.0, 0.05]))
    K = CameraIntrinsics.from_fovy(320, 240, 30.0)

    rider, wall = _synth_box((1.55, 0.0, 0.12), (0.07, 0.24, 0.24)), _synth_box((1.5, 0.0, 0.035), (0.015, 0.2, 0.07))
    table = known_plane(0.0, (0.5, -0.8), (2.5, 0.8))

    # the calibration off by 0.3 degrees of pitch (the harsh profile's; the realistic case also
    # had the plane fit's own bias), which lifts the far table 8 mm off the support plane
    calibrated = T @ make_transform(Rotation.from_euler("x", 0.3, degrees=True).as_matrix(), np.zeros(3))

    def hidden(boxes, seed):
        obs = S.render(K, T, boxes)
        mask = obs.segmentation == 0
        depth = L515Noise().apply(obs.depth_m, np.random.default_rng(seed))
        return foot_hidden(mask & (depth > 0), depth, K, calibrated, table)
    assert [hidden([rider], seed) for seed in range(6)] == [False] * 6
    assert all(hidden([rider, wall], seed) for seed in range(3))


def test_a_book_shaped_piece_beyond_the_work_surface_is_not_a_book():
    """place-18-00003: a marble bust on the floor beside the shelf, seen in part at the image's
    edge, measured 18 x 14 x 13 cm: it matched a listed book (cost 0.14) better than the bust
    (0.67), so "a slot less than 1.5 m from the marble bust" found no bust. Books lie on the
    work surface, as the workspace's catalogue now says of each."""
    from spatial_manip.perception.base import Detection, FixturePart, SegmentationHints
    from spatial_manip.perception.labelling import assign_labels
    from spatial_manip.scene import Scene, SceneObject, Viewpoint
    shelf = SceneObject("shelf", "shelf", "shelf", [0.975, 0.0, 0.05], [0.45, 1.7, 1.9], np.eye(3))
    book = SceneObject("book_9", "book", "book", [0.9, 0.0, -0.69], [0.232, 0.039, 0.269], np.eye(3),
                       extra={"rgb": [120, 120, 118]})
    bust = SceneObject("distant_1", "marble bust", "reference", [1.17, -1.73, -0.64], [0.52, 0.52, 0.53], np.eye(3),
                       extra={"rgb": [235, 235, 230], "placement": "distant"})
    hints = SegmentationHints.from_scene(Scene(Viewpoint([-1.4, 0, 0.3], [1, 0, 0]), Viewpoint([0, 0, 0], [1, 0, 0]),
                                               [shelf, book, bust]))
    assert [e.placement for e in hints.expected] == ["near", "distant"]
    at_edge = np.zeros((48, 64), bool)
    at_edge[30:40, 58:] = True

    def piece():
        return Detection("", "object", "object", at_edge, 0.5, _box((0.185, 0.136, 0.133), "yaw", center=(1.27, -1.44, -0.83)),
                         (118, 118, 115), extra={"lower_bound_sides": [True, True, False]})
    seen = [piece()]
    assign_labels(seen, hints.expected, work_areas=hints.work_areas)
    # a 0.67 fit is too weak to name (labelling.SURE_COST): left unnamed, the bust its candidate
    # for the words ("a slot less than 1.5 m from the marble bust": labelling.name_from_words)
    assert seen[0].label == "object" and seen[0].extra["candidates"][0]["label"] == "marble bust"
    unlisted = [piece()]
    assign_labels(unlisted, [], work_areas=hints.work_areas)
    assert unlisted[0].label == "object"                     # book-shaped, but off the shelf
    assert isinstance(hints.work_areas[0], FixturePart)


def test_two_pieces_that_both_match_the_one_teddy_bear_best_are_joined():
    """pick-18-00015: a teddy bear cut into its body (cost 0.34 as the bear) and its head and
    foot (0.25); their union costs 0.33, no better than the head alone, so they stayed apart and
    the body, book-shaped, was called a book. Two pieces cannot both be the one bear."""
    from spatial_manip.perception.base import Detection, ExpectedObject
    from spatial_manip.perception.classical import ClassicalSegmenter
    mask = np.zeros((48, 64), bool)
    mask[10:20, 10:20] = True
    bear = ExpectedObject("teddy bear", "reference", size_m=(0.2, 0.23, 0.25), colour=(153, 102, 51), id="near_2")
    books = [ExpectedObject("book", "book", size_m=(0.119, 0.017, 0.183), colour=c, id=f"book_{k}")
             for k, c in ((1, "red"), (2, "blue"))]
    boxes = {"body": ((0.137, 0.028, 0.199), (0.57, 0.54, 0.1), (46, 31, 15)),
             "head": ((0.132, 0.083, 0.163), (0.64, 0.5, 0.16), (129, 86, 43)),
             "both": ((0.157, 0.114, 0.237), (0.62, 0.52, 0.12), (129, 86, 43))}

    def detection(name, lower_bounds):
        size, centre, rgb = boxes[name]
        return Detection("", "object", "object", mask, 0.5, _box(size, "yaw", center=centre), rgb,
                         extra={"lower_bound_sides": lower_bounds})
    clusters = [np.arange(0, 50), np.arange(50, 90)]
    centres = np.tile([0.61, 0.52, 0.11], (90, 1))         # inside the union's box (classical._box_holds)
    centres[50:] += [0.0, 0.0, 0.02]                         # 2 cm apart: neighbours
    dets = [detection("body", [True] * 3), detection("head", [True] * 3)]
    seg = ClassicalSegmenter()
    merged = seg._merge_pieces(clusters, dets, centres, lambda members: detection("both", [False, True, True]),
                               [bear, *books])
    assert len(merged) == 1 and merged[0].box.size[2] == pytest.approx(0.237)
    # two books side by side each match their own entry: they stay two
    pair = [Detection("", "object", "object", mask, 0.5, _box((0.119, 0.017, 0.183), "yaw"), (200, 30, 30)),
            Detection("", "object", "object", mask, 0.5, _box((0.119, 0.017, 0.183), "yaw"), (30, 30, 200))]
    kept = seg._merge_pieces(clusters, pair, centres, lambda members: detection("both", [False] * 3), [bear, *books])
    assert len(kept) == 2
    # nor two books of one size the catalogue gives no colour: each ties between the two entries
    plain = [ExpectedObject("book", "book", size_m=(0.15, 0.02, 0.22), id=f"book_{k}") for k in (1, 2)]
    twins = [Detection("", "object", "object", mask, 0.5, _box((0.15, 0.02, 0.22), "yaw"), (90, 90, 90)) for _ in (1, 2)]
    stacked = Detection("", "object", "object", mask, 0.5, _box((0.15, 0.04, 0.22), "yaw"), (90, 90, 90))
    assert len(seg._merge_pieces(clusters, twins, centres, lambda members: stacked, plain)) == 2


def test_a_union_whose_box_leaves_out_one_piece_is_no_join():
    """pick-84-00005: a red book flat on its pedestal and a brown book on the next one, joined by a
    sliver of an edge; the union's box, fitted to the brown book alone, would have swallowed the
    red one. Both enrolled books match their union's box best (it is a book's), yet it holds only
    one piece: they stay two."""
    from spatial_manip.perception.base import Detection, ExpectedObject
    from spatial_manip.perception.classical import ClassicalSegmenter
    mask = np.zeros((48, 64), bool)
    mask[10:20, 10:20] = True
    book = ExpectedObject("book", "book", size_m=(0.23, 0.156, 0.023), colour="brown", id="book_brown")
    brown = _box((0.23, 0.156, 0.023), "yaw", center=(0.43, 0.11, 0.074))
    red = _box((0.21, 0.136, 0.021), "yaw", center=(0.59, 0.315, 0.073))
    dets = [Detection("", "object", "object", mask, 0.5, b, (150, 90, 40), colour="brown") for b in (brown, red)]
    centres = np.vstack([np.tile([0.43, 0.11, 0.08], (50, 1)), np.tile([0.56, 0.23, 0.08], (40, 1))])
    centres[49] = [0.54, 0.20, 0.08]                   # the brown book's corner, 3.6 cm from the red book
    clusters = [np.arange(0, 50), np.arange(50, 90)]
    union = Detection("", "object", "object", mask, 0.5, brown, (150, 90, 40), colour="brown")
    kept = ClassicalSegmenter()._merge_pieces(clusters, dets, centres, lambda members: union, [book])
    assert len(kept) == 2
    centres[50:] = [0.53, 0.19, 0.08]                  # the second piece inside the box: one object
    assert len(ClassicalSegmenter()._merge_pieces(clusters, dets, centres, lambda members: union, [book])) == 1


def test_the_held_object_is_not_a_segment_to_match():
    """place-23-00009: a floor lamp's sliver at the image's edge (9 x 1 x 12 cm) matched the held
    book's catalogue entry (cost 0.15) better than the lamp's (0.73), and 'more than 70 cm from
    the floor lamp' found no lamp. The held book is known from the grasp; the hints leave it out."""
    from spatial_manip.perception.base import SegmentationHints
    from spatial_manip.scene import Scene, SceneObject, Viewpoint
    held = SceneObject("book_9", "book", "book", [0.5, 0.0, 0.3], [0.1, 0.02, 0.15], np.eye(3), held=True)
    lamp = SceneObject("distant_1", "floor lamp", "reference", [1.1, -1.5, -0.6], [0.48, 0.48, 0.59], np.eye(3),
                       extra={"placement": "distant"})
    hints = SegmentationHints.from_scene(Scene(Viewpoint([-1.4, 0, 0.3], [1, 0, 0]), Viewpoint([0, 0, 0], [1, 0, 0]),
                                               [held, lamp]))
    assert [e.id for e in hints.expected] == ["distant_1"]
    assert hints.objects["book_9"] == ("book", "book")          # still named, for the simulator's segments


def test_a_face_turned_from_the_light_is_no_other_object():
    """pick-85-00001: the newton's cradle (enrolled 174/174/185, head-on) read 83/95/103 at the
    image's edge, about the pillar bookend's 93/93/104: between colours without a hue, brightness
    the view may explain counts half; beyond that range, or for a hue, in full."""
    cradle, bookend, seen = (174, 174, 185), (93, 93, 104), (83, 95, 103)
    from spatial_manip.perception.labelling import NAME_MARGIN
    assert colour_distance(cradle, seen) - colour_distance(bookend, seen) > NAME_MARGIN      # plain: the bookend
    assert seen_colour_distance(cradle, seen) - seen_colour_distance(bookend, seen) < NAME_MARGIN
    half = seen_colour_distance(cradle, (87, 87, 92))                                # half as bright, same colour
    assert half < colour_distance(cradle, (87, 87, 92)) * 0.6
    assert seen_colour_distance(cradle, (30, 30, 32)) > 2 * half                     # far darker: beyond the range
    assert seen_colour_distance(cradle, (170, 60, 60)) > 0.3                         # another hue at any brightness
    assert seen_colour_distance("white", seen) == colour_distance("white", seen)     # a name: as colour_distance
    copper, shrub_pot = (180, 114, 52), (118, 69, 48)                                # a hue: brightness counts in full
    assert seen_colour_distance(copper, shrub_pot) == colour_distance(copper, shrub_pot)
