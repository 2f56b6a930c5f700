#!/usr/bin/env python3
"""Regenerates the Weights & Biases run logs under tests/golden/wandb/ that lrkit's W&B reader is tested on.

Run with a Python that imports google.protobuf and crcmod (on Debian: python3-protobuf, python3-crcmod):
    python3 tests/golden/make_wandb.py [OUTPUT_DIR]   (default: wandb/ beside this script)
    python3 tests/golden/make_wandb.py --check COMMITTED_DIR   (the suite's check: the same bytes)

wandb is not packaged in Debian, so no W&B writer is at hand. The records are built by the protobuf library from
descriptors that transcribe the field numbers of wandb/proto/wandb_internal.proto (Record, HistoryRecord,
HistoryItem, ConfigRecord, MetricRecord, RunRecord and the others a run writes), and framed as
wandb/sdk/internal/datastore.py frames them: the 7-byte header (":W&B", 0xBEE1, version 0), then LevelDB's log
format in 32 KiB blocks counted from the file's start, each chunk's checksum zlib's CRC-32 of its type byte and data.
The rows are the ones each logger gives wandb.log: Hugging Face's WandbCallback (define_metric("train/global_step"),
define_metric("*", step_metric="train/global_step", step_sync=True), then every logging step train/loss,
train/grad_norm, train/learning_rate, train/epoch and train/global_step; its TrainingArguments in the config), as
the handler writes them with _step, _runtime and _timestamp; Lightning's WandbLogger (trainer/global_step); a plain
loop's wandb.log(..., step=step). Times are fixed, so the bytes are the same on every run.
"""
import json
import math
import struct
import zlib

from google.protobuf import descriptor_pb2, message_factory

from make_tfevents import add_message, hf_cosine_rate, main

F = descriptor_pb2.FieldDescriptorProto


def _messages():
    """Record, HistoryRecord, ... as protobuf classes, with wandb_internal.proto's field numbers."""
    proto = descriptor_pb2.FileDescriptorProto(name="lrkit_wandb_internal.proto", package="wandb_internal",
                                               syntax="proto3")

    def message(name, *fields, oneof=None):
        add_message(proto, name, *fields, oneof=oneof)

    def item(name):  # HistoryItem, ConfigItem, SummaryItem
        message(name, ("key", 1, F.TYPE_STRING), ("nested_key", 2, F.TYPE_STRING, "repeated"),
                ("value_json", 16, F.TYPE_STRING))

    message("Timestamp", ("seconds", 1, F.TYPE_INT64), ("nanos", 2, F.TYPE_INT32))  # google.protobuf.Timestamp
    message("HistoryStep", ("num", 1, F.TYPE_INT64))
    item("HistoryItem")
    message("HistoryRecord", ("item", 1, F.TYPE_MESSAGE, "repeated", ".wandb_internal.HistoryItem"),
            ("step", 2, F.TYPE_MESSAGE, ".wandb_internal.HistoryStep"))
    item("ConfigItem")
    message("ConfigRecord", ("update", 1, F.TYPE_MESSAGE, "repeated", ".wandb_internal.ConfigItem"),
            ("remove", 2, F.TYPE_MESSAGE, "repeated", ".wandb_internal.ConfigItem"))
    item("SummaryItem")
    message("SummaryRecord", ("update", 1, F.TYPE_MESSAGE, "repeated", ".wandb_internal.SummaryItem"))
    message("OutputRecord", ("output_type", 1, F.TYPE_INT32), ("timestamp", 2, F.TYPE_MESSAGE,
                                                                ".wandb_internal.Timestamp"),
            ("line", 3, F.TYPE_STRING))
    message("StatsItem", ("key", 1, F.TYPE_STRING), ("value_json", 16, F.TYPE_STRING))
    message("StatsRecord", ("stats_type", 1, F.TYPE_INT32),
            ("timestamp", 2, F.TYPE_MESSAGE, ".wandb_internal.Timestamp"),
            ("item", 3, F.TYPE_MESSAGE, "repeated", ".wandb_internal.StatsItem"))
    message("MetricOptions", ("step_sync", 1, F.TYPE_BOOL), ("hidden", 2, F.TYPE_BOOL), ("defined", 3, F.TYPE_BOOL))
    message("MetricRecord", ("name", 1, F.TYPE_STRING), ("glob_name", 2, F.TYPE_STRING),
            ("step_metric", 4, F.TYPE_STRING), ("options", 6, F.TYPE_MESSAGE, ".wandb_internal.MetricOptions"))
    message("RunRecord", ("run_id", 1, F.TYPE_STRING), ("entity", 2, F.TYPE_STRING), ("project", 3, F.TYPE_STRING),
            ("config", 4, F.TYPE_MESSAGE, ".wandb_internal.ConfigRecord"), ("run_group", 6, F.TYPE_STRING),
            ("display_name", 8, F.TYPE_STRING),
            ("start_time", 17, F.TYPE_MESSAGE, ".wandb_internal.Timestamp"))
    message("RunExitRecord", ("exit_code", 1, F.TYPE_INT32), ("runtime", 2, F.TYPE_INT32))
    for empty in ("FinalRecord", "HeaderRecord", "FooterRecord"):
        message(empty)
    kinds = {"history": (2, "HistoryRecord"), "summary": (3, "SummaryRecord"), "output": (4, "OutputRecord"),
             "config": (5, "ConfigRecord"), "stats": (7, "StatsRecord"), "metric": (12, "MetricRecord"),
             "run": (17, "RunRecord"), "exit": (18, "RunExitRecord"), "final": (20, "FinalRecord"),
             "header": (21, "HeaderRecord"), "footer": (22, "FooterRecord")}
    message("Record", ("num", 1, F.TYPE_INT64),
            *[(kind, number, F.TYPE_MESSAGE, ".wandb_internal." + name) for kind, (number, name) in kinds.items()],
            ("uuid", 19, F.TYPE_STRING), oneof=("record_type", set(kinds)))
    classes = message_factory.GetMessages([proto])
    return {name.split(".")[-1]: cls for name, cls in classes.items()}


M = _messages()
BLOCK, HEADER = 32768, 7
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def _chunk(data, kind):
    return struct.pack("<IHB", zlib.crc32(data, zlib.crc32(bytes([kind]))) & 0xFFFFFFFF, len(data), kind) + data


class RunLog:
    """One run's .wandb file, its records framed as DataStore._write_data frames them."""

    def __init__(self, start_time):
        self.data = bytearray(struct.pack("<4sHB", b":W&B", 0xBEE1, 0))
        self.num = 0
        self.clock = start_time
        self.start_time = start_time
        self.step = 0  # the handler's _step: one per committed row

    def _frame(self, s):
        space = BLOCK - len(self.data) % BLOCK
        if space < HEADER:
            self.data += b"\x00" * space
            space = BLOCK
        if len(s) + HEADER <= space:
            self.data += _chunk(s, FULL)
            return
        room = space - HEADER
        self.data += _chunk(s[:room], FIRST)
        used = room
        while len(s) - used > BLOCK - HEADER:
            self.data += _chunk(s[used:used + BLOCK - HEADER], MIDDLE)
            used += BLOCK - HEADER
        self.data += _chunk(s[used:], LAST)

    def record(self, **kind):
        self.num += 1
        self._frame(M["Record"](num=self.num, **kind).SerializeToString())

    def tick(self, seconds=0.5):
        self.clock += seconds
        return M["Timestamp"](seconds=int(self.clock), nanos=int(round((self.clock % 1) * 1e9)))

    def begin(self, run_id, project, config, name=None, group=""):
        self.record(header=M["HeaderRecord"]())
        self.record(run=M["RunRecord"](run_id=run_id, project=project, display_name=name or run_id, run_group=group,
                                       start_time=self.tick(0.0)))
        self.record(config=M["ConfigRecord"](update=[M["ConfigItem"](key=k, value_json=json.dumps(v))
                                                     for k, v in config.items()]))

    def define_metric(self, name=None, glob=None, step_metric=None, step_sync=False):
        self.record(metric=M["MetricRecord"](name=name or "", glob_name=glob or "", step_metric=step_metric or "",
                                             options=M["MetricOptions"](step_sync=step_sync, defined=True)))

    def log(self, row, step=None):
        """wandb.log(row) (step=: wandb.log(row, step=step)): the handler's row, with _step, _runtime, _timestamp."""
        self.step = self.step if step is None else step
        self.tick()
        items = [M["HistoryItem"](key=k, value_json=json.dumps(v)) for k, v in row.items()]
        items += [M["HistoryItem"](key="_step", value_json=json.dumps(self.step)),
                  M["HistoryItem"](key="_runtime", value_json=json.dumps(round(self.clock - self.start_time, 3))),
                  M["HistoryItem"](key="_timestamp", value_json=json.dumps(self.clock))]
        self.record(history=M["HistoryRecord"](item=items, step=M["HistoryStep"](num=self.step)))
        self.step += 1

    def stats(self):
        self.record(stats=M["StatsRecord"](timestamp=self.tick(), item=[
            M["StatsItem"](key="gpu.0.gpu", value_json="97.5"), M["StatsItem"](key="cpu", value_json="12.25")]))

    def output(self, line):
        self.record(output=M["OutputRecord"](output_type=1, timestamp=self.tick(), line=line))

    def end(self, summary):
        self.record(summary=M["SummaryRecord"](update=[M["SummaryItem"](key=k, value_json=json.dumps(v))
                                                       for k, v in summary.items()]))
        self.record(exit=M["RunExitRecord"](exit_code=0, runtime=int(self.clock - self.start_time)))
        self.record(final=M["FinalRecord"]())
        self.record(footer=M["FooterRecord"]())


def hf_run():
    """A Trainer run (get_cosine_schedule_with_warmup, 20 warmup of max_steps=200, logging every 10 steps,
    evaluating every 50) reported to W&B. Its config, TrainingArguments and the model's, is over 32 KiB, as a model
    with many labels makes it: the record spans blocks (FIRST, MIDDLE, LAST chunks)."""
    log = RunLog(1764201600.0)
    config = {"learning_rate": 5e-4, "max_steps": 200, "warmup_steps": 20, "lr_scheduler_type": "cosine",
              "logging_steps": 10, "eval_steps": 50, "num_train_epochs": 3.0, "per_device_train_batch_size": 8,
              "id2label": {str(i): "LABEL_%d" % i for i in range(3500)}}
    log.begin("lrkhf001", "lrkit-golden", config)
    log.define_metric(name="train/global_step")
    log.define_metric(glob="*", step_metric="train/global_step", step_sync=True)
    log.output("  0%|          | 0/200 [00:00<?, ?it/s]")
    for step in range(10, 201, 10):
        log.log({"train/loss": 3.0 / (1.0 + step / 50.0), "train/grad_norm": 0.5 + 2.0 / math.sqrt(step),
                 "train/learning_rate": hf_cosine_rate(step, 5e-4, 20, 200), "train/epoch": step / 100.0,
                 "train/global_step": step})
        if step % 50 == 0:
            log.log({"eval/loss": 2.0 / (1.0 + step / 50.0), "eval/runtime": 1.5, "train/epoch": step / 100.0,
                     "train/global_step": step})
        if step % 40 == 0:
            log.stats()
    log.log({"train/train_runtime": 61.5, "train/train_loss": 1.25, "train/epoch": 2.0, "train/global_step": 200})
    log.end({"train/global_step": 200, "train/learning_rate": 0.0})
    return log


def lightning_run():
    """Lightning's WandbLogger with a LearningRateMonitor: lr-AdamW at every step, the loss every 5 steps, each row
    with trainer/global_step; a linear warmup (10 steps) and linear decay over 60 steps, epochs deciding the length
    (max_steps -1)."""
    log = RunLog(1764300000.0)
    log.begin("lrkpl002", "lrkit-golden", {"max_steps": -1, "max_epochs": 3, "lr": 1e-3})
    log.define_metric(name="trainer/global_step")
    log.define_metric(glob="*", step_metric="trainer/global_step", step_sync=True)
    for step in range(60):
        rate = 1e-3 * (step / 10 if step < 10 else (60 - step) / 50)
        log.log({"lr-AdamW": rate, "trainer/global_step": step})
        if step % 5 == 4:
            log.log({"train_loss": 2.0 - step / 100.0, "epoch": step // 20, "trainer/global_step": step})
    log.end({"trainer/global_step": 59})
    return log


def plain_loop():
    """A plain loop's wandb.log({"lr": ..., "loss": ...}, step=step) at every update, without define_metric; its
    loss diverges to NaN at update 30, and update 35 logs lr=None (JSON null: no value). (wandb_series_test.cpp cuts
    it at every length.)"""
    log = RunLog(1764400000.0)
    log.begin("lrkpy003", "lrkit-golden", {"lr": 0.1})
    for step in range(40):
        rate = 0.1 * (step / 5 if step < 5 else 0.5 * (1.0 + math.cos(math.pi * (step - 5) / 35)))
        loss = float("nan") if step >= 30 else 2.0 - step / 50.0
        log.log({"lr": None if step == 35 else rate, "loss": loss}, step=step)
    log.end({"loss": float("nan")})
    return log


def ddp_rank_signals(rank, step):
    """Rank `rank`'s loss, gradient norm and cosine to the mean gradient at `step` of ddp_runs(): a small spread
    across 4 ranks (exact decimals, so that the reader's test recomputes them), until rank 2's data goes bad at step
    25: its loss rises above the others' and its gradient turns away from theirs."""
    wobble = ((7 * step + 3 * rank) % 11 - 5) / 1000.0
    bad = rank == 2 and step >= 25
    loss = 2.5 - step / 100.0 + wobble + (0.5 if bad else 0.0)
    grad_norm = 1.0 + wobble * 4 + (1.5 if bad else 0.0)
    cos_to_mean = 0.8 - abs(wobble) * 10 - (0.7 if bad else 0.0)
    return loss, grad_norm, cos_to_mean


def ddp_runs():
    """W&B's "track each process separately": every rank of a 4-rank DDP loop calls wandb.init(group="lrkit-ddp",
    config={"rank": rank, ...}) and logs its own loss, gradient norm and cosine with wandb.log(..., step=step), 40
    steps, an evaluation's loss every 10. The ranks started out of rank order (rank 3 first), and W&B made up their
    names. Rank 2 goes bad at step 25 (ddp_rank_signals)."""
    runs = {}
    names = ["gentle-wave-12", "bright-moon-13", "calm-field-14", "swift-cloud-11"]
    for rank in range(4):
        run_id = "lrkdp00%d" % rank
        log = RunLog(1764500000.0 + (3 - rank))
        log.begin(run_id, "lrkit-golden", {"rank": rank, "world_size": 4, "lr": 3e-4}, name=names[rank],
                  group="lrkit-ddp")
        for step in range(40):
            loss, grad_norm, cos_to_mean = ddp_rank_signals(rank, step)
            row = {"loss": loss, "grad_norm": grad_norm, "cos_to_mean": cos_to_mean}
            if step % 10 == 9:  # W&B merges what one step logs into one row
                row["eval/loss"] = 2.0 - step / 200.0
            log.log(row, step=step)
        log.end({"loss": loss})
        runs["ddp/wandb/run-20261130_12000%d-%s/run-%s.wandb" % (3 - rank, run_id, run_id)] = bytes(log.data)
    return runs


def files():
    """Each golden file: its path under the output directory, and its bytes."""
    out = {"hf_output/wandb/run-20261127_000000-lrkhf001/run-lrkhf001.wandb": bytes(hf_run().data),
           "lightning/wandb/run-20261128_040000-lrkpl002/run-lrkpl002.wandb": bytes(lightning_run().data)}
    out["loop/run-lrkpy003.wandb"] = bytes(plain_loop().data)
    out.update(ddp_runs())
    return out


if __name__ == "__main__":
    main(files, "wandb", "make_wandb.py")
