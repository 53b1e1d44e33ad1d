"""A tiny randomly initialised vision-language model (LLaVA architecture: a 2-layer CLIP vision
tower, a projector and a 2-layer Llama), with a word-level tokenizer and a CLIP image processor
built from parameters, saved to a folder with its processor and chat template, so tests load it
through the same ``AutoProcessor`` / ``AutoModelForImageTextToText.from_pretrained`` path as a
real judge model. Nothing is downloaded."""

from __future__ import annotations

from pathlib import Path

from .tiny_model import WORDS

IMAGE_TOKEN = "<image>"
ROLES = ["system:", "user:", "assistant:"]
VLM_WORDS = [
    *WORDS,
    "Mosque",
    "Synagogue",
    "church",
    "temple",
    "India",
    "Brazil",
    "what",
    "is",
    "depicted",
    "in",
    "this",
    "image",
    "?",
]
# one image -> (image_size / patch_size) ** 2 placeholder tokens (CLS is counted, then dropped)
IMAGE_SIZE, PATCH = 16, 8

CHAT_TEMPLATE = (
    "{% for message in messages %}{{ message['role'] }}: "
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<image> {% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}{{ '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)


def make_tiny_vlm(folder: Path, *, hidden: int = 32, seed: int = 0) -> Path:
    import torch
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        PreTrainedTokenizerFast,
    )

    specials = ["<pad>", "<unk>", "<s>", "</s>", IMAGE_TOKEN]
    vocab = {w: i for i, w in enumerate(dict.fromkeys(specials + ROLES + VLM_WORDS))}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens([AddedToken(IMAGE_TOKEN, normalized=False, special=True)])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<unk>",
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        extra_special_tokens={"image_token": IMAGE_TOKEN},
    )
    image_processor = CLIPImageProcessor(
        do_resize=True,
        size={"shortest_edge": IMAGE_SIZE},
        do_center_crop=True,
        crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
        do_normalize=True,
        image_mean=[0.5, 0.5, 0.5],
        image_std=[0.5, 0.5, 0.5],
        do_convert_rgb=True,
    )
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=fast,
        patch_size=PATCH,
        vision_feature_select_strategy="default",
        chat_template=CHAT_TEMPLATE,
        image_token=IMAGE_TOKEN,
        num_additional_image_tokens=1,
    )
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            image_size=IMAGE_SIZE,
            patch_size=PATCH,
        ),
        text_config=LlamaConfig(
            vocab_size=len(vocab),
            hidden_size=hidden,
            intermediate_size=hidden * 2,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=4096,
            pad_token_id=vocab["<pad>"],
            bos_token_id=vocab["<s>"],
            eos_token_id=vocab["</s>"],
        ),
        image_token_index=vocab[IMAGE_TOKEN],
        image_seq_length=(IMAGE_SIZE // PATCH) ** 2,
        vision_feature_select_strategy="default",
        vision_feature_layer=-2,
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config)
    model.generation_config.pad_token_id = vocab["<pad>"]
    model.generation_config.eos_token_id = vocab["</s>"]
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder
