"""A tiny randomly initialised causal LM (Llama architecture) with a word-level tokenizer,
built from a config and saved to a folder, so tests load it through the same
``from_pretrained`` path as a real judge model. Nothing is downloaded."""

from __future__ import annotations

from pathlib import Path

WORDS = [
    "score",
    "is",
    "1",
    "2",
    "3",
    "4",
    "5",
    "{",
    "}",
    ":",
    ",",
    '"',
    "q1",
    "reflection",
    "yes",
    "no",
    "the",
    "a",
    "story",
    "value",
    "consistent",
    "natural",
]


def make_tiny_causal_lm(folder: Path, *, hidden: int = 32, layers: int = 2, seed: int = 0) -> Path:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<pad>", "<unk>", "<s>", "</s>"]
    vocab = {w: i for i, w in enumerate(specials + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )
    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        pad_token_id=vocab["<pad>"],
        bos_token_id=vocab["<s>"],
        eos_token_id=vocab["</s>"],
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder
