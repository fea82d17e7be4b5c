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


def save_tiny_gguf(path: Path, block_count: int | None = None) -> Path:
    """A tiny random Qwen2-architecture GGUF file (float32 tensors, GPT-2-style BPE tokenizer inside); ``block_count``
    makes its header claim that many layers (a hostile file: the tensors stay those of 2 layers)."""
    import json

    import gguf
    import numpy as np

    tok = _tokenizer("qwen2")
    data = json.loads(tok.backend_tokenizer.to_str())
    vocab = data["model"]["vocab"]; merges = data["model"]["merges"]
    merges = [" ".join(m) if isinstance(m, list) else m for m in merges]
    tokens = [None] * len(vocab)
    for t, i in vocab.items(): tokens[i] = t
    added = {a["id"]: a["content"] for a in data.get("added_tokens", [])}
    for i, t in added.items():
        if i >= len(tokens): tokens.extend([None] * (i + 1 - len(tokens)))
        tokens[i] = t
    types = [3 if i in added else 1 for i in range(len(tokens))]
    n_vocab, d, ff, layers, heads, kv = len(tokens), 32, 64, 2, 4, 2
    hd = d // heads
    rng = np.random.default_rng(0)
    w = lambda *s: (rng.standard_normal(s) * 0.05).astype(np.float32)
    writer = gguf.GGUFWriter(str(path), "qwen2")
    writer.add_block_count(block_count or layers); writer.add_context_length(128); writer.add_embedding_length(d)
    writer.add_feed_forward_length(ff); writer.add_head_count(heads); writer.add_head_count_kv(kv)
    writer.add_rope_freq_base(10000.0); writer.add_layer_norm_rms_eps(1e-6)
    writer.add_tokenizer_model("gpt2"); writer.add_token_list(tokens); writer.add_token_types(types); writer.add_token_merges(merges)
    writer.add_bos_token_id(vocab.get("<bos>", 1)); writer.add_eos_token_id(vocab.get("<eos>", 2))
    writer.add_tensor("token_embd.weight", w(n_vocab, d))
    for i in range(layers):
        p = f"blk.{i}."
        writer.add_tensor(p + "attn_norm.weight", np.ones(d, np.float32))
        writer.add_tensor(p + "attn_q.weight", w(d, d)); writer.add_tensor(p + "attn_q.bias", w(d))
        writer.add_tensor(p + "attn_k.weight", w(kv * hd, d)); writer.add_tensor(p + "attn_k.bias", w(kv * hd))
        writer.add_tensor(p + "attn_v.weight", w(kv * hd, d)); writer.add_tensor(p + "attn_v.bias", w(kv * hd))
        writer.add_tensor(p + "attn_output.weight", w(d, d))
        writer.add_tensor(p + "ffn_norm.weight", np.ones(d, np.float32))
        writer.add_tensor(p + "ffn_gate.weight", w(ff, d)); writer.add_tensor(p + "ffn_up.weight", w(ff, d)); writer.add_tensor(p + "ffn_down.weight", w(d, ff))
    writer.add_tensor("output_norm.weight", np.ones(d, np.float32))
    writer.add_tensor("output.weight", w(n_vocab, d))
    writer.write_header_to_file(); writer.write_kv_data_to_file(); writer.write_tensors_to_file(); writer.close()
    return Path(path)


def save_tiny_learned_sink(folder: Path, sink: float = 3.0) -> Path:
    """A tiny random GPT-OSS whose learned per-head sink logits differ by head and layer (``sink − 4`` to ``sink``, so a
    head mixed up with another shows); a sliding-window layer, then a full one."""
    folder = Path(folder)
    torch.manual_seed(0)
    tokenizer = _tokenizer("llama")
    cfg = tf.GptOssConfig(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=8, intermediate_size=32, num_hidden_layers=2,
                          vocab_size=len(tokenizer), num_local_experts=4, num_experts_per_tok=2, max_position_embeddings=160, sliding_window=160,
                          rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
    model = tf.AutoModelForCausalLM.from_config(cfg)
    with torch.no_grad():
        for i, m in enumerate(m for m in model.modules() if isinstance(getattr(m, "sinks", None), torch.Tensor)):
            m.sinks.copy_(torch.linspace(sink - 4.0, sink, m.sinks.numel()) - 0.5 * i)
    tokenizer.save_pretrained(folder)
    model.save_pretrained(folder)
    return folder


def save_tiny_masked_lm(folder: Path) -> Path:
    """A tiny random BERT with its masked-LM head (so it has a pseudo-perplexity)."""
    folder = Path(folder)
    torch.manual_seed(0)
    tokenizer = _tokenizer("bert")
    model = tf.BertForMaskedLM(config("bert", vocab=len(tokenizer)))
    tokenizer.save_pretrained(folder)
    model.save_pretrained(folder)
    return folder


def tiny_inputs(loaded, n: int = 2, length: int = 24) -> dict:
    """Seeded inputs for a loaded tiny model: token ids (with an all-ones mask) or images for a ViT."""
    import numpy as np

    if loaded.info.vision:
        rng = np.random.default_rng(0)
        images = [rng.integers(0, 255, (32, 32, 3), dtype=np.uint8) for _ in range(n)]
        return {"pixel_values": loaded.processor(images=images, return_tensors="pt")["pixel_values"]}
    ids = torch.randint(8, len(loaded.processor), (n, length), generator=torch.Generator().manual_seed(0))
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def tiny_family_folders(root: Path) -> dict:
    """Every tiny family saved under ``root`` (for a module-scoped fixture)."""
    return {f: save_tiny(f, Path(root) / f) for f in FAMILIES}


def save_tiny_series(family: str, folder: Path, steps=(0, 10, 20)) -> list[Path]:
    """Tiny ``family`` "checkpoints" named ``step<k>``: the same architecture with weights drawn from seed ``k`` (as if trained)."""
    folders = []
    for k in steps:
        target = Path(folder) / f"step{k}"
        save_tiny(family, target)
        torch.manual_seed(k)
        model = tf.AutoModelForCausalLM.from_pretrained(target)
        with torch.no_grad():
            for p in model.parameters():
                p.add_(0.02 * k ** 0.5 * torch.randn_like(p))
        model.save_pretrained(target)
        folders.append(target)
    return folders
