"""A tiny tool-calling causal LM built in code (no download), for TRL runs on a CPU.

The tokenizer is word-level over a handful of "moves": each move is one whole tool call, exactly
as the Qwen3 chat template (which TRL knows how to parse) renders it, so a randomly initialised
model emits well-formed tool calls from its first step and GRPO has something to choose between.
Everything else in a rendered chat (the prompt, the tool schemas, tool results) becomes ``[UNK]``
tokens between the template's markers. The model is a 2-layer Qwen3 of about 50k parameters.

``tiny_tool_lm(moves, words=...)`` also gives the tokenizer a word-level vocabulary (``words``:
e.g. the words of the instructions and element lists the env returns), so the model reads those
words as tokens of their own and its choice of move can depend on them; any other word is ``[UNK]``.

Example:
    >>> model, tokenizer = tiny_tool_lm([("answer", {"text": "4"}), ("answer", {"text": "5"})])  # doctest: +SKIP
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "[UNK]"]
MARKERS = ["<think>", "</think>", "<tool_response>", "</tool_response>", "\n"]


def render_move(name: str, arguments: dict[str, Any]) -> str:
    """One tool call as the Qwen3 chat template renders it."""
    return '<tool_call>\n{"name": "' + name + '", "arguments": ' + json.dumps(arguments) + "}\n</tool_call>"


WORD = r"\w+|[^\w\s]"  # a word or one punctuation mark


def words_of(text: str) -> list[str]:
    """The word-level pieces of ``text`` (what the tokenizer maps to tokens when ``words`` holds them)."""
    return re.findall(WORD, text)


def tiny_tool_lm(
    moves: Sequence[tuple[str, dict[str, Any]]],
    *,
    words: Sequence[str] = (),
    seed: int = 0,
    hidden: int = 32,
) -> tuple[Any, Any]:
    """A randomly initialised Qwen3 causal LM and its tokenizer, whose vocabulary is ``moves``
    (``(tool name, arguments)`` pairs, each one token), the chat template's markers and ``words``.

    Args:
        moves: the tool calls the model can make, one token each.
        words: words (and punctuation marks) read as tokens of their own (see :func:`words_of`);
            empty: everything but the moves and markers is ``[UNK]``.
        seed: the torch seed of the initial weights.
        hidden: the hidden size.

    Returns:
        ``(model, tokenizer)``; the tokenizer pads on the left and carries TRL's Qwen3 chat template.
    """
    import torch
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM
    from trl.chat_template_utils import qwen3_chat_template

    chunks = [render_move(name, args) for name, args in moves]
    fixed = SPECIALS + MARKERS + ([" "] if words else []) + chunks
    vocab = {token: i for i, token in enumerate(fixed + sorted(set(words) - set(fixed)))}
    # Longest first, so a whole tool call wins over the markers inside it; then single words.
    pattern = "|".join(re.escape(t) for t in sorted(fixed, key=len, reverse=True) if t != "[UNK]")
    if words:
        pattern += "|" + WORD
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
    backend.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token="[UNK]",
        padding_side="left",
    )
    tokenizer.chat_template = qwen3_chat_template
    torch.manual_seed(seed)
    config = Qwen3Config(
        vocab_size=len(vocab),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=hidden // 2,
        max_position_embeddings=4096,
        bos_token_id=vocab["<|im_start|>"],
        eos_token_id=vocab["<|im_end|>"],
        pad_token_id=vocab["<|endoftext|>"],
        tie_word_embeddings=not words,
    )
    model = Qwen3ForCausalLM(config)
    if words:  # an untied output layer starting at zero: every move equally likely before training
        torch.nn.init.zeros_(model.lm_head.weight)
    model.generation_config.eos_token_id = vocab["<|im_end|>"]
    model.generation_config.pad_token_id = vocab["<|endoftext|>"]
    return model, tokenizer
