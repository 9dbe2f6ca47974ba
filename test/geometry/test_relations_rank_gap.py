"""How clearly two perceived boxes' ranks are told apart (relations.rank_gap_error_m): from the
uncertainty of the difference compared (two centres, or two distances to one reference), not
from one pixel's range noise (books pick 103-105: ranks refused at "the sensor's 1.7 cm there")."""
import math

import numpy as np
import pytest

from spatial_manip.geometry import relations as rel
from spatial_manip.geometry.boxes import BoxFitConfig
from spatial_manip.geometry.noise import L515Noise
from spatial_manip.reasoning.planner import ProgramPlanner
from spatial_manip.reasoning.program import PERCEIVED_FACE_ERROR_M
from spatial_manip.scene import Scene, SceneObject, Viewpoint


def test_a_face_is_a_quantile_whose_spread_shrinks_with_its_points():
    """QUANTILE_SPREAD is the standard error of a sample quantile at the box fit's trim: the trimmed
    low end of n points with range noise sigma spreads QUANTILE_SPREAD sigma / sqrt(n) over draws."""
    rng = np.random.default_rng(7)
    n, sigma, trim = 700, 0.005, BoxFitConfig().trim
    faces = [np.quantile(rng.normal(0.0, sigma, n), trim) for _ in range(2000)]
    assert np.std(faces) == pytest.approx(rel.QUANTILE_SPREAD * sigma / math.sqrt(n), rel=0.15)


def _book(id_, center, px=700):
    return SceneObject(id_, "book", "book", center, [0.16, 0.03, 0.22], extra={"mask_area_px": px} if px else {})


CAMERA = np.array([-0.74, -0.49, 0.80])      # books pick 104's camera, 1.5-1.7 m from the books


def test_a_face_of_hundreds_of_points_is_off_by_misregistration_not_one_pixels_noise():
    far = _book("a", [0.45, 0.14, 0.07])
    reach = float(np.linalg.norm(far.center - CAMERA))
    one_pixel = rel.face_error_m(far, CAMERA, PERCEIVED_FACE_ERROR_M)
    assert one_pixel == pytest.approx(3 * L515Noise().sigma_m(reach)) and one_pixel > 0.014
    assert rel.face_fit_error_m(far, CAMERA, PERCEIVED_FACE_ERROR_M) == PERCEIVED_FACE_ERROR_M
    # a sliver of 20 px keeps more of its points' noise; a box whose pixels are not known, one pixel's
    assert rel.face_fit_error_m(_book("s", far.center, 20), CAMERA, 0.001) > 0.003
    assert rel.face_fit_error_m(_book("u", far.center, None), CAMERA, PERCEIVED_FACE_ERROR_M) == one_pixel
    assert rel.face_fit_error_m(far, CAMERA, 0.0) == 0.0           # an exact scene


def test_what_a_difference_may_be_off_follows_what_is_compared():
    """Centres: sqrt((e_a^2 + e_b^2) / 2). Distances to one reference: both faces and the
    reference's faces the two gaps end on (one face cancels, opposite faces add in quadrature)."""
    e = {"a": 0.01, "b": 0.01, "r": 0.01}
    err = lambda o: e.get(getattr(o, "id", None), 0.0)               # noqa: E731
    ref = SceneObject("r", "teddy bear", "reference", [0.6, 0.0, 0.1], [0.2, 0.1, 0.2])
    a, b = _book("a", [0.6, 0.3, 0.1]), _book("b", [0.6, 0.5, 0.1])
    assert rel.rank_gap_error_m(a, b, err) == pytest.approx(0.01)
    assert rel.rank_gap_error_m(a, b, err, ref) == pytest.approx(math.sqrt(2) * 0.01)
    opposite = _book("b", [0.6, -0.5, 0.1])
    assert rel.rank_gap_error_m(a, opposite, err, ref) == pytest.approx(math.sqrt(4) * 0.01, rel=1e-3)
    you = Viewpoint(CAMERA, [0.7, 0.4, -0.6])                        # a point: no face of its own
    assert rel.rank_gap_error_m(a, opposite, err, you) == pytest.approx(math.sqrt(2) * 0.01)


def test_two_gaps_ending_on_one_shared_face_and_two_side_faces():
    """craft7's glue and paint, both in front of the sewing machine's front face, one past its left
    side and one past its right: the front face moves both gaps by their shares of it (0.71 and
    0.52 of a centimetre, nearly cancelling) and the sides each their own share; the direction
    between centres (116 degrees apart) would count the machine's error 1.7 times, not 1.1."""
    err = lambda o: 0.01                                              # noqa: E731
    machine = SceneObject("m", "sewing machine", "machine", [0.95, 0.35, 0.89], [0.18, 0.38, 0.28])
    glue = SceneObject("g", "glue", "glue", [0.75, 0.05, 0.805], [0.03, 0.03, 0.11])
    paint = SceneObject("p", "paint", "paint", [0.75, 0.70, 0.82], [0.06, 0.06, 0.14])
    shares = np.array([[0.095, 0.095], [0.08, 0.13]])
    shares /= np.linalg.norm(shares, axis=1, keepdims=True)
    pulled = math.hypot(shares[0, 0] - shares[1, 0], math.hypot(shares[0, 1], shares[1, 1]))
    assert rel.rank_gap_error_m(glue, paint, err, machine) == pytest.approx(0.01 * math.sqrt(2 + pulled ** 2), rel=1e-3)


def _scene(*books) -> Scene:
    forward = np.array([0.72, 0.37, -0.58])
    return Scene(Viewpoint(CAMERA, forward), Viewpoint([0, 0, 0], [1, 0, 0]), objects=list(books))


def test_the_second_leftmost_of_books_whose_centres_are_13_mm_apart_at_1_6_m():
    """Three books 1.5-1.7 m from the camera, the second 1.3 cm right of the first (30 cm behind
    it): one pixel's 3 sigma there (1.6 cm) refused it; two centres of 700 px each are told apart
    by 1 cm (misregistration's floor). A box whose pixels are unknown keeps one pixel's margin."""
    right, ahead = np.array([-0.46, 0.89, 0.0]), np.array([0.89, 0.46, 0.0])
    origin = np.array([0.55, 0.0, 0.07])
    books = [_book(i, origin + right * s + ahead * d) for i, s, d in (("b1", -0.2, -0.15), ("b2", -0.187, 0.15),
                                                                     ("b3", 0.15, 0.0))]
    plan = ProgramPlanner().plan(_scene(*books), "take the second leftmost book")
    assert plan.ok and plan.targets == ["b2"], plan.to_json()
    unknown = [_book(b.id, b.center, None) for b in books]
    plan = ProgramPlanner().plan(_scene(*unknown), "take the second leftmost book")
    assert not plan.ok and plan.error["code"] == "AMBIGUOUS" and "b1" in plan.error["message"], plan.to_json()
