"""The default op set's portable root ops and the evidence for each (step 4's data).

`generator.pipeline.opset` chooses the op set; this module holds only what it chooses from
by default, each operator with the model or torch.nn layer that calls it.
"""

from __future__ import annotations

#: The portable root ops of the default op set: what the model zoo (tests/fixtures/zoo/, issue
#: 18) and the common torch.nn layers lower to, read from their programs with
#: extras/tools/et_pte.py (torch 2.13.0, executorch 1.5.1 wheel, plain `exir.to_edge`; int8
#: models with the Cortex-M quantizer and passes). Kernel selection (issue 8) links only the
#: kernels a sketch's model.h selects, so an op here costs a sketch's flash nothing unless its
#: model calls it; what it costs is compile time and download size (benchmarks/bench_opset.py).
#:
#: The evidence, row by row, is `DEFAULT_OP_EVIDENCE` below.
#:
#: nn.TransformerEncoderLayer and nn.MultiheadAttention (issue 31) are taken whole: what their
#: mask handling calls (any, eq.Scalar_out, full_like, logical_not, mul.Scalar_out; with a
#: boolean mask, in a plain `to_edge` export, scalar_tensor; with is_causal=True, full and
#: logical_and, and in a plain `to_edge` export arange.start_out, le.Scalar_out) is in the
#: set, for both layers' options (batch_first, norm_first, activation relu or gelu) and
#: masks (none, a key padding mask, a boolean or float attention mask, both). Not probed:
#: nn.TransformerDecoderLayer and nn.Transformer. What the 9 operators cost (2026-12-03,
#: `build` at cff6f4dd, the default library before and after): 52 -> 60 op sources
#: (mul.Scalar_out is op_mul.cpp's), 152 -> 161 sources compiled, 457 -> 468 files and
#: 4,573,089 -> 4,618,104 B on disk (+1.0%). The cold first compile was not measured
#: (benchmarks/bench_opset.py was not run: the machine was shared by several builds).
#:
#: Not taken: every portable op (`--all-ops`, 172 op sources against this set's 60) is not the
#: default: its first compile was not measured (benchmarks/bench_opset.py measures this set
#: against the previous one), and with 2.9 times this set's op sources it could not stay
#: within issue 18's target of twice the previous first compile unless op sources were nearly
#: free, which they are not (see the benchmark).
#: The layer probe that made the rows of the layers is
#: `python tests/fixtures/zoo/export_zoo.py --layers`.
#:
#: dim_order_ops are not optional: the Cortex-M lowering emits _clone_dim_order in place of
#: aten::clone for channels-last models.
DEFAULT_ROOT_OPS: tuple[str, ...] = (
    # today's (0.2.0's) set: the int8 Cortex-M CNN's portable ops
    "aten::add.out",
    "aten::mul.out",
    "aten::sub.out",
    "aten::div.out",
    "aten::view_copy.out",
    "aten::permute_copy.out",
    "aten::clone.out",
    "aten::cat.out",
    "aten::slice_copy.Tensor_out",
    "aten::_softmax.out",
    "aten::mean.out",
    "aten::relu.out",
    "dim_order_ops::_clone_dim_order.out",
    "dim_order_ops::_to_dim_order_copy.out",
    # the zoo's float models
    "aten::addmm.out",
    "aten::bmm.out",
    "aten::convolution.out",
    "aten::max_pool2d_with_indices.out",
    "aten::_native_batch_norm_legit_no_training.out",
    "aten::native_layer_norm.out",
    "aten::gelu.out",
    "aten::sigmoid.out",
    "aten::tanh.out",
    "aten::full.out",
    "aten::expand_copy.out",
    "aten::select_copy.int_out",
    "aten::split_with_sizes_copy.out",
    "aten::squeeze_copy.dims_out",
    "aten::unsqueeze_copy.out",
    # the common torch.nn layers' (table above)
    "aten::mm.out",
    "aten::avg_pool2d.out",
    "aten::_adaptive_avg_pool2d.out",
    "aten::hardtanh.out",
    "aten::leaky_relu.out",
    "aten::elu.out",
    "aten::clamp.out",
    "aten::_log_softmax.out",
    "aten::native_group_norm.out",
    "aten::upsample_nearest2d.vec_out",
    "aten::constant_pad_nd.out",
    "aten::exp.out",
    "aten::log1p.out",
    "aten::gt.Scalar_out",
    "aten::where.self_out",
    "aten::sum.IntList_out",
    "aten::sqrt.out",
    "aten::abs.out",
    "aten::embedding.out",
    "aten::argmax.out",
    "aten::max.dim_max",
    "aten::topk.values",
    "aten::upsample_bilinear2d.vec_out",
    # nn.TransformerEncoderLayer and nn.MultiheadAttention (issue 31): their mask handling
    "aten::any.out",
    "aten::eq.Scalar_out",
    "aten::full_like.out",
    "aten::logical_not.out",
    "aten::mul.Scalar_out",
    "aten::logical_and.out",
    "aten::scalar_tensor.out",
    "aten::arange.start_out",
    "aten::le.Scalar_out",
)

#: The portable root ops of the default op set before issue 18 (0.2.0 and earlier): the
#: baseline benchmarks/bench_opset.py compares with (`build --ops` takes them).
PREVIOUS_ROOT_OPS: tuple[str, ...] = (
    "aten::add.out",
    "aten::mul.out",
    "aten::sub.out",
    "aten::div.out",
    "aten::view_copy.out",
    "aten::permute_copy.out",
    "aten::clone.out",
    "aten::cat.out",
    "aten::slice_copy.Tensor_out",
    "aten::_softmax.out",
    "aten::mean.out",
    "aten::relu.out",
    "dim_order_ops::_clone_dim_order.out",
    "dim_order_ops::_to_dim_order_copy.out",
)


#: Why each root op of `DEFAULT_ROOT_OPS` is there: a model of the zoo or a torch.nn layer ->
#: the portable operators its program calls (read with extras/tools/et_pte.py from its
#: export with torch 2.13.0 and the executorch 1.5.1 wheel; the layers by
#: `python tests/fixtures/zoo/export_zoo.py --layers`). The int8 models of the zoo (Int8Mlp,
#: Int8Conv) call Cortex-M ops, which every default library registers, and
#: dim_order_ops::_clone_dim_order.
DEFAULT_OP_EVIDENCE: dict[str, tuple[str, ...]] = {
    "the previous default (0.2.0): an int8 Cortex-M CNN's portable ops": PREVIOUS_ROOT_OPS,
    "zoo Mlp: nn.Linear, ReLU": ("aten::addmm.out", "aten::permute_copy.out", "aten::relu.out"),
    "zoo Cnn: conv2d, ReLU, max pool, linear, softmax": (
        "aten::convolution.out",
        "aten::max_pool2d_with_indices.out",
        "aten::addmm.out",
        "aten::permute_copy.out",
        "aten::relu.out",
        "aten::_softmax.out",
    ),
    "zoo Gru: nn.GRU, linear (zoo Lstm: the same without sub)": (
        "aten::addmm.out",
        "aten::add.out",
        "aten::sub.out",
        "aten::mul.out",
        "aten::sigmoid.out",
        "aten::tanh.out",
        "aten::cat.out",
        "aten::full.out",
        "aten::permute_copy.out",
        "aten::select_copy.int_out",
        "aten::slice_copy.Tensor_out",
        "aten::split_with_sizes_copy.out",
        "aten::squeeze_copy.dims_out",
        "aten::unsqueeze_copy.out",
    ),
    "zoo Norms: conv2d, BatchNorm2d/1d (eval), mean, LayerNorm": (
        "aten::convolution.out",
        "aten::_native_batch_norm_legit_no_training.out",
        "aten::mean.out",
        "aten::native_layer_norm.out",
    ),
    "zoo Activations: GELU, SiLU (x * sigmoid), sigmoid, tanh": (
        "aten::gelu.out",
        "aten::mul.out",
        "aten::sigmoid.out",
        "aten::tanh.out",
        "aten::cat.out",
    ),
    "zoo Attention: linear, matmul, transpose, softmax": (
        "aten::addmm.out",
        "aten::bmm.out",
        "aten::div.out",
        "aten::expand_copy.out",
        "aten::permute_copy.out",
        "aten::view_copy.out",
        "aten::_softmax.out",
    ),
    "nn.Linear(bias=False), 2-D torch.matmul": ("aten::mm.out", "aten::permute_copy.out"),
    "nn.Linear on a 3-D input": (
        "aten::addmm.out",
        "aten::permute_copy.out",
        "aten::view_copy.out",
    ),
    "nn.Conv1d, nn.ConvTranspose2d": ("aten::convolution.out",),
    "nn.MaxPool1d": (
        "aten::max_pool2d_with_indices.out",
        "aten::squeeze_copy.dims_out",
        "aten::unsqueeze_copy.out",
    ),
    "nn.AvgPool2d": ("aten::avg_pool2d.out",),
    "nn.AdaptiveAvgPool2d(1) (a mean), nn.AdaptiveAvgPool2d(2)": (
        "aten::mean.out",
        "aten::_adaptive_avg_pool2d.out",
    ),
    "nn.ReLU6": ("aten::hardtanh.out",),
    "nn.LeakyReLU": ("aten::leaky_relu.out",),
    "nn.ELU": ("aten::elu.out",),
    "nn.Hardswish, nn.Hardsigmoid": (
        "aten::add.out",
        "aten::clamp.out",
        "aten::div.out",
        "aten::mul.out",
        "dim_order_ops::_to_dim_order_copy.out",
    ),
    "nn.Softplus, nn.Mish": (
        "aten::div.out",
        "aten::exp.out",
        "aten::gt.Scalar_out",
        "aten::log1p.out",
        "aten::mul.out",
        "aten::tanh.out",
        "aten::where.self_out",
    ),
    "nn.LogSoftmax": ("aten::_log_softmax.out",),
    "nn.GroupNorm": ("aten::native_group_norm.out",),
    "nn.Upsample (nearest)": ("aten::upsample_nearest2d.vec_out",),
    "nn.Dropout (eval), nn.Flatten": ("aten::view_copy.out", "dim_order_ops::_clone_dim_order.out"),
    "torch.clamp": ("aten::clamp.out",),
    "F.pad (constant)": ("aten::constant_pad_nd.out",),
    "torch.exp(x).sum(-1)": ("aten::exp.out", "aten::sum.IntList_out"),
    "torch.sqrt(abs(x))": ("aten::abs.out", "aten::sqrt.out"),
    "nn.Embedding": ("aten::embedding.out",),
    "torch.argmax": ("aten::argmax.out",),
    "torch.max(x, dim)": ("aten::max.dim_max",),
    "torch.topk": ("aten::topk.values",),
    "nn.Upsample (bilinear)": ("aten::upsample_bilinear2d.vec_out",),
    "zoo Transformer: nn.TransformerEncoderLayer(16, 2, 32), default arguments (batch_first, "
    "norm_first: the same; activation gelu: gelu.out for relu.out; need_weights=False "
    "nn.MultiheadAttention: the mask ops)": (
        "aten::_softmax.out",
        "aten::add.out",
        "aten::addmm.out",
        "aten::any.out",
        "aten::bmm.out",
        "aten::eq.Scalar_out",
        "aten::expand_copy.out",
        "aten::full_like.out",
        "aten::logical_not.out",
        "aten::mul.Scalar_out",
        "aten::native_layer_norm.out",
        "aten::permute_copy.out",
        "aten::relu.out",
        "aten::select_copy.int_out",
        "aten::squeeze_copy.dims_out",
        "aten::unsqueeze_copy.out",
        "aten::where.self_out",
        "dim_order_ops::_clone_dim_order.out",
    ),
    "zoo Mha: nn.MultiheadAttention(16, 2), a boolean causal attn_mask, need_weights=True": (
        "aten::_softmax.out",
        "aten::add.out",
        "aten::addmm.out",
        "aten::bmm.out",
        "aten::full_like.out",
        "aten::mul.out",
        "aten::permute_copy.out",
        "aten::scalar_tensor.out",
        "aten::select_copy.int_out",
        "aten::squeeze_copy.dims_out",
        "aten::unsqueeze_copy.out",
        "aten::where.self_out",
        "dim_order_ops::_clone_dim_order.out",
    ),
    "nn.TransformerEncoderLayer, nn.MultiheadAttention: a boolean key padding or attention "
    "mask (src_key_padding_mask, src_mask, key_padding_mask, attn_mask; plain to_edge)": (
        "aten::scalar_tensor.out",
        "aten::where.self_out",
    ),
    "nn.TransformerEncoderLayer(is_causal=True) with a causal src_mask (plain to_edge: "
    "arange, le, scalar_tensor, sub too)": (
        "aten::full.out",
        "aten::logical_and.out",
        "aten::arange.start_out",
        "aten::le.Scalar_out",
        "aten::scalar_tensor.out",
        "aten::sub.out",
    ),
}
