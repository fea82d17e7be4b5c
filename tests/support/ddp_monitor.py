"""Train a tiny causal LM for a few steps with transformers' Trainer, watched by the attention monitor; run by
``torchrun --nproc_per_node 2`` (the gloo backend on the CPU) from tests/engine/test_monitor.py.

Usage: ddp_monitor.py MODEL_FOLDER LOG TENSORBOARD_FOLDER STEPS"""

import sys

import torch
import transformers as tf

from attncoda.engine.monitor import AttentionMonitor


def main(folder: str, log: str, board: str, steps: int) -> None:
    model = tf.AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager")
    ids = torch.randint(8, 60, (16, 12), generator=torch.Generator().manual_seed(0))
    data = [{"input_ids": x, "labels": x} for x in ids]
    args = tf.TrainingArguments(output_dir=f"{log}.out", max_steps=steps, per_device_train_batch_size=2, logging_steps=1, report_to=[],
                                save_strategy="no", use_cpu=True, ddp_backend="gloo", seed=0, disable_tqdm=True)
    trainer = tf.Trainer(model=model, args=args, train_dataset=data)
    monitor = AttentionMonitor(log, probe=ids[:2], every=1, tensorboard=board)
    monitor.attach(trainer)
    trainer.train()
    if trainer.is_world_process_zero():
        logged = [h for h in trainer.state.log_history if "attention/entropy" in h]
        print(f"LOGGED {len(logged)}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
