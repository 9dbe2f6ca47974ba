"""Reasoning: spatial programs, the instruction parser, planner backends (program | openai |
transformers), MSSR's minimal-sufficient-set loop, orientation grounding and reflection."""
