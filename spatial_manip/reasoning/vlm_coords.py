"""Boxes and points as vision-language models write them -> our pixel convention.

Our convention: pixels of the *original* observation image, x right, y down; a box is
[x0, y0, x1, y1], a point [x, y]. What the model families actually emit:

    pixel       our convention (a harness, or a model told the image size)
    qwen2.5-vl  absolute pixels of the image *as the model saw it*: the image we sent, resized by
                Qwen2.5-VL's smart_resize (sides multiples of 28, area within min/max pixels)
    qwen3-vl    [x0, y0, x1, y1] / [x, y] normalised to 0-1000
    gemini      [ymin, xmin, ymax, xmax] / [y, x] normalised to 0-1000 (y first)
    molmo       points [x, y] in percent (0-100); boxes, which Molmo does not emit, read alike

    adapter = CoordAdapter("gemini", width=1280, height=720)
    adapter.box([100, 100, 800, 500])       # -> [128.0, 72.0, 640.0, 576.0]

Every value is checked: wrong arity, NaN/inf, inverted or empty boxes and coordinates outside the
model's range raise CoordinateError (INVALID_GOAL) naming the convention. Values past the edge by at
most TOLERANCE of the axis are clamped (models round); anything further is an error, never clamped.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from spatial_manip.errors import ErrorCode, SpatialManipError

CONVENTIONS = ("pixel", "qwen2.5-vl", "qwen3-vl", "gemini", "molmo")

# Qwen2.5-VL's resize rule (qwen-vl-utils, and the defaults of its HF image processor).
QWEN_FACTOR = 28
QWEN_MIN_PIXELS = 4 * 28 * 28
QWEN_MAX_PIXELS = 16384 * 28 * 28
QWEN_MAX_RATIO = 200

# Past the edge by this fraction of the axis is rounding (clamped); beyond it, a wrong answer.
TOLERANCE = 0.01

# Full scale of each convention's axes, (x, y); None: the model's own input size (pixels).
_SCALE = {"pixel": None, "qwen2.5-vl": None, "qwen3-vl": (1000.0, 1000.0), "gemini": (1000.0, 1000.0),
          "molmo": (100.0, 100.0)}
_DESCRIBE = {
    "pixel": ("[x0, y0, x1, y1] pixels of the {w}x{h} image (x right, y down)",
              "[x, y] pixel of the {w}x{h} image (x right, y down)"),
    "qwen2.5-vl": ("[x0, y0, x1, y1] absolute pixels of the image you see ({mw}x{mh})",
                   "[x, y] absolute pixel of the image you see ({mw}x{mh})"),
    "qwen3-vl": ("[x0, y0, x1, y1] normalised to 0-1000", "[x, y] normalised to 0-1000"),
    "gemini": ("[ymin, xmin, ymax, xmax] normalised to 0-1000", "[y, x] normalised to 0-1000"),
    "molmo": ("[x0, y0, x1, y1] in percent of the image (0-100)", "[x, y] in percent of the image (0-100)"),
}


class CoordinateError(SpatialManipError):
    """A box or point from the model that cannot be read in its configured convention."""

    code = ErrorCode.INVALID_GOAL


def check_convention(name) -> str:
    """The convention name, or ValueError listing the known ones (a config error)."""
    if name not in CONVENTIONS:
        raise ValueError(f"coords must be one of {', '.join(CONVENTIONS)}, got {name!r}")
    return name


def _round_to(x: float, f: int) -> int:
    return round(x / f) * f              # Python's round, as the reference rule uses


def qwen25_resize(height: int, width: int, *, factor: int = QWEN_FACTOR, min_pixels: int = QWEN_MIN_PIXELS,
                  max_pixels: int = QWEN_MAX_PIXELS) -> tuple[int, int]:
    """(height, width) Qwen2.5-VL resizes an image to: each side the nearest multiple of `factor`
    (at least one factor), then, if the area leaves [min_pixels, max_pixels], both sides scaled by
    one factor to bring it back (floored when shrinking, ceiled when growing) to multiples."""
    if height < 1 or width < 1:
        raise ValueError(f"an image is at least 1x1, got {width}x{height}")
    if max(height, width) / min(height, width) > QWEN_MAX_RATIO:
        raise ValueError(f"Qwen2.5-VL refuses aspect ratios above {QWEN_MAX_RATIO}, got {width}x{height}")
    h = max(factor, _round_to(height, factor))
    w = max(factor, _round_to(width, factor))
    if h * w > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h = max(factor, math.floor(height / beta / factor) * factor)
        w = max(factor, math.floor(width / beta / factor) * factor)
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h = math.ceil(height * beta / factor) * factor
        w = math.ceil(width * beta / factor) * factor
    return h, w


def downscaled_size(width: int, height: int, max_side_px: int | None) -> tuple[int, int]:
    """(width, height) of an image whose longer side is brought down to max_side_px (never up):
    the size of the image the backends send (mssr_loop.image_data_url uses this)."""
    if not max_side_px or max(width, height) <= max_side_px:
        return width, height
    s = max_side_px / max(width, height)
    return max(1, round(width * s)), max(1, round(height * s))


@dataclass(frozen=True)
class CoordSettings:
    """A backend's `coords` config, checked when the planner is built: the convention, and for
    Qwen2.5-VL the min/max pixels its server resizes with (the HF processor's defaults unless the
    server was started with others)."""

    convention: str = "pixel"
    min_pixels: int = QWEN_MIN_PIXELS
    max_pixels: int = QWEN_MAX_PIXELS

    def __post_init__(self):
        check_convention(self.convention)
        if not 0 < int(self.min_pixels) <= int(self.max_pixels):
            raise ValueError(f"coords min/max pixels must satisfy 0 < min <= max, got "
                             f"{self.min_pixels}, {self.max_pixels}")

    def adapter(self, image_shape, max_side_px: int | None = None) -> "CoordAdapter":
        """The adapter for an image of `image_shape` (rows, cols, ...) sent downscaled to max_side_px."""
        h, w = int(image_shape[0]), int(image_shape[1])
        return CoordAdapter(self.convention, w, h, sent_size=downscaled_size(w, h, max_side_px),
                            min_pixels=int(self.min_pixels), max_pixels=int(self.max_pixels))


@dataclass(frozen=True)
class CoordAdapter:
    """One model family's boxes and points -> pixels of a width x height image.

    sent_size: (width, height) of the image the model was sent, when it was downscaled first;
    Qwen2.5-VL's coordinates live in smart_resize(sent_size), mapped back by plain scaling."""

    convention: str
    width: int
    height: int
    sent_size: tuple[int, int] | None = None
    min_pixels: int = QWEN_MIN_PIXELS
    max_pixels: int = QWEN_MAX_PIXELS
    scale: tuple[float, float] = field(init=False)       # model units per axis (x, y), full range

    def __post_init__(self):
        check_convention(self.convention)
        if int(self.width) < 1 or int(self.height) < 1:
            raise ValueError(f"the image must be at least 1x1, got {self.width}x{self.height}")
        object.__setattr__(self, "scale", self._model_scale())

    def _model_scale(self) -> tuple[float, float]:
        fixed = _SCALE[self.convention]
        if fixed is not None:
            return fixed
        if self.convention == "pixel":
            return float(self.width), float(self.height)
        sw, sh = self.sent_size or (self.width, self.height)
        mh, mw = qwen25_resize(int(sh), int(sw), min_pixels=self.min_pixels, max_pixels=self.max_pixels)
        return float(mw), float(mh)

    # --- model -> pixels ---------------------------------------------------------------------
    def box(self, raw) -> list[float]:
        """[x0, y0, x1, y1] pixels of the original image from the model's box."""
        v = self._numbers(raw, 4, "box")
        if self.convention == "gemini":
            v = [v[1], v[0], v[3], v[2]]              # [ymin, xmin, ymax, xmax] -> x first
        x0, x1 = (self._axis(c, 0, raw) for c in (v[0], v[2]))
        y0, y1 = (self._axis(c, 1, raw) for c in (v[1], v[3]))
        if x1 <= x0 or y1 <= y0:
            raise CoordinateError(f"the box {list(raw)!r} read as {self.convention} ({self.describe_box()}) is "
                                  f"inverted or empty: x {x0:.1f}..{x1:.1f}, y {y0:.1f}..{y1:.1f} pixels")
        return [x0, y0, x1, y1]

    def point(self, raw) -> list[float]:
        """[x, y] pixel of the original image from the model's point; kept inside the pixel grid."""
        v = self._numbers(raw, 2, "point")
        if self.convention == "gemini":
            v = [v[1], v[0]]                           # [y, x] -> x first
        x, y = self._axis(v[0], 0, raw), self._axis(v[1], 1, raw)
        # the far edge (x == width) is on the image's border, not a pixel: the last pixel it is
        return [min(x, self.width - 1.0), min(y, self.height - 1.0)]

    def _numbers(self, raw, n: int, what: str) -> list[float]:
        try:
            v = [float(c) for c in raw]
        except (TypeError, ValueError):
            raise CoordinateError(f"a {what} is {n} numbers ({self._describe(what)}), got {raw!r}") from None
        if len(v) != n:
            raise CoordinateError(f"a {what} is {n} numbers ({self._describe(what)}), got {len(v)}: {raw!r}")
        if not all(math.isfinite(c) for c in v):
            raise CoordinateError(f"the {what} {raw!r} holds NaN or infinity")
        return v

    def _axis(self, c: float, axis: int, raw) -> float:
        """One model coordinate -> pixels; slightly outside is clamped, further is an error."""
        full, size = self.scale[axis], (self.width, self.height)[axis]
        tol = TOLERANCE * full
        if not -tol <= c <= full + tol:
            name = "xy"[axis]
            raise CoordinateError(f"{raw!r}: {name}={c:g} is outside {self.convention}'s range 0-{full:g} "
                                  f"({self._describe('box' if len(raw) == 4 else 'point')})")
        return min(max(c, 0.0), full) * size / full

    # --- pixels -> model (tool results the model may pass back) --------------------------------
    def to_model_box(self, box) -> list[float]:
        x0, y0, x1, y1 = (float(c) for c in box)
        out = [self._to_model(x0, 0), self._to_model(y0, 1), self._to_model(x1, 0), self._to_model(y1, 1)]
        return [out[1], out[0], out[3], out[2]] if self.convention == "gemini" else out

    def to_model_point(self, point) -> list[float]:
        x, y = (float(c) for c in point)
        out = [self._to_model(x, 0), self._to_model(y, 1)]
        return out[::-1] if self.convention == "gemini" else out

    def _to_model(self, px: float, axis: int) -> float:
        return round(px * self.scale[axis] / (self.width, self.height)[axis], 2)

    # --- what the model is told ----------------------------------------------------------------
    def describe_box(self) -> str:
        return self._describe("box")

    def describe_point(self) -> str:
        return self._describe("point")

    def _describe(self, what: str) -> str:
        text = _DESCRIBE[self.convention][0 if what == "box" else 1]
        return text.format(w=self.width, h=self.height, mw=int(self.scale[0]), mh=int(self.scale[1]))
