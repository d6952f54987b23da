"""Which PyTorch construct produced each operator of an exported program.

    operator_origins(executorch_program_manager.exported_program().graph_module)
    -> {"aten::any.out": "nn.MultiheadAttention 'self_attn' (F.multi_head_attention_forward(...))"}

A `.pte` keeps no trace of the model's source, but the graph torch.export made does: each
node's `meta["nn_module_stack"]` (module path -> (path, type), outermost first) and
`meta["stack_trace"]` (the Python lines that called it, innermost last), which
ExecuTorch's passes carry into the program `to_executorch` returns (checked with torch
2.13.0 and the executorch 1.5.1 wheel). export_model.py names them in a refusal
(`et_checks.problem_lines`), so a user reads which layer needs an operator the library
lacks. Imports nothing: it reads the graph it is given.
"""

from __future__ import annotations

from typing import Any

#: How many constructs a line names for one operator before "and N more".
MAX_ORIGINS = 2
#: Module type prefixes shortened in what is printed ("torch.nn.modules.activation.X" -> "nn.X").
_TORCH_NN = "torch.nn.modules."


def kernel_name(target: Any) -> str | None:
    """The kernel's full name ("aten::any.out", as a .pte names its operators) of a graph
    node's `target`, or None for a target that is no operator overload (a getitem, a
    delegate call)."""
    schema = getattr(target, "_schema", None)
    name = getattr(schema, "name", None)
    if not isinstance(name, str):
        return None
    overload = getattr(schema, "overload_name", "")
    return f"{name}.{overload}" if overload else name


def construct(meta: Any) -> str | None:
    """What a node's `meta` says produced it: the innermost module (type, and its path in
    quotes unless it is the model itself), then the innermost line of the stack trace in
    parentheses; None when the meta names neither."""
    stack = meta.get("nn_module_stack") if hasattr(meta, "get") else None
    parts = []
    if isinstance(stack, dict) and stack:
        path, kind = list(stack.values())[-1]
        kind = str(getattr(kind, "__qualname__", kind))
        if kind.startswith(_TORCH_NN):
            kind = "nn." + kind.rsplit(".", 1)[-1]
        parts.append(f"{kind} '{path}'" if path else kind)
    trace = meta.get("stack_trace") if hasattr(meta, "get") else None
    if isinstance(trace, str) and trace.strip():
        line = trace.strip().splitlines()[-1].strip()
        if line:
            parts.append(f"({line[:80]}{'...' if len(line) > 80 else ''})")
    return " ".join(parts) or None


def operator_origins(graph_module: Any) -> dict[str, str]:
    """Each kernel the graph calls -> the constructs that produced it (`construct`), the
    first MAX_ORIGINS distinct ones in graph order, then "and N more"; an operator whose
    nodes carry no meta is left out.

    Args:
        graph_module: a torch.fx GraphModule, e.g. the ExecutorchProgramManager's
            `exported_program().graph_module` (out-variant kernels, as the .pte names them).
    """
    found: dict[str, list[str]] = {}
    for node in graph_module.graph.nodes:
        if node.op != "call_function":
            continue
        name = kernel_name(node.target)
        what = construct(node.meta) if name else None
        if name and what and what not in found.setdefault(name, []):
            found[name].append(what)
    origins = {}
    for name, whats in found.items():
        if not whats:
            continue
        more = len(whats) - MAX_ORIGINS
        origins[name] = "; ".join(whats[:MAX_ORIGINS]) + (f"; and {more} more" if more > 0 else "")
    return origins
