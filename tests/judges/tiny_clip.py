"""A tiny randomly initialised CLIP (2-layer vision and text towers, 8-dim projection) built from a
``CLIPConfig`` and saved to a folder with its image processor, so tests load it by path through
the same ``CLIPModel`` / ``AutoImageProcessor.from_pretrained`` calls as the paper's
CLIP-ViT-L/14. Nothing is downloaded."""

from __future__ import annotations

from pathlib import Path

IMAGE_SIZE, PATCH = 32, 8


def make_tiny_clip(folder: Path, *, seed: int = 0) -> Path:
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel

    config = CLIPConfig(
        text_config={
            "vocab_size": 64,
            "hidden_size": 16,
            "intermediate_size": 32,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "max_position_embeddings": 16,
            "bos_token_id": 0,
            "eos_token_id": 1,
            "pad_token_id": 1,
        },
        vision_config={
            "hidden_size": 16,
            "intermediate_size": 32,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "image_size": IMAGE_SIZE,
            "patch_size": PATCH,
        },
        projection_dim=8,
    )
    torch.manual_seed(seed)
    CLIPModel(config).save_pretrained(folder)
    CLIPImageProcessor(
        do_resize=True,
        size={"shortest_edge": IMAGE_SIZE},
        do_center_crop=True,
        crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
        do_normalize=True,
        image_mean=[0.48145466, 0.4578275, 0.40821073],  # CLIP's own normalisation
        image_std=[0.26862954, 0.26130258, 0.27577711],
        do_convert_rgb=True,
    ).save_pretrained(folder)
    return folder
