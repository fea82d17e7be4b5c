"""Tiny random models of each architecture family, built from configs and saved to a folder,
so that tests load them through the same path as a reader's local folder or Hub download."""

from pathlib import Path

import torch
import transformers as tf
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

TEXT = [
    "Attention rows are compositions: non-negative parts that sum to one.",
    "The first token often takes most of the attention and becomes a sink.",
    "Wikipedia lead sections describe people, places, music and science.",
] * 20
FAMILIES = ("gpt2", "gpt_neox", "llama", "qwen2", "gemma3_text", "bert", "mpnet", "vit")
CAUSAL = {"gpt2", "gpt_neox", "llama", "qwen2", "gemma3_text"}


def _tokenizer(family: str) -> tf.PreTrainedTokenizerFast:
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<pad>", "<bos>", "<eos>", "[CLS]", "[SEP]", "[UNK]", "[MASK]"]
    tok.train_from_iterator(TEXT, trainers.BpeTrainer(vocab_size=300, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    if family in ("bert", "mpnet"):
        tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
        return tf.PreTrainedTokenizerFast(tokenizer_object=tok, cls_token="[CLS]", sep_token="[SEP]", pad_token="<pad>", unk_token="[UNK]", mask_token="[MASK]")
    if family == "gemma3_text":
        tok.post_processor = processors.TemplateProcessing(single="<bos> $A", special_tokens=[("<bos>", tok.token_to_id("<bos>"))])
    return tf.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>")


def config(family: str, vocab: int = 320, positions: int = 160):
    small = dict(hidden_size=32, num_attention_heads=4, intermediate_size=64, vocab_size=vocab, num_hidden_layers=2)
    if family == "gpt2":
        return tf.GPT2Config(n_embd=32, n_head=4, n_layer=2, vocab_size=vocab, n_positions=positions, bos_token_id=1, eos_token_id=2)
    if family == "gpt_neox":
        return tf.GPTNeoXConfig(max_position_embeddings=positions, **small)
    if family == "llama":
        return tf.LlamaConfig(num_key_value_heads=2, max_position_embeddings=positions, **small)
    if family == "qwen2":
        return tf.Qwen2Config(num_key_value_heads=2, max_position_embeddings=positions, **small)
    if family == "gemma3_text":
        return tf.Gemma3TextConfig(num_key_value_heads=2, head_dim=8, max_position_embeddings=positions, sliding_window=positions, **small)
    if family == "bert":
        return tf.BertConfig(max_position_embeddings=positions, **small)
    if family == "mpnet":
        return tf.MPNetConfig(max_position_embeddings=positions + 2, **small)
    if family == "vit":
        return tf.ViTConfig(num_hidden_layers=2, image_size=32, patch_size=8, hidden_size=32, num_attention_heads=4, intermediate_size=64)
    raise ValueError(family)


def save_tiny(family: str, folder: Path) -> Path:
    """Build a randomly initialised tiny ``family`` model (seeded) and save it with its tokenizer or image processor."""
    folder = Path(folder)
    torch.manual_seed(0)
    if family == "vit":
        model = tf.ViTModel(config(family))
        tf.ViTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)
    else:
        tokenizer = _tokenizer(family)
        cfg = config(family, vocab=len(tokenizer))
        model = (tf.AutoModelForCausalLM if family in CAUSAL else tf.AutoModel).from_config(cfg)
        tokenizer.save_pretrained(folder)
    model.save_pretrained(folder)
    return folder
