"""`transformers` planner backend: a local vision-language model (Qwen2.5-VL, Qwen3-VL, or any
image-text-to-text model whose chat template renders tools Hermes-style) loaded from a folder on
disk — never downloaded — driving the same MSSR / tool loop as the `openai` backend.

    planner = make_planner("transformers", model_path="/models/Qwen2.5-VL-3B-Instruct")

The chat model speaks OpenAI's message format to the loop and converts at the boundary: data-URL
images become PIL images, tool calls are rendered by the chat template (tools=[...]) and parsed
back from `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` in the generated text.
torch and transformers are imported only here. On CPU-only machines without torchvision the
stock Qwen processors cannot build their video processor; the loader then assembles the
processor from the image processor, tokenizer and chat template alone.
"""
from __future__ import annotations

import base64
import io
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
import importlib.util

from PIL import Image

from spatial_manip.errors import BackendUnavailableError, SpatialManipError
from spatial_manip.reasoning.mssr_loop import AgentConfig, plan_with_model
from spatial_manip.reasoning.planner import PlanResult
from spatial_manip.reasoning.vlm_coords import QWEN_MAX_PIXELS, QWEN_MIN_PIXELS, CoordSettings
from spatial_manip.geometry.reach import Reach
from spatial_manip.scene import Scene

INSTALL = ("pip install torch==2.13.0 transformers==5.23.0 (torch 2.13.0 is the CPU wheel here; any other "
           "torch requirement pulls CUDA packages)")

# A Hermes-style template (as Qwen uses) for checkpoints whose own template ignores tools.
HERMES_TEMPLATE = (
    "{% if messages[0].role == 'system' %}{% set sys = messages[0].content %}{% else %}{% set sys = '' %}{% endif %}"
    "{% if tools %}<|im_start|>system\n{{ sys }}\n\n# Tools\n<tools>\n{% for tool in tools %}\n{{ tool | tojson }}"
    "{% endfor %}\n</tools>\nFor each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n"
    "</tool_call><|im_end|>\n{% elif sys %}<|im_start|>system\n{{ sys }}<|im_end|>\n{% endif %}"
    "{% for m in messages %}"
    "{% if m.role == 'user' %}<|im_start|>user\n{% if m.content is string %}{{ m.content }}{% else %}"
    "{% for c in m.content %}{% if c.type == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif c.type == 'text' %}{{ c.text }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
    "{% elif m.role == 'assistant' %}<|im_start|>assistant\n{% if m.content %}{{ m.content }}{% endif %}"
    "{% for tc in m.tool_calls or [] %}\n<tool_call>\n{\"name\": \"{{ tc.function.name }}\", \"arguments\": "
    "{{ tc.function.arguments | tojson }}}\n</tool_call>{% endfor %}<|im_end|>\n"
    "{% elif m.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ m.content }}\n</tool_response><|im_end|>\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)


@dataclass(kw_only=True)
class TransformersConfig:
    model_path: str | None = None      # else $SPATIAL_MANIP_VLM_PATH
    max_new_tokens: int = 512
    device: str = "cpu"
    image_max_side_px: int = 448       # the observation is downscaled before the processor sees it
    # how the model writes boxes and points (vlm_coords.CONVENTIONS); the min/max pixels are
    # Qwen2.5-VL's resize bounds, which its coordinates depend on
    coords: str | None = None
    coords_min_pixels: int = QWEN_MIN_PIXELS
    coords_max_pixels: int = QWEN_MAX_PIXELS
    agent: dict = field(default_factory=dict)
    reach: Reach | None = None         # the launched arm's reach rule (None: arm.yaml's)

    def __post_init__(self):
        self.model_path = self.model_path or os.environ.get("SPATIAL_MANIP_VLM_PATH")
        if not self.model_path:
            raise BackendUnavailableError(
                "the transformers planner needs model_path: a local folder with a Qwen2.5-VL / Qwen3-VL checkpoint "
                "(config.json, weights, tokenizer, processor config); set it in planner_backends.yaml or "
                f"SPATIAL_MANIP_VLM_PATH ({INSTALL}), or use --backend program")
        if not (Path(self.model_path) / "config.json").is_file():
            raise BackendUnavailableError(f"model_path {self.model_path!r} has no config.json: expected a saved "
                                          f"checkpoint folder (save_pretrained); nothing is downloaded here. "
                                          f"Or use --backend program")
        if int(self.max_new_tokens) < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if not isinstance(self.agent, AgentConfig):
            self.agent = AgentConfig(**dict(self.agent or {}))
        self.coords = self.coords or coords_of_checkpoint(self.model_path)
        self.coord_settings = CoordSettings(self.coords, self.coords_min_pixels, self.coords_max_pixels)


# model_type (config.json) -> the convention that family writes boxes and points in
_CHECKPOINT_COORDS = {"qwen2_5_vl": "qwen2.5-vl", "qwen3_vl": "qwen3-vl", "qwen3_vl_moe": "qwen3-vl"}


def coords_of_checkpoint(path: str) -> str:
    """`coords` left unset: read from the checkpoint's model_type, or a ValueError asking for it
    (guessing another family's convention would misplace every box)."""
    model_type = json.loads((Path(path) / "config.json").read_text()).get("model_type")
    if model_type not in _CHECKPOINT_COORDS:
        raise ValueError(f"cannot tell how a {model_type!r} checkpoint writes boxes and points; set coords in "
                         f"planner_backends.yaml to one of pixel, qwen2.5-vl, qwen3-vl, gemini, molmo")
    return _CHECKPOINT_COORDS[model_type]


def _import():
    try:
        import torch
        import transformers
    except ImportError as e:
        raise BackendUnavailableError(f"the transformers planner needs torch and transformers ({e}): {INSTALL}") from e
    return torch, transformers


def load_processor(path: str):
    """AutoProcessor, or (without torchvision, so no video processor) one built from the image
    processor, tokenizer and chat template."""
    _, tf = _import()
    first: Exception | str = "torchvision is not installed, so no video processor"
    if importlib.util.find_spec("torchvision") is not None:   # else AutoProcessor fails, slowly
        try:
            proc = tf.AutoProcessor.from_pretrained(path, local_files_only=True)
            if hasattr(proc, "image_processor") and hasattr(proc, "tokenizer"):
                return proc
            first = f"AutoProcessor gave a {type(proc).__name__}, not a multimodal processor"
        except (ImportError, ValueError, OSError, TypeError, AttributeError) as e:
            first = e
    try:
        image_processor = tf.AutoImageProcessor.from_pretrained(path, local_files_only=True)
        tokenizer = tf.AutoTokenizer.from_pretrained(path, local_files_only=True)
    except (ImportError, ValueError, OSError) as e:
        raise BackendUnavailableError(f"cannot load a processor from {path}: {first}; {e}") from e
    cls = _image_only_processor_class(tf, path)
    template = getattr(tokenizer, "chat_template", None) or _read_template(path)
    return cls(image_processor=image_processor, tokenizer=tokenizer, chat_template=template)


def _read_template(path: str) -> str | None:
    for name in ("chat_template.jinja", "chat_template.json"):
        p = Path(path) / name
        if p.is_file():
            text = p.read_text()
            return json.loads(text)["chat_template"] if name.endswith(".json") else text
    return None


def _image_only_processor_class(tf, path: str | None):
    cfg = json.loads((Path(path) / "config.json").read_text()) if path else {}
    base = {"qwen3_vl": "Qwen3VLProcessor", "qwen2_vl": "Qwen2VLProcessor"}.get(cfg.get("model_type"),
                                                                              "Qwen2_5_VLProcessor")
    parent = getattr(tf, base)

    class ImageOnlyProcessor(parent):      # the parent's __init__ accepts video_processor=None
        def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kw):
            super().__init__(image_processor=image_processor, tokenizer=tokenizer, video_processor=None,
                             chat_template=chat_template, **kw)

    return ImageOnlyProcessor


def _image(url: str, max_side: int):
    if not url.startswith("data:"):
        raise SpatialManipError(f"the transformers backend takes data-URL images only, got {url[:40]!r}", "INTERNAL")
    img = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB")
    if max(img.size) > max_side:
        s = max_side / max(img.size)
        img = img.resize((max(28, round(img.width * s)), max(28, round(img.height * s))))
    return img


def parse_hermes(text: str) -> dict:
    """Generated text -> an OpenAI-style assistant message (tool calls from <tool_call> blocks)."""
    calls = []
    for i, raw in enumerate(_TOOL_CALL.findall(text)):
        try:
            obj = json.loads(raw)
            name, args = str(obj.get("name", "")), obj.get("arguments", {})
        except (json.JSONDecodeError, AttributeError):
            name, args = "", raw             # the loop answers a malformed call with an error message
        calls.append({"id": f"call_{i}", "type": "function",
                      "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}})
    content = _TOOL_CALL.sub("", text).strip()
    return {"role": "assistant", "content": content or None, "tool_calls": calls}


class LocalChatModel:
    """`complete(messages, tools)` over a local checkpoint. `logits_processors` is passed to
    generate (constrained decoding; the tests force replies from a random-weight model with it)."""

    def __init__(self, cfg: TransformersConfig):
        torch, tf = _import()
        self.cfg, self.torch = cfg, torch
        self.processor = load_processor(cfg.model_path)
        try:
            self.model = tf.AutoModelForImageTextToText.from_pretrained(cfg.model_path, local_files_only=True)
        except (OSError, ValueError) as e:
            raise BackendUnavailableError(f"cannot load the model in {cfg.model_path}: {e}") from e
        self.model.to(cfg.device).eval()
        if not getattr(self.processor, "chat_template", None):
            self.processor.chat_template = HERMES_TEMPLATE
        self.logits_processors: list = []

    def _convert(self, messages: list[dict]) -> list[dict]:
        out = []
        for m in messages:
            c = m.get("content")
            if isinstance(c, list):
                c = [{"type": "image", "image": _image(p["image_url"]["url"], self.cfg.image_max_side_px)}
                     if p.get("type") == "image_url" else {"type": "text", "text": p.get("text", "")} for p in c]
            msg = {"role": m["role"], "content": c if c is not None else ""}
            if m.get("tool_calls"):
                msg["tool_calls"] = [{"type": "function", "function": {
                    "name": tc["function"]["name"], "arguments": _args(tc["function"].get("arguments"))}}
                    for tc in m["tool_calls"]]
            out.append(msg)
        return out

    def complete(self, messages: list[dict], tools: list[dict] | None = None) -> dict:
        from transformers import LogitsProcessorList

        msgs = self._convert(messages)
        images = [p["image"] for m in msgs if isinstance(m["content"], list) for p in m["content"] if p["type"] == "image"]
        text = self.processor.apply_chat_template(msgs, tools=tools or None, add_generation_prompt=True, tokenize=False)
        inputs = self.processor(text=[text], images=images or None, return_tensors="pt").to(self.cfg.device)
        with self.torch.no_grad():
            out = self.model.generate(**inputs, max_new_tokens=int(self.cfg.max_new_tokens), do_sample=False,
                                      logits_processor=LogitsProcessorList(self.logits_processors))
        new = out[0, inputs["input_ids"].shape[1]:]
        return parse_hermes(self.processor.tokenizer.decode(new, skip_special_tokens=True))


def _args(a) -> Any:
    if isinstance(a, str):
        try:
            return json.loads(a)
        except json.JSONDecodeError:
            return a
    return a


class TransformersPlanner:
    """The `transformers` planner backend (registry role "planner")."""

    name = "transformers"

    def __init__(self, **cfg):
        self.config = TransformersConfig(**cfg)
        self.model = LocalChatModel(self.config)

    def plan(self, scene: Scene, instruction: str, *, observation: Any = None, task_kind: str = "auto",
             trace=None) -> PlanResult:
        return plan_with_model(self.model, scene, instruction, self.config.agent, observation=observation,
                               task_kind=task_kind, trace=trace, image_max_side_px=self.config.image_max_side_px,
                               coords=self.config.coord_settings, reach=self.config.reach)
