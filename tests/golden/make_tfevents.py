#!/usr/bin/env python3
"""Regenerates the TensorBoard event files under tests/golden/tfevents/ that lrkit's event-file reader is tested on.

Run with a Python that imports google.protobuf and crcmod (on Debian: python3-protobuf, python3-crcmod):
    python3 tests/golden/make_tfevents.py [OUTPUT_DIR]   (default: tfevents/ beside this script)
    python3 tests/golden/make_tfevents.py --check COMMITTED_DIR   (the suite's check: the same bytes)

TensorBoard is not packaged in Debian, so no TensorBoard writer is at hand. The messages are built by the protobuf
library from descriptors that transcribe the field numbers of TensorBoard's own protos (tensorboard/compat/proto:
event.proto, summary.proto, tensor.proto, tensor_shape.proto), and framed as TFRecords (little-endian length, masked
CRC-32C of the length, the data, masked CRC-32C of the data) with crcmod's CRC-32C. The events are the ones PyTorch's
SummaryWriter writes (torch/utils/tensorboard: add_scalar's simple_value, new_style's float_val, double_precision's
double_val, purge_step's file_version and SessionLog START events), under the tags Hugging Face's Trainer gives them
(TensorBoardCallback: "train/" + the key, logged every logging_steps at the global step, after the scheduler stepped).
Wall times are fixed, so the bytes are the same on every run.
"""
import math
import os
import struct
import sys

import crcmod.predefined
from google.protobuf import descriptor_pb2, message_factory

F = descriptor_pb2.FieldDescriptorProto
_crc32c = crcmod.predefined.mkCrcFun("crc-32c")


def add_message(proto, name, *fields, oneof=None):
    """Adds message `name` to the FileDescriptorProto `proto`. Each field: (name, number, type, ["repeated"],
    [".package.Message"]); oneof: (its name, the fields in it), which are written even where they hold 0
    (simple_value=0)."""
    m = proto.message_type.add(name=name)
    if oneof:
        m.oneof_decl.add(name=oneof[0])
    for field_name, number, kind, *rest in fields:
        label = F.LABEL_REPEATED if "repeated" in rest else F.LABEL_OPTIONAL
        type_name = next((r for r in rest if r.startswith(".")), None)
        f = m.field.add(name=field_name, number=number, type=kind, label=label)
        if type_name:
            f.type_name = type_name
        if oneof and field_name in oneof[1]:
            f.oneof_index = 0
    return m


def _messages():
    """Event, Summary, TensorProto, ... as protobuf classes, with TensorBoard's field numbers."""
    proto = descriptor_pb2.FileDescriptorProto(name="lrkit_tb_events.proto", package="tensorboard", syntax="proto3")

    def message(name, *fields, oneof=None):
        return add_message(proto, name, *fields, oneof=oneof)

    message("Dim", ("size", 1, F.TYPE_INT64), ("name", 2, F.TYPE_STRING))
    message("TensorShapeProto", ("dim", 2, F.TYPE_MESSAGE, "repeated", ".tensorboard.Dim"))
    message("TensorProto", ("dtype", 1, F.TYPE_INT32),
            ("tensor_shape", 2, F.TYPE_MESSAGE, ".tensorboard.TensorShapeProto"),
            ("tensor_content", 4, F.TYPE_BYTES), ("float_val", 5, F.TYPE_FLOAT, "repeated"),
            ("double_val", 6, F.TYPE_DOUBLE, "repeated"), ("string_val", 8, F.TYPE_BYTES, "repeated"))
    message("PluginData", ("plugin_name", 1, F.TYPE_STRING), ("content", 2, F.TYPE_BYTES))
    message("SummaryMetadata", ("plugin_data", 1, F.TYPE_MESSAGE, ".tensorboard.PluginData"))
    message("Value", ("tag", 1, F.TYPE_STRING), ("simple_value", 2, F.TYPE_FLOAT),
            ("tensor", 8, F.TYPE_MESSAGE, ".tensorboard.TensorProto"),
            ("metadata", 9, F.TYPE_MESSAGE, ".tensorboard.SummaryMetadata"),
            oneof=("value", {"simple_value", "tensor"}))
    message("Summary", ("value", 1, F.TYPE_MESSAGE, "repeated", ".tensorboard.Value"))
    message("SessionLog", ("status", 1, F.TYPE_INT32))
    message("Event", ("wall_time", 1, F.TYPE_DOUBLE), ("step", 2, F.TYPE_INT64), ("file_version", 3, F.TYPE_STRING),
            ("summary", 5, F.TYPE_MESSAGE, ".tensorboard.Summary"),
            ("session_log", 7, F.TYPE_MESSAGE, ".tensorboard.SessionLog"),
            oneof=("what", {"file_version", "summary", "session_log"}))
    # proto3 repeated scalars are packed, as in TensorBoard's protos.
    classes = message_factory.GetMessages([proto])
    return {name.split(".")[-1]: cls for name, cls in classes.items()}


M = _messages()
DT_FLOAT, DT_DOUBLE, DT_STRING = 1, 2, 7
START = 1


def _masked(data):
    crc = _crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def record(data):
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", _masked(length)) + data + struct.pack("<I", _masked(data))


class EventFile:
    """The events of one writer session, in the order a SummaryWriter writes them."""

    def __init__(self, wall_time, purge_step=None):
        self.clock = wall_time
        self.events = [M["Event"](wall_time=self._tick(), file_version="brain.Event:2")]
        if purge_step is not None:  # SummaryWriter(purge_step=...)
            self.events.append(M["Event"](wall_time=self._tick(), step=purge_step, file_version="brain.Event:2"))
            self.events.append(M["Event"](wall_time=self._tick(), step=purge_step,
                                          session_log=M["SessionLog"](status=START)))

    def _tick(self):
        self.clock += 0.25
        return self.clock

    def value(self, step, value):
        self.events.append(M["Event"](wall_time=self._tick(), step=step, summary=M["Summary"](value=[value])))

    def scalar(self, step, tag, x):  # add_scalar(tag, x, step)
        self.value(step, M["Value"](tag=tag, simple_value=x))

    def tensor(self, step, tag, **tensor):  # add_scalar(..., new_style=True), or a tensor summary
        metadata = M["SummaryMetadata"](plugin_data=M["PluginData"](plugin_name="scalars"))
        self.value(step, M["Value"](tag=tag, tensor=M["TensorProto"](**tensor), metadata=metadata))

    def bytes(self):
        return b"".join(record(e.SerializeToString()) for e in self.events)


def hf_cosine_rate(step, peak, warmup, total):
    """transformers.get_cosine_schedule_with_warmup's rate at `step`."""
    if step < warmup:
        return peak * step / max(1, warmup)
    progress = (step - warmup) / max(1, total - warmup)
    return peak * max(0.0, 0.5 * (1.0 + math.cos(math.pi * 0.5 * 2.0 * progress)))


def hf_session(wall_time, steps, peak=5e-4, warmup=20, total=200, loss_offset=0.0):
    """What the Trainer's TensorBoardCallback writes: args as text first, then every logging step train/loss,
    train/grad_norm, train/learning_rate (the scheduler's rate after the step) and train/epoch, one event each."""
    f = EventFile(wall_time)
    f.tensor(0, "args/text_summary", dtype=DT_STRING, string_val=[b'{"learning_rate": 0.0005}'])
    for step in steps:
        f.scalar(step, "train/loss", 3.0 / (1.0 + step / 50.0) + loss_offset)
        f.scalar(step, "train/grad_norm", 0.5 + 2.0 / math.sqrt(step))
        f.scalar(step, "train/learning_rate", hf_cosine_rate(step, peak, warmup, total))
        f.scalar(step, "train/epoch", step / 100.0)
    if steps[-1] == total:
        f.scalar(total, "train/train_runtime", 61.5)
    return f


def loop_rate(step):
    """A plain loop's schedule: cosine(peak=0.1, warmup=10) over 80 updates, as LambdaLR gives it."""
    if step < 10:
        return 0.1 * step / 10
    return 0.1 * 0.5 * (1.0 + math.cos(math.pi * (step - 10) / 70))


def ddp_rank_signals(rank, step):
    """make_wandb.py's ddp_rank_signals: rank 2's data goes bad at step 25 of 40."""
    from make_wandb import ddp_rank_signals as signals
    return signals(rank, step)


def ddp_runs():
    """make_wandb.py's 4-rank DDP loop logged to TensorBoard, in the two layouts a loop gives it per-rank values in:
    - ddp/rank_K: each rank's SummaryWriter(f"ddp/rank_{rank}") logs its own loss, grad_norm and cos_to_mean with
      add_scalar at every step, and an evaluation's loss every 10; rank 3's writer opened first.
    - ddp_gathered: rank 0 gathers every rank's values (all_gather) and logs them with add_scalars("loss",
      {"0": ..., "3": ...}, step), likewise grad_norm and cos_to_mean; PyTorch's add_scalars puts each value into a
      run of its own below the writer's directory, named MAIN_KEY, under the tag MAIN (its file opened on first
      use, numbered after the writer's own), while the writer's own file logs the learning rate."""
    out = {}
    for rank in range(4):
        opened = 1764500000.0 + (3 - rank)
        f = EventFile(opened)
        for step in range(40):
            for tag, x in zip(("loss", "grad_norm", "cos_to_mean"), ddp_rank_signals(rank, step)):
                f.scalar(step, tag, x)
            if step % 10 == 9:
                f.scalar(step, "eval/loss", 2.0 - step / 200.0)
        out["ddp/rank_%d/events.out.tfevents.%d.node1.%d.0" % (rank, opened, 700 + rank)] = f
    opened = 1764600000.0
    main = EventFile(opened)
    gathered = {}
    for step in range(40):
        main.scalar(step, "lr", 3e-4)
        for k, tag in enumerate(("loss", "grad_norm", "cos_to_mean")):
            for rank in range(4):
                run = "%s_%d" % (tag, rank)
                if run not in gathered:
                    gathered[run] = (len(gathered) + 1, EventFile(opened + step))
                gathered[run][1].scalar(step, tag, ddp_rank_signals(rank, step)[k])
    out["ddp_gathered/events.out.tfevents.%d.node1.800.0" % opened] = main
    for run, (number, f) in gathered.items():
        out["ddp_gathered/%s/events.out.tfevents.%d.node1.800.%d" % (run, opened, number)] = f
    return out


def files():
    """Each golden file: its path under the output directory, and its bytes."""
    out = {}
    # One Trainer run, logging every 10 of 200 steps.
    out["hf_cosine/events.out.tfevents.1764201600.node1.4242.0"] = hf_session(1764201600.0, range(10, 201, 10))
    # The same run killed after its step-150 log and resumed from checkpoint-100 (its scheduler state loaded): the
    # second writer logs 110.. again, and TensorBoard shows the second session's rows from there on.
    out["hf_resumed/events.out.tfevents.1764201600.node1.4242.0"] = hf_session(1764201600.0, range(10, 151, 10))
    out["hf_resumed/events.out.tfevents.1764205200.node1.5151.0"] = hf_session(1764205200.0, range(110, 201, 10),
                                                                                loss_offset=0.01)
    # The run killed so again and resumed from checkpoint-100 with max_steps raised to 300: the Trainer's new
    # scheduler, built for 300 steps, takes the restored step 100 and runs the longer cosine from there.
    out["hf_extended/events.out.tfevents.1764201600.node1.4242.0"] = hf_session(1764201600.0, range(10, 151, 10))
    out["hf_extended/events.out.tfevents.1764205200.node1.5151.0"] = hf_session(1764205200.0, range(110, 301, 10),
                                                                                 total=300, loss_offset=0.01)
    # A plain loop logging every update with new-style (tensor) scalars, resumed at update 40 with
    # SummaryWriter(purge_step=40) by a loop that built its scheduler anew: its rates start over at 40.
    first = EventFile(1764300000.0)
    for step in range(0, 60):
        first.tensor(step, "lr", dtype=DT_FLOAT, float_val=[loop_rate(step)])
        first.tensor(step, "loss", dtype=DT_FLOAT, float_val=[2.0 - step / 100.0])
    second = EventFile(1764303600.0, purge_step=40)
    for step in range(40, 80):
        second.tensor(step, "lr", dtype=DT_DOUBLE, double_val=[loop_rate(step - 40)])
    out["restarted/events.out.tfevents.1764300000.node2.77.0"] = first
    out["restarted/events.out.tfevents.1764303600.node2.78.0"] = second
    # Every form a scalar takes in an event: simple_value; float_val and double_val (packed); tensor_content of one
    # float32 or float64; and tags that are no scalar (3 values; text).
    forms = EventFile(1764400000.0)
    scalar_shape = M["TensorShapeProto"]()
    for step in range(5):
        x = 0.25 * (step + 1)
        forms.scalar(step, "simple", x)
        forms.tensor(step, "float_val", dtype=DT_FLOAT, float_val=[x])
        forms.tensor(step, "double_val", dtype=DT_DOUBLE, double_val=[x / 3])
        forms.tensor(step, "float_content", dtype=DT_FLOAT, tensor_shape=scalar_shape,
                     tensor_content=struct.pack("<f", x))
        forms.tensor(step, "double_content", dtype=DT_DOUBLE, tensor_shape=scalar_shape,
                     tensor_content=struct.pack("<d", x / 3))
        forms.tensor(step, "vector", dtype=DT_FLOAT, float_val=[x, x, x],
                     tensor_shape=M["TensorShapeProto"](dim=[M["Dim"](size=3)]))
        forms.tensor(step, "note", dtype=DT_STRING, string_val=[b"step %d" % step])
    out["forms.tfevents"] = forms
    out.update(ddp_runs())
    return {path: f.bytes() for path, f in out.items()}


def write(directory, made):
    """Writes `made` (a files() result) under `directory`."""
    for path, data in made.items():
        full = os.path.join(directory, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)


def check(committed, made, script):
    """Exit status 1, naming the files, where the committed files are not `made` (what `script` writes)."""
    differing = []
    for path, data in made.items():
        try:
            with open(os.path.join(committed, path), "rb") as f:
                same = f.read() == data
        except OSError:
            same = False
        if not same:
            differing.append(path)
    if differing:
        sys.stderr.write("differ from what " + script + " writes: " + ", ".join(differing) + "\n")
        return 1
    return 0


def main(files_of, folder, script):
    """A golden-file generator's command line: [OUTPUT_DIR] writes (default: `folder` beside this script), --check
    [COMMITTED_DIR] compares."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), folder)
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2] if len(sys.argv) > 2 else here, files_of(), script))
    write(sys.argv[1] if len(sys.argv) > 1 else here, files_of())


if __name__ == "__main__":
    main(files, "tfevents", "make_tfevents.py")
