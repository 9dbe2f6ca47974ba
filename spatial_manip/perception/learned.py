"""Learned segmentation: an open-vocabulary detector (OWLv2 or Grounding DINO) finds boxes for
text queries, SAM turns each box into a mask, and the geometry is the same as the classical
backend's (support plane, oriented box from the masked depth).

The detector is asked for what this look needs: the noun phrases of the instruction
(`hints.instruction`: "the teddy bear", "the white mug") and the labels of the object library
(`hints.expected`), in that order; only without either does it fall back to `queries`.

Weights are never downloaded by this code: it loads from local folders only, and raises
`BackendUnavailableError` saying what to download and where when they are missing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from spatial_manip.errors import BackendUnavailableError
from spatial_manip.observation import RGBDObservation
from spatial_manip.perception.attributes import ALIASES, COLOUR_NAMES
from spatial_manip.perception.base import UNREPORTED_CATEGORIES, Detection, SegmentationHints, check_observation
from spatial_manip.perception.box import detection_from_mask
from spatial_manip.perception.cloud import base_cloud
from spatial_manip.perception.labelling import unique_ids
from spatial_manip.perception.planes import fit_horizontal_planes

MODELS_DIR = "~/.cache/spatial_manip/models"
DETECTOR_REPO = "google/owlv2-base-patch16-ensemble"
SAM_REPO = "facebook/sam-vit-base"


@dataclass(kw_only=True)
class LearnedConfig:
    detector_path: str = f"{MODELS_DIR}/owlv2-base-patch16-ensemble"
    sam_path: str = f"{MODELS_DIR}/sam-vit-base"
    queries: tuple = ("book", "jar", "cup", "bottle", "box", "bowl")   # only with no instruction and no library
    score_threshold: float = 0.2
    nms_iou: float = 0.5
    min_pixels: int = 50
    device: str = "cpu"
    seed: int = 0

    def __post_init__(self):
        if not 0.0 <= self.score_threshold <= 1.0 or not 0.0 < self.nms_iou <= 1.0:
            raise ValueError(f"score_threshold must be in [0, 1] and nms_iou in (0, 1], got "
                             f"{self.score_threshold}, {self.nms_iou}")
        self.queries = tuple(self.queries)


def _missing_weights(path: Path) -> str | None:
    if not path.is_dir():
        return "does not exist"
    if not (path / "config.json").is_file():
        return "has no config.json"
    if not any(path.glob("*.safetensors")) and not any(path.glob("*.bin")):
        return "has no *.safetensors or *.bin weights"
    return None


class LearnedSegmenter:
    def __init__(self, **config):
        self.config = LearnedConfig(**config)
        self._check_weights()
        try:
            import torch  # noqa: F401  (imported here only: an optional dependency)
            import transformers
        except ImportError as e:
            raise BackendUnavailableError(
                f"the learned segmenter needs transformers and torch ({e}); install them "
                "(`pip install transformers torch`) or use the 'classical' segmenter") from e
        self._load(transformers)

    def _check_weights(self) -> None:
        problems = []
        for what, path, repo in (("detector", self.config.detector_path, DETECTOR_REPO),
                                 ("SAM", self.config.sam_path, SAM_REPO)):
            p = Path(path).expanduser()
            why = _missing_weights(p)
            if why:
                problems.append(f"the {what} weights folder {p} {why}; on a machine with internet run "
                                f"`huggingface-cli download {repo} --local-dir {p}` and copy the folder here")
        if problems:
            raise BackendUnavailableError(
                "the learned segmenter loads weights from disk only, and they are missing: "
                + "; ".join(problems)
                + ". Set segmenter.learned.detector_path / sam_path to other local folders, "
                  "or use the 'classical' segmenter, which needs no weights.")

    def _load(self, transformers) -> None:
        det_path = str(Path(self.config.detector_path).expanduser())
        sam_path = str(Path(self.config.sam_path).expanduser())
        self._det_processor = transformers.AutoProcessor.from_pretrained(det_path, local_files_only=True)
        self._detector = transformers.AutoModelForZeroShotObjectDetection.from_pretrained(
            det_path, local_files_only=True).to(self.config.device).eval()
        self._sam_processor = transformers.SamProcessor.from_pretrained(sam_path, local_files_only=True)
        self._sam = transformers.SamModel.from_pretrained(sam_path, local_files_only=True).to(self.config.device).eval()

    def segment(self, obs: RGBDObservation, *, hints: SegmentationHints | None = None) -> list[Detection]:
        valid = check_observation(obs)
        hints = hints or SegmentationHints()
        categories = {e.label: e.category for e in hints.expected}
        queries = detector_queries(hints) or self.config.queries
        self.last_queries = queries
        boxes, scores, labels = self._detect(obs.rgb, queries)
        if len(boxes) == 0:
            return []
        masks = self._masks(obs.rgb, boxes)
        rng = np.random.default_rng(self.config.seed)
        planes = fit_horizontal_planes(base_cloud(obs, valid, stride=4)[0], rng)
        detections = []
        for mask, score, label in zip(masks, scores, labels):
            mask = mask & valid
            if np.count_nonzero(mask) < self.config.min_pixels:
                continue
            category = categories.get(label, "book" if "book" in label else "object")
            det = detection_from_mask(obs, mask, planes, id="", label=label, category=category,
                                      score=score, backend="learned")
            if det is not None:
                detections.append(det)
        detections = [d for d in detections if d.category not in UNREPORTED_CATEGORIES]
        unique_ids(detections)
        return detections

    def _detect(self, rgb: np.ndarray, queries: tuple):
        """Boxes (N, 4) xyxy pixels, scores, labels after class-agnostic NMS."""
        import torch

        h, w = rgb.shape[:2]
        kind = getattr(self._detector.config, "model_type", "")
        text = [list(queries)] if kind.startswith("owl") else ". ".join(queries) + "."
        inputs = self._det_processor(text=text, images=rgb, return_tensors="pt").to(self.config.device)
        with torch.no_grad():
            out = self._detector(**inputs)
        if kind.startswith("owl"):
            side = max(h, w)    # OWLv2 pads to a square: boxes come back in the padded frame
            # the image processor's (transformers 4 and 5; the v5 processor no longer has this name)
            res = self._det_processor.image_processor.post_process_object_detection(
                outputs=out, threshold=self.config.score_threshold, target_sizes=[(side, side)])[0]
            labels = [queries[int(i)] for i in res["labels"]]
        else:
            res = self._det_processor.post_process_grounded_object_detection(
                out, inputs.input_ids, threshold=self.config.score_threshold,
                text_threshold=self.config.score_threshold, target_sizes=[(h, w)])[0]
            labels = [str(t) for t in res.get("text_labels", res["labels"])]
        boxes = res["boxes"].cpu().numpy().reshape(-1, 4)
        boxes = np.clip(boxes, 0, [w - 1, h - 1, w - 1, h - 1])
        scores = res["scores"].cpu().numpy().reshape(-1)
        keep = _nms(boxes, scores, self.config.nms_iou)
        return boxes[keep], scores[keep], [labels[i] for i in keep]

    def _masks(self, rgb: np.ndarray, boxes: np.ndarray) -> np.ndarray:
        import torch

        inputs = self._sam_processor(rgb, input_boxes=[boxes.tolist()], return_tensors="pt").to(self.config.device)
        with torch.no_grad():
            out = self._sam(**inputs, multimask_output=False)
        masks = self._sam_processor.image_processor.post_process_masks(
            out.pred_masks.cpu(), inputs["original_sizes"].cpu(), inputs["reshaped_input_sizes"].cpu())[0]
        return masks[:, 0].numpy().astype(bool)


def detector_queries(hints: SegmentationHints) -> tuple[str, ...]:
    """What the detector is asked for: the instruction's noun phrases, then the library's labels."""
    return tuple(dict.fromkeys(instruction_phrases(hints.instruction) + tuple(e.label for e in hints.expected)))


DETERMINERS = {"the", "a", "an", "this", "that", "these", "those", "each", "every", "any", "some", "my", "your",
               "its", "their", "other", "another"}
# Words that end a noun phrase (prepositions, conjunctions, verbs of placing).
PHRASE_ENDS = {"of", "to", "on", "onto", "in", "into", "at", "from", "with", "by", "near", "beside", "behind",
               "between", "under", "over", "above", "below", "next", "and", "or", "then", "so", "that", "which",
               "is", "are", "it", "them", "up", "down", "away", "off", "as", "than", "please", "facing"}
PARTITIVES = {"piece", "pieces", "kind", "sort", "type", "pair", "set", "bunch"}
# Modifiers the detector need not be told (the planner measures them), and heads that name no object.
MODIFIERS = set(COLOUR_NAMES) | set(ALIASES) | {
    "first", "second", "third", "fourth", "fifth", "last", "leftmost", "rightmost", "frontmost", "nearest",
    "closest", "farthest", "furthest", "biggest", "largest", "smallest", "tallest", "shortest", "widest",
    "thinnest", "thickest", "big", "small", "large", "tall", "short", "little", "same", "only", "upright",
    "standing", "lying", "flat", "empty", "emptiest", "fullest", "middle", "top", "bottom", "left", "right",
    "front", "back"}
NO_OBJECT_HEADS = {"left", "right", "front", "back", "side", "sides", "edge", "middle", "centre", "center", "top",
                   "bottom", "corner", "end", "one", "ones", "table", "shelf", "shelves", "slot", "slots", "spot",
                   "place", "row", "column", "cm", "mm", "m", "degrees", "way", "gap", "space", "area", "them",
                   "thing", "things", "object", "objects", "item", "items", "camera", "robot", "view", "me", "you"}


def instruction_phrases(instruction: str) -> tuple[str, ...]:
    """The noun phrases an instruction names objects with, for an open-vocabulary detector:
    "put the red alarm clock left of the teddy bear's box" -> ("alarm clock", "teddy bear", "box").
    A phrase runs from a determiner to the next preposition, conjunction or possessive; colours,
    ranks and sizes are dropped (the planner measures those), and a phrase whose head names a
    place or a part ("the left", "the top row", "the red one") is none."""
    words = re.findall(r"[a-z][a-z-]*|'s|\d+", instruction.lower())
    phrases, current, inside = [], [], False
    for word in words + ["."]:
        if word in DETERMINERS:
            _close(current, phrases)
            current, inside = [], True
        elif not inside:
            continue
        elif word == "of" and current and current[-1] in PARTITIVES:    # "a piece of fruit" names fruit
            current = []
        elif word in PHRASE_ENDS or word == "'s" or word.isdigit() or word == ".":
            _close(current, phrases)
            current, inside = [], word == "'s"     # "the bear's box": the box starts a phrase too
        else:
            current.append(word)
    return tuple(dict.fromkeys(phrases))


def _close(words: list[str], phrases: list[str]) -> None:
    """A phrase's words without its modifiers, if its head (the last word that is no modifier:
    "the alarm clock left of" ends at "clock") names an object."""
    while words and words[-1] in MODIFIERS:
        words = words[:-1]
    kept = [w for w in words if w not in MODIFIERS]
    if kept and kept[-1] not in NO_OBJECT_HEADS:
        phrases.append(" ".join(kept))


def _nms(boxes: np.ndarray, scores: np.ndarray, iou: float) -> list[int]:
    order = list(np.argsort(-scores))
    keep = []
    while order:
        i = order.pop(0)
        keep.append(int(i))
        if not order:
            break
        rest = np.array(order)
        x1 = np.maximum(boxes[i, 0], boxes[rest, 0])
        y1 = np.maximum(boxes[i, 1], boxes[rest, 1])
        x2 = np.minimum(boxes[i, 2], boxes[rest, 2])
        y2 = np.minimum(boxes[i, 3], boxes[rest, 3])
        inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
        area = lambda b: (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])  # noqa: E731
        ious = inter / np.maximum(area(boxes[i]) + area(boxes[rest]) - inter, 1e-9)
        order = [j for j, o in zip(order, ious) if o < iou]
    return keep
