"""The `transformers` planner backend's real code path (chat template with tools -> processor with
the image -> generate -> decode -> Hermes tool-call parsing) on a tiny randomly initialised
Qwen2.5-VL built here from a config, saved and reloaded from disk. Random weights never call a
tool by themselves, so a logits processor forces each reply; the loop logic is the one the
openai backend tests cover."""
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from spatial_manip.camera_model import CameraIntrinsics  # noqa: E402
from spatial_manip.geometry.synthetic import look_at  # noqa: E402
from spatial_manip.observation import RGBDObservation  # noqa: E402
from spatial_manip.reasoning.examples import table_scene  # noqa: E402
from spatial_manip.reasoning.planner import make_planner  # noqa: E402
from spatial_manip.reasoning.transformers_backend import (HERMES_TEMPLATE, _image_only_processor_class,  # noqa: E402
                                                          parse_hermes)

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>",
           "<|video_pad|>"]
INSTR = "take a book behind the picture frame"
PROGRAM = "pick(unique(filterOri$Behind(filterBook(TABLE), frame, frame)))"


def build_tiny_qwen25vl(out):
    """About 1 MB: a byte-level BPE, a 1-layer text model and a 1-block vision tower."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, Qwen2Tokenizer
    from transformers.models.qwen2_vl import Qwen2VLImageProcessorPil

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    corpus = ['find_obj relative_object_position PROGRAM: TARGETS: pick(unique(filterOri$Behind(filterBook(TABLE), '
              'frame, frame))) {"name": "arguments": {"description": "book"}} picture frame jar book'] * 20
    bpe.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIAL,
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    d = json.loads(bpe.to_str())
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in d["model"]["merges"]]
    tok = Qwen2Tokenizer(vocab=d["model"]["vocab"], merges=merges, unk_token=None, bos_token=None,
                         eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tok.add_special_tokens({"additional_special_tokens": SPECIAL[1:]})
    tok.add_tokens(["<tool_call>", "</tool_call>"])          # NOT special: decoding must keep them
    ids = {k: tok.convert_tokens_to_ids(k) for k in SPECIAL}
    cfg = Qwen2_5_VLConfig(
        text_config=dict(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                         rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 1, 2]},
                         eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"], bos_token_id=None),
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=32,
                           fullatt_block_indexes=[0], window_size=56),
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])
    torch.manual_seed(0)
    model = Qwen2_5_VLForConditionalGeneration(cfg).eval()
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    ip = Qwen2VLImageProcessorPil(size={"shortest_edge": 56 * 56, "longest_edge": 112 * 112})
    proc = _image_only_processor_class(transformers, None)(image_processor=ip, tokenizer=tok,
                                                            chat_template=HERMES_TEMPLATE)
    model.save_pretrained(out)
    proc.save_pretrained(out)
    pc = out / "processor_config.json"               # as a real Qwen2.5-VL checkpoint names it
    pc.write_text(json.dumps({**json.loads(pc.read_text()), "processor_class": "Qwen2_5_VLProcessor"}))
    return out


class ForcedReplies:
    """A logits processor that makes generate() emit the given texts, one per generate call."""

    def __init__(self, tokenizer, texts):
        eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
        self.queue = [tokenizer.encode(t, add_special_tokens=False) + [eos] for t in texts]
        self.prompts: list[int] = []
        self._next_len = None
        self._target = None

    def __call__(self, input_ids, scores):
        n = input_ids.shape[1]
        if n != self._next_len:                      # a new generate call
            self._target, self._start = self.queue.pop(0), n
            self.prompts.append(n)
        self._next_len = n + 1
        step = min(n - self._start, len(self._target) - 1)
        out = torch.full_like(scores, float("-inf"))
        out[:, self._target[step]] = 0.0
        return out


def tc(name, args):
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": args})}\n</tool_call>'


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return build_tiny_qwen25vl(tmp_path_factory.mktemp("tiny_qwen25vl"))


@pytest.fixture(scope="module")
def planner(model_dir):
    return make_planner("transformers", model_path=str(model_dir), max_new_tokens=160, agent={"mode": "tools"})


def obs():
    intr = CameraIntrinsics.from_fovy(64, 48, 60.0)
    rgb = np.random.default_rng(0).integers(0, 255, (48, 64, 3), dtype=np.uint8)
    return RGBDObservation(rgb=rgb, depth_m=np.ones((48, 64), np.float32), intrinsics=intr,
                           T_base_cam=look_at([0, 0, 1.3], [0.8, 0, 0.75]))


def test_tool_loop_through_a_local_qwen25vl(planner):
    tok = planner.model.processor.tokenizer
    forced = ForcedReplies(tok, [tc("find_obj", {"description": "picture frame"}),
                                 tc("find_obj", {"description": "book"}), f"PROGRAM: {PROGRAM}"])
    planner.model.logits_processors = [forced]
    res = planner.plan(table_scene(), INSTR, observation=obs())
    assert res.ok, res.error
    assert res.targets == ["b_back_up"] and res.program == PROGRAM
    calls = [e for e in res.trace if e["event"] == "tool_call"]
    assert [(c["tool"], c["ok"]) for c in calls] == [("find_obj", True), ("find_obj", True)]
    assert calls[0]["result"]["matches"][0]["id"] == "frame"
    # each turn's prompt grew by the previous reply and the tool result (the conversation is kept)
    assert forced.prompts[0] < forced.prompts[1] < forced.prompts[2]


def test_prompt_renders_tools_image_and_tool_results(planner):
    from spatial_manip.reasoning.mssr_loop import image_data_url
    from spatial_manip.reasoning.vlm_tools import ToolSet

    msgs = [{"role": "system", "content": "S"},
            {"role": "user", "content": [{"type": "text", "text": "go"},
                                         {"type": "image_url", "image_url": {"url": image_data_url(obs().rgb)}}]},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c0", "type": "function", "function": {"name": "find_obj", "arguments": '{"description": "jar"}'}}]},
            {"role": "tool", "tool_call_id": "c0", "content": '{"matches": []}'}]
    text = planner.model.processor.apply_chat_template(planner.model._convert(msgs), tools=ToolSet(table_scene()).specs(),
                                                       add_generation_prompt=True, tokenize=False)
    assert "<tools>" in text and '"name": "run_program"' in text
    assert "<|vision_start|><|image_pad|><|vision_end|>" in text
    assert '<tool_call>\n{"name": "find_obj", "arguments": {"description": "jar"}}\n</tool_call>' in text
    assert "<tool_response>\n{\"matches\": []}\n</tool_response>" in text
    assert text.endswith("<|im_start|>assistant\n")


def test_malformed_generated_call_is_answered_with_an_error(planner):
    tok = planner.model.processor.tokenizer
    planner.model.logits_processors = [ForcedReplies(tok, [
        "<tool_call>\n{name: find_obj}\n</tool_call>",
        tc("find_obj", {"description": "picture frame"}), f"PROGRAM: {PROGRAM}"])]
    res = planner.plan(table_scene(), INSTR)
    assert res.ok, res.error
    first = next(e for e in res.trace if e["event"] == "tool_call")
    assert first["ok"] is False and "no tool ''" in first["error"]


def test_parse_hermes_and_config_errors(tmp_path, monkeypatch):
    m = parse_hermes('thinking <tool_call>\n{"name": "distance", "arguments": {"object_a": "a", "object_b": "b"}}\n'
                     '</tool_call>')
    assert m["content"] == "thinking"
    assert m["tool_calls"][0]["function"] == {"name": "distance", "arguments": '{"object_a": "a", "object_b": "b"}'}
    assert parse_hermes("PROGRAM: x")["tool_calls"] == []
    from spatial_manip.errors import BackendUnavailableError

    with pytest.raises(BackendUnavailableError, match="config.json"):
        make_planner("transformers", model_path=str(tmp_path))
    monkeypatch.delenv("SPATIAL_MANIP_VLM_PATH", raising=False)
    with pytest.raises(BackendUnavailableError, match="SPATIAL_MANIP_VLM_PATH.*torch==2.13.0"):
        make_planner("transformers")
