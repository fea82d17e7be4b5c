"""Train the collapse chapter's suite: small models on the offline corpus or on a synthetic task, with checkpoints
on Pythia's log-spaced schedule (and, for a run that asks, every few steps), so that trajectories exist without the
Hub. Text runs are GPT-NeoX (Pythia's architecture); task runs may use GPT-2's block instead (``arch``).

* **Tokenizer.** A byte-level BPE of ``vocab`` entries trained on the corpus's sample split. It puts a
  ``<|bos|>`` token first in every window, so key 0 is the same token everywhere: small models trained
  for minutes grow a sink there, and grow none when windows start at a random token.
* **Data.** Batch ``k`` of seed ``s`` holds ``batch`` windows ``[BOS] + (length − 1)`` tokens taken at
  offsets drawn by ``numpy.random.default_rng([s, k])`` from the sample split's token stream. A batch
  depends on (seed, step) only, so a resumed run sees exactly the data an uninterrupted one would.
* **Optimiser.** AdamW (β = 0.9, 0.95; weight decay ``weight_decay``), linear warm-up, then cosine decay to 10 %
  of the peak rate (the shape Pythia used).
* **Checkpoints** at steps 0, 1, 2, 4, …, 2^k < ``steps``, and ``steps``. Each is a saved Hugging Face
  folder (weights, config, tokenizer) plus the optimiser state and the mean training loss since the checkpoint
  before, written atomically under a key that
  hashes the whole configuration: an interrupted run resumes from its last checkpoint and ends with
  the same bits as an uninterrupted one.
* **Device.** A run trains where its ``device`` says (the CPU unless set): the model is initialized on the CPU with
  the run's seed, so every device starts from the same weights, then moved; bfloat16 autocast follows the device.
  Checkpoints trained off the CPU are cached under a key of their own. On a CPU without bf16 instructions a bf16
  run's matrix products are computed in float32 on the bf16 operands (:mod:`attncoda.engine.bf16_products`), and its
  checkpoints are cached under a key of their own too.
* **Monitor.** ``train(run, monitor=...)`` has an :class:`attncoda.engine.monitor.AttentionMonitor` observe the
  model at step 0 and at every checkpoint, as it trains: a forward pass in eval mode without gradients, which
  draws no random number, so the checkpoints keep their bits.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..base.files import atomic_folder
from ..base.paths import cache_dir
from ..base.protocol import SUITE_STEPS, WINDOW_LENGTH
from ..base.progress import Steps, report

TRAINING_VERSION = 1
TRAINING_THREADS = 2
"""Torch threads for training, on every machine and in every worker: a backward pass sums in an order that depends on
the thread count, so a fixed count is what makes a seed give the same bits everywhere (forward passes do not depend on it)."""
BOS = "<|bos|>"
EOS = "<|endoftext|>"
CHOICES = {
    "windows": ("stream", "documents"),
    "optimizer": ("adamw", "sgd"),
    "task": ("text", "backcopy", "character-backcopy"),
    "precision": ("float32", "bf16"),
    "arch": ("neox", "gpt2", "gpt2-gelu", "gpt2-tied"),
    "rates": ("cosine", "constant"),
}
TASKS = ("backcopy", "character-backcopy")
"""The synthetic tasks (no text, no tokenizer): :class:`attncoda.engine.tasks.Backcopy` (a random bigram table, the
control) and :class:`attncoda.engine.tasks.CharacterBackcopy` (Guo et al.'s task on Shakespeare's characters)."""
LATE_DEFAULTS = {"every": 0, "embed_std": 0.0, "device": "cpu"}
"""Fields added after the first suite that are not choices: hashed into a run's key only when they differ from these values."""
"""The settings a run may vary beyond sizes and rates, each with its default first:

* ``windows``: ``stream`` takes consecutive tokens of the joined documents (an ``<|endoftext|>`` inside most
  windows); ``documents`` starts every window at a document's first token and masks whatever lies past its end.
* ``optimizer``: AdamW (β = 0.9, 0.95) or SGD with momentum 0.9 (Guo et al. saw no sink grow under SGD).
* ``task``: the offline corpus (``text``), :class:`attncoda.engine.tasks.Backcopy` (``vocab`` is then the task's), or
  :class:`attncoda.engine.tasks.CharacterBackcopy` (``vocab`` must be its characters and ``<bos>``).
* ``precision``: float32, or bfloat16 autocast of the forward pass (the weights and optimiser stay float32).
* ``rates``: the learning-rate schedule, warm-up and cosine decay (Pythia's shape), or a constant rate.

``embed_std`` (a number, not a choice): 0 keeps the family's initializer (normal, sd 0.02, for every weight), any other
value draws the token and position embeddings from a normal of that sd instead; 1 is PyTorch's own ``nn.Embedding``
initializer, which Guo et al.'s model used. ``device`` (a torch device name, ``cpu`` by default): where it trains.
* ``arch``: GPT-NeoX as Pythia (parallel residual, partial rotary positions, GELU, untied output); ``gpt2``, GPT-2's
  block as Guo et al. trained it (pre-LN, sequential residual, learned absolute positions) with a ReLU MLP and an
  untied output; ``gpt2-gelu`` and ``gpt2-tied``, the same with GELU, or with the output tied to the input embedding
  (one trait changed each, to find out which ones decide whether a sink grows)."""


@dataclass(frozen=True)
class SuiteRun:
    """One trained model of the suite: its size, seed and every setting its checkpoints depend on."""

    size: str
    hidden: int
    layers: int
    heads: int
    seed: int
    steps: int = SUITE_STEPS
    batch: int = 16
    length: int = WINDOW_LENGTH
    learning_rate: float = 2e-3
    weight_decay: float = 0.01
    warmup: int = 100
    vocab: int = 2048
    corpus: str = "wikipedia"
    windows: str = "stream"
    optimizer: str = "adamw"
    task: str = "text"
    precision: str = "float32"
    arch: str = "neox"
    every: int = 0
    rates: str = "cosine"
    embed_std: float = 0.0
    device: str = "cpu"

    def __post_init__(self):
        for field, allowed in CHOICES.items():
            if getattr(self, field) not in allowed:
                raise ValueError(f"{field} must be one of {', '.join(allowed)}; got {getattr(self, field)!r}")

    @property
    def name(self) -> str:
        return f"{self.arch}-{self.size}-seed{self.seed}"

    def schedule(self) -> list[int]:
        """Checkpoint steps: :func:`log_spaced_steps`, and every ``every`` steps as well when ``every`` is set (to follow a
        sink's rise closely).

        Examples
        --------
        >>> SuiteRun("x", 8, 1, 1, 0, steps=100, every=25).schedule()
        [0, 1, 2, 4, 8, 16, 25, 32, 50, 64, 75, 100]
        """
        steps = set(log_spaced_steps(self.steps))
        if self.every:
            steps |= set(range(self.every, self.steps, self.every))
        return sorted(steps)

    def key(self) -> str:
        """A hash of every field, the training code's version and the torch version (its kernels fix the last bits).
        Fields added after the first suite are hashed only when they differ from their defaults, so its checkpoints keep their keys;
        a bf16 run whose products are computed in float32 (:func:`~.bf16_products.products_path`) adds that path."""
        import torch

        from .bf16_products import products_path

        fields = {k: v for k, v in asdict(self).items() if (k not in CHOICES or v != CHOICES[k][0]) and (k not in LATE_DEFAULTS or v != LATE_DEFAULTS[k])}
        if self.precision == "bf16" and products_path(self.device) != "native":
            fields["products"] = products_path(self.device)
        text = json.dumps({**fields, "version": TRAINING_VERSION, "torch": torch.__version__}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def folder(self) -> Path:
        return cache_dir() / "suite" / f"{self.name}-{self.key()}"

    def checkpoint(self, step: int) -> Path:
        return self.folder() / f"step{step}"


def log_spaced_steps(total: int) -> list[int]:
    """Checkpoint steps: 0, the powers of two below ``total``, and ``total``.

    Examples
    --------
    >>> log_spaced_steps(100)
    [0, 1, 2, 4, 8, 16, 32, 64, 100]
    """
    if total < 1:
        raise ValueError(f"a run needs at least one step, got {total}")
    steps, k = [0], 1
    while k < total:
        steps.append(k)
        k *= 2
    return steps + [total]


def learning_rate(step: int, run: SuiteRun) -> float:
    """Linear warm-up over ``warmup`` steps, then cosine decay from the peak to 10 % of it at ``steps`` (``rates``
    ``cosine``), or the peak rate from the first step to the last (``constant``, as Guo et al. trained)."""
    if run.rates == "constant":
        return run.learning_rate
    if step < run.warmup:
        return run.learning_rate * (step + 1) / run.warmup
    progress = (step - run.warmup) / max(1, run.steps - run.warmup)
    return run.learning_rate * (0.1 + 0.9 * 0.5 * (1 + np.cos(np.pi * min(progress, 1.0))))


# --------------------------------------------------------------------------- tokenizer and data


def suite_tokenizer(vocab: int = 2048, corpus: str = "wikipedia"):
    """The suite's byte-level BPE tokenizer (trained once on the sample split, then read from the cache)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    from .corpus import split_documents

    def train(folder: Path) -> None:
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=vocab, special_tokens=[BOS, EOS], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                      show_progress=False)
        tok.train_from_iterator((text for _, text in split_documents(corpus, "sample")), trainer=trainer)
        tok.post_processor = processors.TemplateProcessing(single=f"{BOS} $A", special_tokens=[(BOS, tok.token_to_id(BOS))])
        PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=BOS, eos_token=EOS).save_pretrained(folder)

    return PreTrainedTokenizerFast.from_pretrained(atomic_folder(tokenizer_folder(vocab, corpus), train))


def tokenizer_folder(vocab: int = 2048, corpus: str = "wikipedia") -> Path:
    """Where the suite's tokenizer is cached."""
    return cache_dir() / "suite" / f"tokenizer-{corpus}-{vocab}-v{TRAINING_VERSION}"


def token_stream(tokenizer, corpus: str = "wikipedia") -> np.ndarray:
    """Every sample-split document of ``corpus``, tokenized without special tokens, joined by ``<|endoftext|>``."""
    from .corpus import split_documents

    eos = tokenizer.convert_tokens_to_ids(EOS)
    texts = [text for _, text in split_documents(corpus, "sample")]
    ids = tokenizer(texts, add_special_tokens=False)["input_ids"]
    return np.fromiter((t for doc in ids for t in (*doc, eos)), dtype=np.int64)


def batch_at(stream: np.ndarray, run: SuiteRun, step: int, bos_id: int) -> np.ndarray:
    """Batch ``step`` of ``run``: ``(batch, length)`` ids, each row ``[BOS]`` then ``length − 1`` consecutive stream tokens."""
    rng = np.random.default_rng([run.seed, step])
    starts = rng.integers(0, len(stream) - run.length, size=run.batch)
    body = np.stack([stream[s : s + run.length - 1] for s in starts])
    return np.concatenate([np.full((run.batch, 1), bos_id, dtype=np.int64), body], axis=1)


IGNORED = -100
"""A label the loss skips (transformers' convention)."""


def document_batch_at(stream: np.ndarray, run: SuiteRun, step: int, bos_id: int, eos_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Batch ``step`` of a ``documents`` run: ``(ids, labels)``; each row is ``[BOS]`` and one document from its first token,
    through its ``<|endoftext|>``; positions past it hold ``<|endoftext|>`` with label :data:`IGNORED` (causal attention
    keeps them from touching the document's own rows)."""
    starts_all = np.concatenate([[0], np.flatnonzero(stream[:-1] == eos_id) + 1])
    starts_all = starts_all[starts_all < len(stream) - run.length]
    rng = np.random.default_rng([run.seed, step])
    ids = np.full((run.batch, run.length), eos_id, dtype=np.int64)
    labels = np.full((run.batch, run.length), IGNORED, dtype=np.int64)
    ids[:, 0] = bos_id
    for row, s in enumerate(rng.choice(starts_all, size=run.batch)):
        body = stream[s : s + run.length - 1]
        ends = np.flatnonzero(body == eos_id)
        keep = ends[0] + 1 if len(ends) else len(body)
        ids[row, 1 : 1 + keep] = body[:keep]
        labels[row, : 1 + keep] = ids[row, : 1 + keep]
    return ids, labels


def task_batch_at(run: SuiteRun, step: int) -> np.ndarray:
    """Batch ``step`` of a task run: ``(batch, length)`` sequences of its task (:func:`run_task`)."""
    return run_task(run).sequences(run.batch, run.length, np.random.default_rng([run.seed, step]))


def run_task(run: SuiteRun):
    """The synthetic task of a task run: :class:`~attncoda.engine.tasks.Backcopy` of the run's ``vocab``, or
    :class:`~attncoda.engine.tasks.CharacterBackcopy` (whose vocabulary the run's ``vocab`` must match)."""
    from .tasks import Backcopy, character_backcopy

    if run.task == "backcopy":
        return Backcopy(vocab=run.vocab)
    if run.task == "character-backcopy":
        task = character_backcopy()
        if task.vocab != run.vocab:
            raise ValueError(f"the character task has {task.vocab} tokens (its characters and <bos>), but the run's vocab is {run.vocab}; "
                             f"set vocab={task.vocab}")
        return task
    raise ValueError(f"run {run.name} trains on text, not on a synthetic task")


class TaskTokenizer:
    """What a ``backcopy`` run's checkpoints need of a tokenizer: its size and its ``<bos>`` id (no text)."""

    def __init__(self, vocab: int, task: str = "backcopy"):
        self.vocab = vocab
        self.task = task
        self.bos_token_id = self.eos_token_id = 0

    def __len__(self) -> int:
        return self.vocab

    def save_pretrained(self, folder) -> None:
        (Path(folder) / "task.json").write_text(json.dumps({"task": self.task, "vocab": self.vocab}))


def run_tokenizer(run: SuiteRun):
    """The run's tokenizer: the suite's BPE for text, :class:`TaskTokenizer` for a synthetic task."""
    return TaskTokenizer(run.vocab, run.task) if run.task in TASKS else suite_tokenizer(run.vocab, run.corpus)


def batches(run: SuiteRun, tokenizer):
    """``batch(step) -> (ids, labels)`` for the run's data (labels equal ids unless a ``documents`` run masks padding)."""
    if run.task in TASKS:
        return lambda step: (ids := task_batch_at(run, step), ids)
    stream = token_stream(tokenizer, run.corpus)
    bos, eos = tokenizer.bos_token_id, tokenizer.convert_tokens_to_ids(EOS)
    if run.windows == "documents":
        return lambda step: document_batch_at(stream, run, step, bos, eos)
    return lambda step: (ids := batch_at(stream, run, step, bos), ids)


# --------------------------------------------------------------------------- model and training


def neox_config(run: SuiteRun, tokenizer):
    """Pythia's architecture at the run's size: GPT-NeoX with parallel residual, rotary on 25 % of each head, untied output."""
    from transformers import GPTNeoXConfig

    return GPTNeoXConfig(
        vocab_size=len(tokenizer), hidden_size=run.hidden, num_hidden_layers=run.layers, num_attention_heads=run.heads,
        intermediate_size=4 * run.hidden, max_position_embeddings=run.length, rotary_pct=0.25, use_parallel_residual=True,
        tie_word_embeddings=False, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        attention_dropout=0.0, hidden_dropout=0.0,
    )


def gpt2_config(run: SuiteRun, tokenizer):
    """GPT-2's block as Guo et al. trained their task: pre-LN, sequential residual, learned absolute positions, a ReLU
    MLP of 4× the width, untied output, no dropout."""
    from transformers import GPT2Config

    return GPT2Config(
        vocab_size=len(tokenizer), n_positions=run.length, n_embd=run.hidden, n_layer=run.layers, n_head=run.heads, n_inner=4 * run.hidden,
        activation_function="gelu_new" if run.arch == "gpt2-gelu" else "relu", tie_word_embeddings=run.arch == "gpt2-tied", bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
    )


def model_config(run: SuiteRun, tokenizer):
    """The run's architecture (``arch``) at its size."""
    return gpt2_config(run, tokenizer) if run.arch.startswith("gpt2") else neox_config(run, tokenizer)


def new_model(run: SuiteRun, tokenizer):
    """A freshly initialized model of the run (its family's own initializer, seeded by the caller), with its token and
    position embeddings drawn from ``N(0, embed_std²)`` where the run sets ``embed_std``."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_config(model_config(run, tokenizer))
    if run.embed_std:
        embeddings = [model.get_input_embeddings()] + ([model.transformer.wpe] if run.arch.startswith("gpt2") else [])
        with torch.no_grad():
            for table in embeddings:
                table.weight.normal_(0.0, run.embed_std)
    return model


def parameter_count(run: SuiteRun) -> int:
    """Parameters of a run's model (embeddings included)."""
    import torch

    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(model_config(run, run_tokenizer(run)))
    return sum(p.numel() for p in model.parameters())


def _save_checkpoint(run: SuiteRun, step: int, model, tokenizer, optimizer, seconds: float, loss: float | None = None) -> None:
    import torch

    def fill(folder: Path) -> None:
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        torch.save(optimizer.state_dict(), folder / "optimizer.pt")
        (folder / "training.json").write_text(json.dumps({"run": asdict(run), "step": step, "training_seconds": seconds, "loss": loss}, indent=1))

    atomic_folder(run.checkpoint(step), fill)


def _last_checkpoint(run: SuiteRun) -> int | None:
    done = [s for s in run.schedule() if (run.checkpoint(s) / "training.json").exists()]
    return max(done) if done else None


def load_optimizer_state(path: Path) -> dict:
    """An optimizer's saved state, unpickled with ``weights_only=True`` (tensors and plain values: no pickled code
    runs), allowing the numpy scalars a learning-rate schedule leaves in the parameter groups."""
    import torch

    scalar = np.float64(0).__reduce__()[0]  # the function numpy pickles its scalars with, reached without a private module
    scalars = [scalar, np.dtype, type(np.dtype(np.float64))]
    with torch.serialization.safe_globals(scalars):
        return torch.load(path, weights_only=True)


def train(run: SuiteRun, retrain: bool = False, monitor=None) -> list[Path]:
    """Train ``run`` (or resume it from its last checkpoint); return its checkpoint folders in step order.

    ``retrain`` deletes the run's cached checkpoints first. Wall time is recorded in each checkpoint's
    ``training.json`` (cumulative seconds of training, resumed runs included). ``monitor`` (an
    :class:`~attncoda.engine.monitor.AttentionMonitor`) observes step 0 and every checkpoint while the run trains; a
    resumed run keeps its observations up to the checkpoint it resumes from. A run already trained is not observed:
    :func:`observe_checkpoints` replays its saved checkpoints instead.
    """
    import torch

    schedule = run.schedule()
    if retrain:
        shutil.rmtree(run.folder(), ignore_errors=True)
    last = _last_checkpoint(run)
    if last == run.steps:
        return [run.checkpoint(s) for s in schedule]
    from .cache import refuse_when_cache_only

    refuse_when_cache_only(f"training run {run.name}")
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(TRAINING_THREADS)
    try:
        _train(run, last, schedule, monitor)
    finally:
        torch.set_num_threads(previous_threads)
    return [run.checkpoint(s) for s in schedule]


def make_optimizer(run: SuiteRun, parameters):
    """AdamW (β = 0.9, 0.95) or SGD with momentum 0.9, at the run's peak rate and weight decay."""
    import torch

    if run.optimizer == "sgd":
        return torch.optim.SGD(parameters, lr=run.learning_rate, momentum=0.9, weight_decay=run.weight_decay)
    return torch.optim.AdamW(parameters, lr=run.learning_rate, betas=(0.9, 0.95), weight_decay=run.weight_decay)


def _train(run: SuiteRun, last: int | None, schedule: list[int], monitor=None) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    tokenizer = run_tokenizer(run)
    batch = batches(run, tokenizer)
    torch.manual_seed(run.seed)
    model = new_model(run, tokenizer).to(run.device)
    optimizer = make_optimizer(run, model.parameters())
    seconds = 0.0
    if last is not None:
        state = run.checkpoint(last)
        model = AutoModelForCausalLM.from_pretrained(state).to(run.device)
        optimizer = make_optimizer(run, model.parameters())
        optimizer.load_state_dict(load_optimizer_state(state / "optimizer.pt"))
        seconds = json.loads((state / "training.json").read_text())["training_seconds"]
        report(f"{run.name}: resuming at step {last}")
        if monitor is not None:
            monitor.resume(last)
    else:
        _save_checkpoint(run, 0, model, tokenizer, optimizer, 0.0)
        last = 0
        if monitor is not None:
            monitor.restart()
            monitor.observe(model, 0)
    model.train()
    steps = Steps(f"{run.name}: training steps", run.steps - last)
    started = time.perf_counter()
    watching = 0.0  # seconds the monitor took, left out of the run's training time
    losses = []  # batch losses since the last checkpoint
    for step in range(last, run.steps):
        losses.append(train_step(model, optimizer, run, batch, step))
        done = step + 1
        if done in schedule:
            _save_checkpoint(run, done, model, tokenizer, optimizer, seconds + time.perf_counter() - started - watching, float(np.mean(losses)))
            losses = []
            if monitor is not None:
                watch_started = time.perf_counter()
                monitor.observe(model, done)
                watching += time.perf_counter() - watch_started
        if done % 100 == 0 or done == run.steps:
            steps.step(done - last)


def train_step(model, optimizer, run: SuiteRun, batch, step: int) -> float:
    """One optimizer step of ``run`` at ``step``: the scheduled rate, the batch ``batch(step)`` on the model's device,
    the run's precision (bfloat16 autocast on that device, its products on :func:`~.bf16_products.products_path`, or
    float32), gradients clipped to norm 1. Returns the batch's loss."""
    import contextlib

    import torch

    from .bf16_products import bf16_products

    for group in optimizer.param_groups:
        group["lr"] = learning_rate(step, run)
    device = next(model.parameters()).device
    ids, labels = (torch.as_tensor(x).to(device) for x in batch(step))
    bf16 = run.precision == "bf16"
    with bf16_products(device) if bf16 else contextlib.nullcontext():
        with torch.autocast(device.type, dtype=torch.bfloat16) if bf16 else contextlib.nullcontext():
            loss = model(input_ids=ids, labels=labels).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
    return float(loss.detach())


def observe_checkpoints(run: SuiteRun, monitor) -> None:
    """Have ``monitor`` observe every saved checkpoint of a trained ``run``, in step order, from a fresh log: the same
    weights it would have seen during training, for a run trained before it was watched."""
    from transformers import AutoModelForCausalLM

    monitor.restart()
    for step in run.schedule():
        monitor.observe(AutoModelForCausalLM.from_pretrained(run.checkpoint(step)).to(run.device), step)


def training_device() -> str:
    """Where the suite trains: the CPU, or the one device ``--device-map`` names (``auto``: the first GPU when there is
    one). A map that spreads a model over several devices does not fit a model this small; it trains on the CPU."""
    import torch

    from .models import load_options

    _, device_map = load_options()
    if device_map == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device_map and re.fullmatch(r"(cuda|mps|xpu)(:\d+)?", device_map):
        return device_map
    return "cpu"


def checkpoint_loss(folder: Path) -> float | None:
    """The mean training loss over the steps that led to a checkpoint from the one before (None at step 0, or for a
    checkpoint saved before losses were recorded)."""
    return json.loads((Path(folder) / "training.json").read_text()).get("loss")


def training_seconds(run: SuiteRun) -> float:
    """Cumulative training wall time of a finished run, as recorded in its final checkpoint."""
    return float(json.loads((run.checkpoint(run.steps) / "training.json").read_text())["training_seconds"])


SUITE_SIZES = {"s": (64, 4, 4), "m": (96, 4, 6)}
"""The suite's sizes: ``name: (hidden width, layers, heads)``; both have 4 layers and heads of width 16."""
SUITE_SEEDS = (0, 1)


def suite(steps: int = SUITE_STEPS, seeds=SUITE_SEEDS, length: int = WINDOW_LENGTH) -> list[SuiteRun]:
    """Every run of the suite: each size of :data:`SUITE_SIZES` with each seed."""
    return [SuiteRun(size, *shape, seed=seed, steps=steps, length=length) for size, shape in SUITE_SIZES.items() for seed in seeds]
