#!/usr/bin/env python3
"""Export a PyTorch model to the .pte and the model.h a sketch includes, in one step.

    python3 extras/tools/export_model.py MODULE:FACTORY --input-shape 1x8 [-o DIR]
    python3 extras/tools/export_model.py my/models.py:make_mlp --input 1x8 --quantize int8
    python3 extras/tools/export_model.py --exported model.pt2 [--pte FILE] [--header FILE]

The model is a `torch.nn.Module` built by FACTORY, a class or function of MODULE called with no
arguments (MODULE is an importable module, looked up from the current folder too, or a .py
file), or an `ExportedProgram` saved with `torch.export.save`. Its example inputs are random
tensors of the shapes given (`--input-shape 1x8,1x4:int64`: one per input, float32 unless a
`:DTYPE` follows; seeded, so every run exports the same program) or the tensors of a file
saved with `torch.save` (`--example-inputs inputs.pt`: a tensor, or a tuple or list of them).

It exports with `torch.export.export`, then:

* float (default): `executorch.exir.to_edge_transform_and_lower` with no partitioner, its
  constants folded (`constant_prop_pass`: a Linear's transposed weight is a constant in
  flash, not computed into the arena), then `to_executorch`: every operator runs on the
  library's portable kernels.
* `--quantize int8`: the Cortex-M recipe of ExecuTorch's examples/arduino/export_model.py
  (at cff6f4dd): `CortexMQuantizer` with `prepare_pt2e`/`convert_pt2e` (torchao), calibrated
  on `--calibration FILE.pt` (a list of input tuples or tensors) or, without it, on the example
  inputs and 64 seeded samples uniform in [-1, 1) of their shapes (give real data for a real
  model), then `to_edge` with the Cortex-M compile config and `CortexMPassManager` for the
  `--cpu`: the quantized operators run on CMSIS-NN; the inputs and outputs stay float.

The .pte (DIR/model.pte, or --pte) and its model.h (DIR/model.h, or --header; written by
pte_to_header.header_for, the code pte_to_header.py writes it with) are written together,
only when both succeed. Run from a generated library (LIBRARY/extras/tools/), the program is
first checked against that library as pte_to_header.py checks it (operators, argument counts,
dtypes, delegates; `--no-check` skips it). When the installed `executorch` was not built from
the library's pin, a line after the check says what follows (pte_to_header.pin_message): a
note that nothing needs installing when the check passed, else what to install.

Needs torch and the executorch wheel (with torchao for --quantize int8); the rest of
extras/tools/ needs only the Python standard library. Exit status: 0 written, 1 the model
check refused the program, 2 bad input (the model, its inputs, the options) or a failed export.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import io
import logging
import os
import sys
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import et_model_h  # these from this script's own folder (sys.path above)
import et_origins
import et_pte
import pte_to_header

#: The program file written beside model.h unless --pte names another.
MODEL_PTE = "model.pte"
#: Samples the int8 calibration draws when no --calibration is given.
CALIBRATION_SAMPLES = 64
#: The seed of the example inputs and calibration samples (the same program on every run).
SEED = 0
#: --input-shape dtypes, by the names torch gives them.
DTYPES = ("float32", "float16", "int8", "uint8", "int16", "int32", "int64", "bool")
#: --cpu values -> the member of executorch.backends.cortex_m.target_config.CortexM (the ref's
#: export_model.py --target; the UNO Q's STM32U585 is a Cortex-M33).
CPUS = {"cortex-m33": "M33", "cortex-m55": "M55"}


class ExportError(Exception):
    """Bad input or a failed export; the message (one line) says what to fix."""


class _ListAction(argparse.Action):
    """Comma-separated and/or repeated values, like every list option of the generator
    (generator/cli/lists.py): `--input-shape 1x8,1x4 --input-shape 2` is three inputs. Unlike
    there, a repeated value is kept: two inputs may have one shape."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        current: list[str] = list(getattr(namespace, self.dest, None) or [])
        parts = [part.strip() for part in str(values).split(",")]
        if not any(parts):
            parser.error(f"{option_string} was given no value; name at least one or leave it out")
        current += [part for part in parts if part]
        setattr(namespace, self.dest, current)


@dataclass(frozen=True)
class InputSpec:
    """One example input: `shape` (dimensions) and `dtype` (a name of DTYPES)."""

    shape: tuple[int, ...]
    dtype: str


def parse_input_spec(text: str) -> InputSpec:
    """`1x8`, `1x3x32x32:float32`, `4:int64` as an InputSpec.

    Raises:
        ExportError: not dimensions joined by x (each a positive integer), or an unknown dtype.
    """
    dims, _, dtype = text.partition(":")
    dtype = dtype.strip() or "float32"
    parts = dims.strip().lower().split("x")
    if not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ExportError(
            f"--input-shape {text!r}: a shape is positive dimensions joined by x, e.g. 1x8 or "
            "1x3x32x32, optionally followed by :DTYPE"
        )
    if dtype not in DTYPES:
        raise ExportError(
            f"--input-shape {text!r}: dtype {dtype!r} is not one of {', '.join(DTYPES)}"
        )
    return InputSpec(tuple(int(p) for p in parts), dtype)


# ---------------------------------------------------------------------------------------
# The model


def _import_file(path: Path) -> ModuleType:
    """Import the .py file `path` as a module (its folder on sys.path, for its own imports)."""
    if not path.is_file():
        raise ExportError(
            f"no file {path}: MODULE:FACTORY names an importable module or a .py file"
        )
    sys.path.insert(0, str(path.resolve().parent))
    name = path.stem if path.stem.isidentifier() and path.stem not in sys.modules else "user_model"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ExportError(f"{path} cannot be imported as Python (is it a .py file?)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_factory(spec: str) -> Callable[[], Any]:
    """The callable `spec` (MODULE:FACTORY, FACTORY may be dotted: Class.create) names.

    Raises:
        ExportError: `spec` has no `:`, the module is not found or fails to import, it has
            no such attribute, or the attribute is not callable.
    """
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not all(p.isidentifier() for p in attr.split(".")):
        raise ExportError(
            f"{spec!r} is not MODULE:FACTORY, e.g. mymodels:make_mlp or path/to/models.py:MLP "
            "(a class or function that builds the model with no arguments)"
        )
    is_file = module_name.endswith(".py") or "/" in module_name or os.sep in module_name
    try:
        if is_file:
            module = _import_file(Path(module_name))
        else:
            sys.path.insert(0, os.getcwd())
            module = importlib.import_module(module_name)
    except ExportError:
        raise
    except ModuleNotFoundError as e:
        if e.name and module_name.split(".")[0] == e.name.split(".")[0]:
            raise ExportError(
                f"no module {module_name}: run from the folder holding {e.name}.py, or give "
                f"the file's path (path/to/{module_name.split('.')[-1]}.py:{attr})"
            ) from None
        raise ExportError(f"importing {module_name} failed: {_one_line(e)}") from None
    except BaseException as e:  # the user's code: anything it raises is an import failure
        if isinstance(e, KeyboardInterrupt):
            raise
        raise ExportError(f"importing {module_name} failed: {_one_line(e)}") from None
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            names = sorted(n for n in dir(module) if not n.startswith("_"))
            shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
            raise ExportError(f"{module_name} has no {attr} (it defines {shown or 'nothing'})")
        target = getattr(target, part)
    if not callable(target):
        raise ExportError(
            f"{spec} is a {type(target).__name__}, not callable: name a class or function that "
            "builds the model with no arguments"
        )
    return target  # type: ignore[no-any-return]


def build_model(spec: str) -> Any:
    """The model `spec` (MODULE:FACTORY) builds, in eval mode: a torch.nn.Module or an
    ExportedProgram.

    Raises:
        ExportError: see `load_factory`; the factory raises, or returns something else.
    """
    import torch

    factory = load_factory(spec)
    try:
        model = factory()
    except Exception as e:
        hint = (
            ": FACTORY is called with no arguments; name a function that builds the model"
            if isinstance(e, TypeError)
            else ""
        )
        raise ExportError(f"{spec}() failed: {_one_line(e)}{hint}") from None
    if isinstance(model, torch.export.ExportedProgram):
        return model
    if not isinstance(model, torch.nn.Module):
        raise ExportError(
            f"{spec}() returned a {type(model).__name__}, not a torch.nn.Module or an "
            "ExportedProgram"
        )
    return model.eval()


def load_exported(path: Path) -> Any:
    """The ExportedProgram `torch.export.save` wrote to `path`.

    Raises:
        ExportError: the file is missing or not a saved ExportedProgram.
    """
    import torch

    if not path.is_file():
        raise ExportError(f"no file {path}: --exported takes a file torch.export.save wrote")
    try:
        return torch.export.load(str(path))
    except Exception as e:
        raise ExportError(
            f"{path} is not an ExportedProgram saved by torch.export.save: {_one_line(e)}"
        ) from None


# ---------------------------------------------------------------------------------------
# Inputs


def random_inputs(specs: list[InputSpec], generator: Any) -> tuple[Any, ...]:
    """One tensor per spec: float uniform in [-1, 1), integers in [0, 2), bool False."""
    import torch

    tensors = []
    for spec in specs:
        dtype = getattr(torch, spec.dtype)
        if dtype.is_floating_point:
            tensors.append((torch.rand(spec.shape, generator=generator) * 2 - 1).to(dtype))
        elif dtype == torch.bool:
            tensors.append(torch.zeros(spec.shape, dtype=dtype))
        else:
            tensors.append(torch.randint(0, 2, spec.shape, generator=generator, dtype=dtype))
    return tuple(tensors)


def _as_inputs(value: Any, where: str) -> tuple[Any, ...]:
    """A tensor, or a tuple or list of tensors, as a tuple of inputs."""
    import torch

    items = (value,) if isinstance(value, torch.Tensor) else value
    if not isinstance(items, (tuple, list)) or not all(isinstance(t, torch.Tensor) for t in items):
        raise ExportError(
            f"{where} holds a {type(value).__name__}, not a tensor or a tuple of tensors"
        )
    return tuple(items)


def load_tensors(path: Path, option: str) -> Any:
    """What `torch.save` wrote to `path` (loaded with weights_only: tensors and containers).

    Raises:
        ExportError: the file is missing or not such a file.
    """
    import torch

    if not path.is_file():
        raise ExportError(f"no file {path} ({option} takes a file torch.save wrote)")
    try:
        return torch.load(str(path), weights_only=True)
    except Exception as e:
        raise ExportError(
            f"{option} {path}: not a torch.save file of tensors: {_one_line(e)}"
        ) from None


def example_inputs(args: argparse.Namespace, model: Any) -> tuple[Any, ...]:
    """The example inputs: --example-inputs, else --input-shape, else (an ExportedProgram)
    the example inputs it was exported with.

    Raises:
        ExportError: none of them, or a malformed one.
    """
    import torch

    if args.example_inputs is not None:
        path = Path(args.example_inputs)
        return _as_inputs(load_tensors(path, "--example-inputs"), str(path))
    if args.input_shape:
        specs = [parse_input_spec(s) for s in args.input_shape]
        return random_inputs(specs, torch.Generator().manual_seed(SEED))
    recorded = getattr(model, "example_inputs", None)
    if isinstance(model, torch.export.ExportedProgram) and recorded:
        positional, keywords = recorded
        if keywords:
            raise ExportError(
                "the ExportedProgram takes keyword inputs; export it with positional ones"
            )
        return tuple(positional)
    raise ExportError(
        "give the example inputs: --input-shape 1x8 (one shape per input, comma-separated) or "
        "--example-inputs FILE.pt"
    )


def calibration_inputs(args: argparse.Namespace, inputs: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """The samples the int8 quantizer observes: --calibration, else the example inputs and
    CALIBRATION_SAMPLES seeded samples of their shapes and dtypes.

    Raises:
        ExportError: --calibration is not a list of inputs.
    """
    import torch

    if args.calibration is not None:
        path = Path(args.calibration)
        data = load_tensors(path, "--calibration")
        if not isinstance(data, (list, tuple)) or not data:
            raise ExportError(
                f"--calibration {path} holds no list of samples (a list of input tuples)"
            )
        return [_as_inputs(sample, f"a sample of {path}") for sample in data]
    specs = [InputSpec(tuple(t.shape), str(t.dtype).replace("torch.", "")) for t in inputs]
    generator = torch.Generator().manual_seed(SEED + 1)
    return [inputs, *(random_inputs(specs, generator) for _ in range(CALIBRATION_SAMPLES))]


# ---------------------------------------------------------------------------------------
# The export


def _module(name: str) -> ModuleType:
    """Import an exporter module; a missing package is bad input, said how to fix."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise ExportError(
            f"cannot import {name} ({_one_line(e)}): install the executorch wheel of the library's "
            "pin and what it needs (pip install executorch==VERSION torchao; see the library "
            'README, "Export your own model")'
        ) from None


def _export(model: Any, inputs: tuple[Any, ...]) -> Any:
    """torch.export.export of `model` (an ExportedProgram passes through)."""
    import torch

    if isinstance(model, torch.export.ExportedProgram):
        return model
    return torch.export.export(model, inputs)


def _program_bytes(program: Any, origins: dict[str, str] | None) -> bytes:
    """The .pte of the ExecutorchProgramManager `program`; fills `origins` (when given) with
    what produced each operator (`et_origins.operator_origins`), for a refusal to name."""
    if origins is not None:
        origins.update(et_origins.operator_origins(program.exported_program().graph_module))
    return bytes(program.buffer)


def export_float(
    model: Any, inputs: tuple[Any, ...], origins: dict[str, str] | None = None
) -> bytes:
    """The .pte of `model` lowered to portable operators (no partitioner), its constants
    folded (`fold_constants`); `origins`, when given, gets each operator's PyTorch construct
    (`et_origins.operator_origins`).

    Raises:
        ExportError: the exporter does not import. Anything torch.export or exir raise.
    """
    exir = _module("executorch.exir")
    edge = exir.to_edge_transform_and_lower(_export(model, inputs))
    return _program_bytes(fold_constants(edge).to_executorch(), origins)


def fold_constants(edge: Any) -> Any:
    """`edge` (an exir EdgeProgramManager) with every method's constant subgraphs computed at
    export (`executorch.exir.passes.constant_prop_pass`, executorch 1.5.1 wheel; also at
    cff6f4dd): nn.Linear lowers to permute_copy(weight) + addmm/mm, and without this the
    transposed weight is computed at run time into the memory plan, so the arena holds a
    second copy of every weight (a 256x256 Linear: 264,865 B of arena instead of 2,493 B,
    the permuted weight then a constant in the program, in flash). What a graph computes
    from its inputs is not changed: the folded ops are the same kernels run once, on the
    host (PyTorch's), so outputs are bit-identical. Returns the same manager, changed.
    """
    constant_prop_pass = _module("executorch.exir.passes.constant_prop_pass").constant_prop_pass
    for method in edge.methods:
        # As export_int8 replaces the method's program (the ref's export_model.py does too).
        edge._edge_programs[method] = constant_prop_pass(edge.exported_program(method))
    return edge


def quantize_int8(model: Any, inputs: tuple[Any, ...], calibration: list[tuple[Any, ...]]) -> Any:
    """`model` quantized to int8 by ExecuTorch's Cortex-M quantizer: the pt2e-converted
    torch.fx.GraphModule (`CortexMQuantizer`, `prepare_pt2e`, calibrated on every sample of
    `calibration` in order, `convert_pt2e(fold_quantize=True)`, then
    `DuplicateDynamicQuantChainPass`), the first half of `export_int8`. Calling it runs the
    quantized arithmetic in PyTorch (the reference a board's output is compared with).

    Convolutions are annotated only on channels-last tensors (the quantizer's rule): a
    caller with image inputs converts the model and its tensors first, as
    tests/fixtures/zoo/export_zoo.py does.

    Raises:
        ExportError: the exporter does not import. Anything torch.export or torchao raise.
    """
    cortex_m = "executorch.backends.cortex_m"
    quantizer = _module(f"{cortex_m}.quantizer.quantizer").CortexMQuantizer
    duplicate_dq = _module(
        "executorch.backends.transforms.duplicate_dynamic_quant_chain"
    ).DuplicateDynamicQuantChainPass
    pt2e = _module("torchao.quantization.pt2e.quantize_pt2e")
    import torch

    # No guard submodule (_guards_fn): the Cortex-M passes refuse call_module nodes.
    captured = _export(model, inputs).module(check_guards=False)
    prepared = pt2e.prepare_pt2e(captured, quantizer())
    with torch.no_grad():
        for sample in calibration:
            prepared(*sample)
    converted = pt2e.convert_pt2e(prepared, fold_quantize=True)
    duplicate_dq()(converted)
    return converted


def lower_int8(converted: Any, inputs: tuple[Any, ...], cpu: str) -> Any:
    """The exir EdgeProgramManager of `converted` (`quantize_int8`'s) for the Cortex-M `cpu`
    (a key of CPUS): `to_edge` with the Cortex-M compile config, then `CortexMPassManager`
    (the quantized operators become cortex_m:: ones, run on CMSIS-NN); the second half of
    `export_int8`. `.to_executorch().buffer` is the .pte.

    Raises:
        ExportError: the exporter does not import. Anything torch.export or exir raise.
    """
    cortex_m = "executorch.backends.cortex_m"
    edge_config = _module(f"{cortex_m}.edge_compile_config").cortex_m_edge_compile_config
    pass_manager = _module(f"{cortex_m}.passes.cortex_m_pass_manager").CortexMPassManager
    target = _module(f"{cortex_m}.target_config")
    exir = _module("executorch.exir")
    import torch

    edge = exir.to_edge(torch.export.export(converted, inputs), compile_config=edge_config())
    passes = pass_manager(
        edge.exported_program(),
        pass_manager.pass_list,
        target_config=target.CortexMTargetConfig(cpu=getattr(target.CortexM, CPUS[cpu])),
    )
    # As the ref's export_model.py does: the Cortex-M passes' program replaces the method's.
    edge._edge_programs["forward"] = passes.transform()
    return edge


def export_int8(
    model: Any,
    inputs: tuple[Any, ...],
    calibration: list[tuple[Any, ...]],
    cpu: str,
    origins: dict[str, str] | None = None,
) -> bytes:
    """The .pte of `model` quantized to int8 for the Cortex-M `cpu` (a key of CPUS):
    `lower_int8(quantize_int8(...))`; `origins` as `export_float`'s.

    The recipe of ExecuTorch's examples/arduino/export_model.py (cff6f4dd, `export_model`);
    the one recipe of this repository (tests/fixtures/zoo/export_zoo.py and
    tests/e2e/test_e2e_user_model.py, which runs it on the emulated board, call these functions).

    Raises:
        ExportError: the exporter does not import. Anything torch.export, torchao or exir
            raise.
    """
    edge = lower_int8(quantize_int8(model, inputs, calibration), inputs, cpu)
    return _program_bytes(edge.to_executorch(), origins)


# ---------------------------------------------------------------------------------------
# Writing


#: Write the .pte and model.h together (no half files; links and special files as
#: pte_to_header writes them).
_write_together = pte_to_header.write_together


def _one_line(e: BaseException) -> str:
    """`Type: first line of the message` of an exception."""
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def _parser() -> argparse.ArgumentParser:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "model",
        nargs="?",
        metavar="MODULE:FACTORY",
        help="the class or function building the torch.nn.Module (called with no arguments); "
        "MODULE is an importable module or a .py file",
    )
    parser.add_argument(
        "--exported", metavar="FILE.pt2", help="a saved ExportedProgram instead (torch.export.save)"
    )
    parser.add_argument(
        "--input-shape",
        "--input",
        action=_ListAction,
        default=None,
        metavar="SHAPE[:DTYPE]",
        help=f"one example input per shape, e.g. 1x8 or 1x3x32x32:float32 (dtypes: "
        f"{', '.join(DTYPES)}; comma-separated; the option may be repeated)",
    )
    parser.add_argument(
        "--example-inputs", metavar="FILE.pt", help="the example inputs, a torch.save file instead"
    )
    parser.add_argument(
        "--quantize",
        choices=("int8",),
        default=None,
        help="int8: the Cortex-M quantizer (CMSIS-NN kernels); default: float, portable kernels",
    )
    parser.add_argument(
        "--calibration",
        metavar="FILE.pt",
        help="int8 calibration samples: a torch.save list of input tuples (default: the example "
        f"inputs and {CALIBRATION_SAMPLES} random samples uniform in [-1, 1))",
    )
    parser.add_argument(
        "--cpu", choices=tuple(CPUS), default="cortex-m33", help="int8 target (cortex-m33)"
    )
    parser.add_argument(
        "-o",
        "--output-dir",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="where model.pte and model.h go (the current folder)",
    )
    parser.add_argument(
        "--pte", type=Path, default=None, help=f"the .pte to write (DIR/{MODEL_PTE})"
    )
    parser.add_argument(
        "--header",
        type=Path,
        default=None,
        help=f"the header to write (DIR/{et_model_h.MODEL_HEADER})",
    )
    parser.add_argument(
        "--name", default=et_model_h.MODEL_ARRAY, help=f"C array name ({et_model_h.MODEL_ARRAY})"
    )
    parser.add_argument(
        "--reader",
        type=Path,
        default=None,
        help="check against the library of this program reader, LIBRARY/extras/tools/pte_schema "
        "(default: the library holding this script)",
    )
    parser.add_argument(
        "--no-check",
        action="store_true",
        help="write even when the model check refuses the program",
    )
    parser.add_argument(
        "--traceback", action="store_true", help="on a failure, print Python's whole report too"
    )
    return parser


def _exported(args: argparse.Namespace, origins: dict[str, str]) -> bytes:
    """The .pte bytes of the model the options name (see `main`); fills `origins`
    (`export_float`).

    Raises:
        ExportError: bad input, or the export failed (its first line).
    """
    model = build_model(args.model) if args.model else load_exported(Path(args.exported))
    what = args.model or args.exported
    dynamic = getattr(model, "range_constraints", None) if args.exported else None
    if args.quantize == "int8" and dynamic:
        # The int8 recipe exports the model again at the example inputs' shapes.
        ranges = ", ".join(sorted(f"{k} in [{v.lower}, {v.upper}]" for k, v in dynamic.items()))
        raise ExportError(
            f"--quantize int8 makes a program of static shapes, and {what} has dynamic "
            f"dimensions ({ranges}): export it without --quantize, or save it with static shapes"
        )
    inputs = example_inputs(args, model)
    try:
        if args.quantize == "int8":
            data = export_int8(model, inputs, calibration_inputs(args, inputs), args.cpu, origins)
        else:
            data = export_float(model, inputs, origins)
    except ExportError:
        raise
    except Exception as e:
        if args.traceback:
            traceback.print_exc()
        raise ExportError(
            f"exporting {what} failed: {_one_line(e)} (--traceback prints the whole report)"
        ) from None
    return data


def _run(args: argparse.Namespace) -> int:
    """Export, check and write as `main` says; raises ExportError for bad input."""
    if bool(args.model) == bool(args.exported):
        raise ExportError("give the model: MODULE:FACTORY or --exported FILE.pt2 (one of them)")
    if args.calibration and args.quantize != "int8":
        raise ExportError("--calibration is for --quantize int8")
    if not et_model_h.is_c_identifier(args.name):
        raise ExportError(f"--name {args.name!r} is not a C identifier (letters, digits, _)")
    if args.input_shape:
        for spec in args.input_shape:
            parse_input_spec(spec)  # shape syntax before the slow imports
    pte = args.pte or args.output_dir / MODEL_PTE
    header_path = args.header or args.output_dir / et_model_h.MODEL_HEADER
    for path in (pte, header_path):  # before the export, which takes a while
        if (folder := pte_to_header.file_in_the_way(path)) is not None:
            raise ExportError(f"cannot write {path}: {folder} is a file, not a folder")
    reader = args.reader or (
        pte_to_header.DEFAULT_READER if pte_to_header.DEFAULT_READER.is_dir() else None
    )
    if args.reader is not None:
        try:
            et_pte.load_reader(args.reader)
        except et_pte.EtPteError as e:
            raise ExportError(f"--reader: {e}") from None
    library = pte_to_header.library_of(reader) if reader is not None else None
    if importlib.util.find_spec("torch") is None:
        raise ExportError(
            "torch is not installed: pip install torch and the executorch wheel of the library's "
            'pin (see the library README, "Export your own model")'
        )
    # torch's, torchao's and executorch's own logging, warnings and prints (a failed export
    # prints its graph) would bury the one line this tool prints; --traceback keeps them.
    origins: dict[str, str] = {}
    quiet = (
        contextlib.nullcontext() if args.traceback else contextlib.redirect_stderr(io.StringIO())
    )
    if not args.traceback:
        logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings(), quiet:
            if not args.traceback:
                warnings.simplefilter("ignore")
            data = _exported(args, origins)
    finally:
        logging.disable(logging.NOTSET)
    what = args.model or args.exported
    try:
        header = pte_to_header.header_for(
            data,
            source=pte.name,
            name=args.name,
            reader=reader,
            check=not args.no_check,
            origins=origins,
        )
    except pte_to_header.Refused as e:
        pte_to_header.print_pin_message(library, "refused")
        print(f"error: {e}", file=sys.stderr)
        return 1
    pte_to_header.print_pin_message(library, "passed" if header.checked else "unchecked")
    try:
        _write_together([(pte, data), (header_path, header.text.encode("utf-8"))])
    except OSError as e:
        raise ExportError(f"cannot write {e.filename or pte}: {e.strerror or e}") from None
    kind = f"int8 for the {args.cpu}" if args.quantize else "float, portable kernels"
    print(f"{pte}: {len(data)} bytes, {kind}, exported from {what}")
    if header.library is None:
        checked = (
            "; not checked (no library's program reader: --reader LIBRARY/extras/tools/pte_schema)"
        )
    elif args.no_check:
        checked = "; not checked (--no-check)"
    else:
        checked = f"; checked against {header.library}"
    print(f"{header_path}: {args.name}[{len(data)}] from {pte.name}{header.summary}{checked}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 written, 1 refused by the model check, 2 bad input
    or a failed export)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except ExportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
