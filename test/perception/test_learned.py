"""The learned segmenter's code path, run for real: OWLv2 and SAM built from their transformers
configs with small random weights (no download), saved to disk and loaded by the backend as a
GPU cell loads the real ones; and the detector asked for what the instruction and library name."""
import numpy as np
import pytest

from spatial_manip.perception import SegmentationHints, make_segmenter
from spatial_manip.perception.base import ExpectedObject
from spatial_manip.perception.learned import detector_queries, instruction_phrases


@pytest.mark.parametrize("instruction, phrases", [
    ("put the red alarm clock left of the teddy bear's box", ("alarm clock", "teddy bear", "box")),
    ("place the book 10 cm to the right of the white mug", ("book", "mug")),
    ("place the jar between the plant and the floor lamp", ("jar", "plant", "floor lamp")),
    ("take the second leftmost book lying flat", ("book",)),
    ("put the mug in the top row", ("mug",)),
    ("pick a piece of fruit", ("fruit",)),
    ("pick up the red one", ()),
])
def test_instruction_phrases_are_the_objects_named(instruction, phrases):
    assert instruction_phrases(instruction) == phrases


def test_detector_is_asked_for_the_instructions_words_then_the_library():
    hints = SegmentationHints(expected=(ExpectedObject("mug"), ExpectedObject("teddy bear"), ExpectedObject("jar")))
    assert detector_queries(hints.with_instruction("put the stapler left of the teddy bear")) == \
        ("stapler", "teddy bear", "mug", "jar")
    assert detector_queries(SegmentationHints()) == ()


@pytest.fixture(scope="module")
def tiny_weights(tmp_path_factory):
    """OWLv2 and SAM folders as `huggingface-cli download` leaves them, with random weights."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    root = tmp_path_factory.mktemp("models")
    letters = "abcdefghijklmnopqrstuvwxyz0123456789"
    vocab = {c: i for i, c in enumerate(letters)} | {c + "</w>": i + len(letters) for i, c in enumerate(letters)}
    vocab |= {"<|startoftext|>": len(vocab), "<|endoftext|>": len(vocab) + 1}
    torch.manual_seed(0)
    owl = transformers.Owlv2Config(
        text_config=dict(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, max_position_embeddings=16),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                           image_size=64, patch_size=16), projection_dim=32)
    transformers.Owlv2ForObjectDetection(owl).save_pretrained(root / "owlv2")
    transformers.Owlv2Processor(image_processor=transformers.Owlv2ImageProcessor(size={"height": 64, "width": 64}),
                                tokenizer=transformers.CLIPTokenizer(vocab=vocab, merges=[], model_max_length=16)
                                ).save_pretrained(root / "owlv2")
    sam = transformers.SamConfig(
        vision_config=dict(hidden_size=32, output_channels=16, num_hidden_layers=1, num_attention_heads=2, image_size=128,
                           patch_size=16, mlp_dim=64, window_size=4, global_attn_indexes=[0], num_pos_feats=8),
        prompt_encoder_config=dict(hidden_size=16, image_size=128, patch_size=16, mask_input_channels=4),
        mask_decoder_config=dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, mlp_dim=32,
                                 iou_head_hidden_dim=16))
    transformers.SamModel(sam).save_pretrained(root / "sam")
    transformers.SamProcessor(image_processor=transformers.SamImageProcessor(
        size={"longest_edge": 128}, pad_size={"height": 128, "width": 128})).save_pretrained(root / "sam")
    return root


def test_learned_segmenter_loads_local_weights_and_segments_what_the_words_name(tiny_weights):
    from spatial_manip.perception.synthetic import default_objects, render_tabletop

    obs, scene = render_tabletop(default_objects())
    seg = make_segmenter("learned", detector_path=str(tiny_weights / "owlv2"), sam_path=str(tiny_weights / "sam"),
                         score_threshold=0.0, min_pixels=1)     # random weights: keep every box they give
    hints = SegmentationHints.from_scene(scene).with_instruction("put the stapler to the left of the red book")
    boxes, scores, labels = seg._detect(obs.rgb, detector_queries(hints))
    assert len(boxes) > 0 and np.all(boxes[:, 2:] >= boxes[:, :2]) and np.all(boxes[:, 2:] <= [639, 479])
    dets = seg.segment(obs, hints=hints)
    assert seg.last_queries[:2] == ("stapler", "book") and set(labels) <= set(seg.last_queries)
    assert dets and all(d.label in seg.last_queries and d.mask.shape == obs.depth_m.shape and np.all(d.box.size > 0)
               for d in dets)
