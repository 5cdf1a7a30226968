#!/usr/bin/python3
"""Writes the bad models of tests/onnx-ops-bad.test into DIR, one binary
.onnx file each, and prints one line per model: its file name, then a
tab, then a fragment the error must contain. Every model is bad in one
place, at a named node of the new operators (Resize, ConvTranspose,
LSTM/GRU/RNN, If, Loop, Pad modes, Slice of a symbolic dim)."""
import os
import sys

sys.dont_write_bytecode = True
import onnx  # noqa: E402
from onnx import TensorProto as T  # noqa: E402
from onnx import helper as h  # noqa: E402

out = sys.argv[1]
F = T.FLOAT


def vi(name, shape, t=F):
    return h.make_tensor_value_info(name, t, shape)


def ten(name, dims, vals, t=F):
    return h.make_tensor(name, t, dims, vals)


def save(fname, want, nodes, inputs, outputs, inits=(), opset=13):
    g = h.make_graph(nodes, "bad", inputs, outputs, list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, os.path.join(out, fname))
    print("%s\t%s" % (fname, want))


y = vi("y", None)
save("resize_mode.onnx", "node 'up' (Resize): unknown mode 'area'",
     [h.make_node("Resize", ["x", "", "sc"], ["y"], mode="area", name="up")],
     [vi("x", [1, 1, 4, 4])], [y], [ten("sc", [4], [1, 1, 2, 2])])
save("resize_ctm.onnx", "node 'up' (Resize): unknown coordinate_transformation_mode 'half'",
     [h.make_node("Resize", ["x", "", "sc"], ["y"], coordinate_transformation_mode="half", name="up")],
     [vi("x", [1, 1, 4, 4])], [y], [ten("sc", [4], [1, 1, 2, 2])])
save("convt_channels.onnx", "node 'deconv' (ConvTranspose)",
     [h.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], name="deconv")],
     [vi("x", [1, 3, 5, 5])], [y], [ten("w", [2, 4, 3, 3], [0.0] * 72)])
save("lstm_hidden.onnx", "node 'rnn' (LSTM)",
     [h.make_node("LSTM", ["x", "w", "r"], ["y"], hidden_size=3, name="rnn")],
     [vi("x", [4, 1, 2])], [y], [ten("w", [1, 12, 2], [0.0] * 24), ten("r", [1, 12, 5], [0.0] * 60)])
save("gru_direction.onnx", "node 'g' (GRU)",
     [h.make_node("GRU", ["x", "w", "r"], ["y"], hidden_size=2, direction="sideways", name="g")],
     [vi("x", [4, 1, 2])], [y], [ten("w", [1, 6, 2], [0.0] * 12), ten("r", [1, 6, 2], [0.0] * 12)])
then_g = h.make_graph([h.make_node("Identity", ["a"], ["t"])], "then", [], [vi("t", [2, 3])])
else_g = h.make_graph([h.make_node("ReduceSum", ["a"], ["e"], keepdims=0)], "else", [], [vi("e", [])])
save("if_ranks.onnx", "node 'branch' (If)",
     [h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g, name="branch")],
     [vi("c", [], T.BOOL), vi("a", [2, 3])], [y])
body = h.make_graph([h.make_node("Identity", ["cond_in"], ["cond_out"]), h.make_node("Add", ["v_in", "v_in"], ["v_out"])],
                    "body", [vi("i", [], T.INT64), vi("cond_in", [], T.BOOL), vi("v_in", [2])],
                    [vi("cond_out", [], T.BOOL), vi("v_out", [2])])
save("loop_runtime_count.onnx", "node 'steps' (Loop)",
     [h.make_node("Loop", ["n", "", "v"], ["y"], body=body, name="steps")],
     [vi("n", [], T.INT64), vi("v", [2])], [y])
save("pad_reflect_too_far.onnx", "node 'p' (Pad)",
     [h.make_node("Pad", ["x", "pads"], ["y"], mode="reflect", name="p")],
     [vi("x", [1, 3])], [y], [ten("pads", [4], [0, 3, 0, 0], T.INT64)])
save("pad_mode.onnx", "node 'p' (Pad): pad mode 'mirror' is not supported",
     [h.make_node("Pad", ["x", "pads"], ["y"], mode="mirror", name="p")],
     [vi("x", [1, 3])], [y], [ten("pads", [4], [0, 1, 0, 0], T.INT64)])
save("slice_symbolic_step.onnx", "node 's' (Slice): dim 1 of 'x' is symbolic (N)",
     [h.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"], name="s")],
     [vi("x", [2, "N"])], [y], [ten("st", [1], [-1], T.INT64), ten("en", [1], [-1000000], T.INT64),
                                ten("ax", [1], [1], T.INT64), ten("sp", [1], [-1], T.INT64)])

# --- one case per ConvTranspose, RNN/GRU/LSTM and Resize/Upsample message
# (scripts/check-diagnostics: every diagnostic is triggered by a test)
cx = [vi("x", [1, 2, 5, 5])]
cw = [ten("w", [2, 3, 3, 3], [0.0] * 54)]


def convt(fname, want, **attrs):
    save(fname, want, [h.make_node("ConvTranspose", ["x", "w"], ["y"], name="dc", **attrs)], cx, [y], cw)


convt("convt_strides_count.onnx", "node 'dc' (ConvTranspose): 'strides' has 1 values, but the input has 2 spatial dims",
      strides=[2])
convt("convt_strides_zero.onnx", "node 'dc' (ConvTranspose): 'strides' values must be positive", strides=[0, 1])
convt("convt_output_padding_neg.onnx", "node 'dc' (ConvTranspose): 'output_padding' values must be non-negative",
      output_padding=[-1, 0])
convt("convt_group.onnx", "node 'dc' (ConvTranspose): group 3 does not divide the 2 input channels", group=3)
convt("convt_kernel_shape.onnx", "node 'dc' (ConvTranspose): kernel_shape does not match the filter's shape",
      kernel_shape=[2, 2])
convt("convt_output_padding.onnx",
      "node 'dc' (ConvTranspose): output_padding 2 must be smaller than the stride or the dilation",
      strides=[2, 2], output_padding=[2, 0])
# SAME_MIDDLE was taken for SAME_UPPER (a prefix test)
convt("convt_auto_pad.onnx", "node 'dc' (ConvTranspose): unknown auto_pad 'SAME_MIDDLE'", auto_pad="SAME_MIDDLE")
convt("convt_output_shape_count.onnx", "node 'dc' (ConvTranspose): output_shape has 3 values for 2 spatial dims",
      output_shape=[5, 5, 5])
convt("convt_output_shape_huge.onnx", "node 'dc' (ConvTranspose): output extent 2199023255552 of spatial dim 0 is out of range",
      output_shape=[1 << 41, 5])
convt("convt_pads_count.onnx", "node 'dc' (ConvTranspose): 'pads' has 2 values, but 2 spatial dims need 4", pads=[1, 1])
convt("convt_pads_negative.onnx", "node 'dc' (ConvTranspose): negative pads are not supported", pads=[-1, 0, 0, 0])
save("convt_filter_rank.onnx", "node 'dc' (ConvTranspose): the filter has rank 3; the input's rank 4 needs 4",
     [h.make_node("ConvTranspose", ["x", "w"], ["y"], name="dc")], cx, [y], [ten("w", [2, 3, 3], [0.0] * 18)])
save("convt_filter_symbolic.onnx", "node 'dc' (ConvTranspose): the filter's shape must be static",
     [h.make_node("ConvTranspose", ["x", "w"], ["y"], name="dc")], cx + [vi("w", ["C", 3, 3, 3])], [y])

rw = [ten("w", [1, 3, 2], [0.0] * 6), ten("r", [1, 3, 3], [0.0] * 9)]


def rnn(fname, want, x=None, inits=None, **attrs):
    save(fname, want, [h.make_node("RNN", ["x", "w", "r"], ["y"], name="rn", **attrs)],
         x or [vi("x", [4, 1, 2])], [y], rw if inits is None else inits)


rnn("rnn_activation.onnx", "node 'rn' (RNN): unknown activation function 'Swish'", hidden_size=3,
    activations=["Swish"])
rnn("rnn_activations_count.onnx", "node 'rn' (RNN): 'activations' has 2 functions; 1 direction need 1",
    hidden_size=3, activations=["Tanh", "Relu"])
rnn("rnn_int_input.onnx", "node 'rn' (RNN): the input must be a float tensor", x=[vi("x", [4, 1, 2], T.INT32)],
    hidden_size=3)
rnn("rnn_rank.onnx", "node 'rn' (RNN): the input must have rank 3, not 2", x=[vi("x", [4, 2])], hidden_size=3)
rnn("rnn_layout.onnx", "node 'rn' (RNN): layout must be 0 or 1", hidden_size=3, layout=2)
rnn("rnn_w_shape.onnx", "node 'rn' (RNN): W must be [2, 1 * hidden_size, input_size]", hidden_size=3,
    direction="bidirectional")
rnn("rnn_hidden_size.onnx", "node 'rn' (RNN): hidden_size 2 does not match W's 3 rows", hidden_size=2)

rx = [vi("x", [1, 1, 4, 4])]


def resize(fname, want, ins, inits, opset=13, op="Resize", x=None, **attrs):
    save(fname, want, [h.make_node(op, ins, ["y"], name="rs", **attrs)], x or rx, [y], inits, opset=opset)


sc4 = ten("sc", [4], [1, 1, 2, 2])
resize("resize_nearest_mode.onnx", "node 'rs' (Resize): unknown nearest_mode 'nearest'", ["x", "", "sc"], [sc4],
       nearest_mode="nearest")
resize("upsample_cubic.onnx", "node 'rs' (Upsample): Upsample has no cubic mode", ["x", "sc"], [sc4], opset=9,
       op="Upsample", mode="cubic")
resize("upsample7_no_scales.onnx", "node 'rs' (Upsample): the attribute 'scales' is required", ["x"], [], opset=7,
       op="Upsample")
resize("resize_scales_and_sizes.onnx", "node 'rs' (Resize): scales and sizes are both given", ["x", "", "sc", "sz"],
       [sc4, ten("sz", [4], [1, 1, 8, 8], T.INT64)])
resize("resize_sizes_long.onnx", "node 'rs' (Resize): the input 'sizes' is too long", ["x", "", "", "sz"],
       [ten("sz", [17], [1] * 17, T.INT64)])
resize("resize_no_scales.onnx", "node 'rs' (Resize): one of scales and sizes must be given", ["x", ""], [])
resize("resize_scales_count.onnx", "node 'rs' (Resize): 3 scales for 4 axes", ["x", "", "sc"],
       [ten("sc", [3], [1, 2, 2])])
resize("resize_roi_count.onnx", "node 'rs' (Resize): roi has 3 values; 4 axes need 8", ["x", "roi", "sc"],
       [ten("roi", [3], [0, 0, 0]), sc4], coordinate_transformation_mode="tf_crop_and_resize")
resize("resize_axes_twice.onnx", "node 'rs' (Resize): axis 2 is given twice", ["x", "", "sc"],
       [ten("sc", [2], [2, 2])], opset=18, axes=[2, -2])
resize("resize_policy.onnx", "node 'rs' (Resize): unknown keep_aspect_ratio_policy 'fit'", ["x", "", "", "sz"],
       [ten("sz", [4], [1, 1, 8, 8], T.INT64)], opset=18, keep_aspect_ratio_policy="fit")
resize("resize_policy_symbolic.onnx", "node 'rs' (Resize): keep_aspect_ratio_policy needs static sizes and dims",
       ["x", "", "", "sz"], [ten("sz", [2], [8, 8], T.INT64)], opset=18, x=[vi("x", [1, 1, "H", 4])], axes=[2, 3],
       keep_aspect_ratio_policy="not_larger")
resize("resize_to_zero.onnx", "node 'rs' (Resize): dim 2: resizing 4 elements to 0 is not supported",
       ["x", "", "", "sz"], [ten("sz", [4], [1, 1, 0, 4], T.INT64)])
resize("resize_linear_int.onnx", "node 'rs' (Resize): linear interpolation of i32 values is not supported",
       ["x", "", "sc"], [sc4], x=[vi("x", [1, 1, 4, 4], T.INT32)], mode="linear")
resize("resize_scale_negative.onnx", "node 'rs' (Resize): scale -2 of dim 2 is not a positive scale lgen can apply",
       ["x", "", "sc"], [ten("sc", [4], [1, 1, -2, 2])])
resize("resize_symbolic_sizes.onnx", "node 'rs' (Resize): dim 2 of 't2' is symbolic (H) and resized to 7, not an integer multiple of it (fix the dim with --dim)",
       ["x", "", "", "sz"], [ten("sz", [4], [1, 1, 7, 8], T.INT64)], x=[vi("x", [1, 1, "H", 4])])
resize("resize_taps.onnx", "node 'rs' (Resize): the interpolation needs 802 taps per output; lgen supports up to 256",
       ["x", "", "sc"], [ten("sc", [4], [1, 1, 1 / 200, 1])], opset=18, x=[vi("x", [1, 1, 400, 4])], mode="cubic",
       antialias=1)
resize("resize_rank16.onnx", "node 'rs' (Resize): the interleaving needs rank 17 (lgen's limit is 16)", ["x", "", "sc"],
       [ten("sc", [16], [1] * 15 + [2])], x=[vi("x", [1] * 15 + [3])], mode="linear")
resize("resize_symbolic_factor.onnx", "node 'rs' (Resize): dim 2 of 'x' is symbolic (H); lgen resizes a symbolic dim by an integer factor or its inverse (up to 16) with a coordinate mode that does not depend on its extent (fix the dim with --dim)",
       ["x", "", "sc"], [ten("sc", [4], [1, 1, 1.5, 1])], x=[vi("x", [1, 1, "H", 4])])
save("resize_symbolic_size.onnx", "node 'rs' (Resize): the output size of dim 2 is symbolic (H), but the input dim is 4",
     [h.make_node("Shape", ["z"], ["sz"]), h.make_node("Resize", ["x", "", "", "sz"], ["y"], name="rs")],
     [vi("x", [1, 1, 4, 4]), vi("z", [1, 1, "H", 4])], [y])
# a dim after four unpadded stride-2 convs prints as one division
convs = [h.make_node("Conv", ["x" if i == 0 else "c%d" % (i - 1), "w"], ["c%d" % i], strides=[2, 2]) for i in range(4)]
save("slice_symbolic_simplified.onnx", "node 's' (Slice): dim 2 of 'c3' is symbolic ((H - 31) floordiv 16 + 1)",
     convs + [h.make_node("Slice", ["c3", "st", "en", "ax", "sp"], ["y"], name="s")],
     [vi("x", [1, 1, "H", 40])], [y], [ten("w", [1, 1, 3, 3], [1.0] * 9), ten("st", [1], [-1], T.INT64),
                                       ten("en", [1], [-1000000], T.INT64), ten("ax", [1], [2], T.INT64),
                                       ten("sp", [1], [-1], T.INT64)])
# Loop whose trip count comes from a symbolic dim: known only at run time
save("loop_symbolic_count.onnx", "node 'steps' (Loop): the trip count ('n') must be a constant when generating code: lgen unrolls loops, and a data-dependent trip count is not supported; the symbolic dim 'N' can be fixed with --dim N=VALUE",
     [h.make_node("Shape", ["v"], ["s"]), h.make_node("Gather", ["s", "zero"], ["n"], axis=0),
      h.make_node("Loop", ["n", "", "v"], ["y"], body=body, name="steps")],
     [vi("v", ["N"])], [y], [ten("zero", [], [0], T.INT64)])
# Pad whose pads come from a symbolic dim through a float Cast: named dims
save("pad_from_float_dim.onnx", "node 'p' (Pad): the pads input ('pads') must be a constant when generating code, but it is computed at run time; it is computed from symbolic dims through ops that keep no affine expression of them (a float Cast, Mod, ...); the symbolic dim 'N' can be fixed with --dim N=VALUE",
     [h.make_node("Shape", ["x"], ["s"]), h.make_node("Cast", ["s"], ["sf"], to=F),
      h.make_node("Sqrt", ["sf"], ["q"]), h.make_node("Cast", ["q"], ["qi"], to=T.INT64),
      h.make_node("Concat", ["qi", "qi"], ["pads"], axis=0), h.make_node("Pad", ["x", "pads"], ["y"], name="p")],
     [vi("x", ["N"])], [y])
# Range of a run-time value, of a shape (two elements), with a zero delta
save("range_runtime.onnx", "node 'r' (Range): the limit input ('n') must be a constant or a symbolic dim when generating code (it sets the output's length), but it is computed at run time",
     [h.make_node("Range", ["zero", "n", "one"], ["y"], name="r")], [vi("n", [], T.INT64)], [y],
     [ten("zero", [], [0], T.INT64), ten("one", [], [1], T.INT64)])
save("range_shape.onnx", "node 'r' (Range): Range's start and limit must hold one element each",
     [h.make_node("Shape", ["x"], ["s"]), h.make_node("Range", ["zero", "s", "one"], ["y"], name="r")],
     [vi("x", ["N", "M"])], [y], [ten("zero", [], [0], T.INT64), ten("one", [], [1], T.INT64)])
save("trilu_vector.onnx", "node 't' (Trilu): the input needs at least two dims, not 1",
     [h.make_node("Trilu", ["x"], ["y"], name="t")], [vi("x", ["N"])], [y], opset=14)
save("range_zero_delta.onnx", "node 'r' (Range): Range needs a non-zero delta",
     [h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "zero"], ["n"], axis=0),
      h.make_node("Range", ["zero", "n", "zero"], ["y"], name="r")],
     [vi("x", ["N"])], [y], [ten("zero", [], [0], T.INT64)])
save("range_float_half_step.onnx", "node 'r' (Range): a Range over a symbolic dim needs an integral delta, not 0.5",
     [h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "zero"], ["n"], axis=0),
      h.make_node("Cast", ["n"], ["nf"], to=F), h.make_node("Range", ["fzero", "nf", "half"], ["y"], name="r")],
     [vi("x", ["N"])], [y], [ten("zero", [], [0], T.INT64), ten("fzero", [], [0.0], F), ten("half", [], [0.5], F)])
# 36 elements that depend on symbolic dims, read as data: too many for one op
save("dims_as_data_too_many.onnx", "error: constant 'c' has too many elements that depend on symbolic dims (36) to compute at run time",
     [h.make_node("Shape", ["x"], ["s"]), h.make_node("Concat", ["s"] * 12, ["c"], axis=0, name="cat"),
      h.make_node("Cast", ["c"], ["y"], to=F, name="f")],
     [vi("x", ["N", "M", "K"])], [y])

# --- one case per ONNX importer message that no other test triggered
# (scripts/diagnostics-allow.txt's debt; src/frontend/onnx_json.c and its
# .inc files): each model is bad at node 'n'
x23 = [vi("x", [2, 3])]
I64 = T.INT64


def one(fname, want, op, ins, inputs, inits=(), opset=13, outs=("y",), **attrs):
    save(fname, want, [h.make_node(op, ins, list(outs), name="n", **attrs)], inputs,
         [vi(o, None) for o in outs], inits, opset)


one("tile_count.onnx", "node 'n' (Tile): 3 repeats for an input of rank 2", "Tile", ["x", "r"], x23,
    [ten("r", [3], [1, 1, 1], I64)])
one("tile_negative.onnx", "node 'n' (Tile): negative repeats", "Tile", ["x", "r"], x23, [ten("r", [2], [1, -1], I64)])
one("tile_float_repeats.onnx", "node 'n' (Tile): the input 'repeats' ('r') must be an integer tensor, not f32",
    "Tile", ["x", "r"], x23, [ten("r", [2], [1.0, 1.0])])
one("split_count.onnx", "node 'n' (Split): 3 split sizes for 2 outputs", "Split", ["x", "s"], x23,
    [ten("s", [3], [1, 1, 1], I64)], outs=("a", "b"), axis=1)
one("split_negative.onnx", "node 'n' (Split): negative split size", "Split", ["x", "s"], x23,
    [ten("s", [2], [4, -1], I64)], outs=("a", "b"), axis=1)
one("split_sum.onnx", "node 'n' (Split): the split sizes add up to 4, but the axis has extent 3", "Split", ["x", "s"],
    x23, [ten("s", [2], [2, 2], I64)], outs=("a", "b"), axis=1)
one("split_uneven.onnx", "node 'n' (Split): extent 3 does not split evenly into 2 parts", "Split", ["x"], x23,
    outs=("a", "b"), axis=1)
one("split_num_outputs.onnx", "node 'n' (Split): num_outputs does not match the 2 outputs", "Split", ["x"], x23,
    outs=("a", "b"), axis=1, opset=18, num_outputs=3)
one("pad_count.onnx", "node 'n' (Pad): 3 pads for 2 axes (need 2 per axis)", "Pad", ["x", "p"], x23,
    [ten("p", [3], [0, 1, 0], I64)])
one("pad_negative.onnx", "node 'n' (Pad): negative pads (cropping) are not supported", "Pad", ["x", "p"], x23,
    [ten("p", [4], [0, -1, 0, 0], I64)])
one("pad2_no_pads.onnx", "node 'n' (Pad): the attribute 'pads' is required", "Pad", ["x"], x23, opset=2)
one("slice9_no_starts.onnx", "node 'n' (Slice): 'starts' and 'ends' are required", "Slice", ["x"], x23, opset=9)
one("slice_step_zero.onnx", "node 'n' (Slice): a step of 0", "Slice", ["x", "st", "en", "ax", "sp"], x23,
    [ten("st", [1], [0], I64), ten("en", [1], [2], I64), ten("ax", [1], [1], I64), ten("sp", [1], [0], I64)])
one("slice_twice.onnx", "node 'n' (Slice): axis 1 is sliced twice", "Slice", ["x", "st", "en", "ax"], x23,
    [ten("st", [2], [0, 0], I64), ten("en", [2], [2, 2], I64), ten("ax", [2], [1, -1], I64)])
one("slice_lengths.onnx", "node 'n' (Slice): starts, ends, axes and steps must have the same length", "Slice",
    ["x", "st", "en"], x23, [ten("st", [2], [0, 0], I64), ten("en", [1], [2], I64)])
one("unsqueeze_no_axes.onnx", "node 'n' (Unsqueeze): 'axes' is required", "Unsqueeze", ["x"], x23)
one("squeeze_not_one.onnx", "node 'n' (Squeeze): dim 1 of 'x' is not 1 and cannot be squeezed", "Squeeze", ["x", "a"],
    x23, [ten("a", [1], [1], I64)])
one("constant_none.onnx", "node 'n' (Constant): exactly one of value, value_float(s), value_int(s) must be given",
    "Constant", [], [])
one("constant_two.onnx", "node 'n' (Constant): exactly one of value, value_float(s), value_int(s) must be given",
    "Constant", [], [], value_float=1.0, value_int=2)
one("constant_string.onnx", "node 'n' (Constant): constants given as 'value_string' are not supported", "Constant",
    [], [], value_string="a")
one("constant_of_shape_value.onnx", "node 'n' (ConstantOfShape): 'value' must hold one element", "ConstantOfShape",
    ["s"], [], [ten("s", [1], [2], I64)], value=ten("v", [2], [1, 2]))
one("bitshift_direction.onnx", 'node \'n\' (BitShift): BitShift needs direction "LEFT" or "RIGHT"', "BitShift",
    ["a", "b"], [vi("a", [2], T.UINT8), vi("b", [2], T.UINT8)], direction="UP")
one("reshape_opset4.onnx", "node 'n' (Reshape): Reshape before opset 5 is not supported", "Reshape", ["x", "s"], x23,
    [ten("s", [1], [6], I64)], opset=4)
one("no_outputs.onnx", "node 'n' (Relu): a node without outputs", "Relu", ["x"], x23, outs=())
one("einsum_no_equation.onnx", "node 'n' (Einsum): the attribute 'equation' is required", "Einsum", ["x", "x"], x23,
    opset=12)
one("einsum_nul.onnx", "node 'n' (Einsum): attribute 'equation' holds a NUL byte (at byte 2 of 7)", "Einsum", ["x"],
    x23, opset=12, equation=b"ij\x00->ji")
one("maxpool_no_kernel.onnx", "node 'n' (MaxPool): the attribute 'kernel_shape' is required", "MaxPool", ["x"],
    [vi("x", [1, 1, 4, 4])])
one("cast_no_to.onnx", "node 'n' (Cast): the attribute 'to' is required", "Cast", ["x"], x23)
one("relu_two_inputs.onnx", "node 'n' (Relu): takes at most 1 input, not 2", "Relu", ["x", "x"], x23)
one("add_broadcast.onnx", "node 'n' (Add): the opset < 7 'broadcast' attribute is not supported", "Add", ["x", "x"],
    x23, opset=6, broadcast=1)
bn = [ten("s", [2], [1, 1]), ten("b", [2], [0, 0]), ten("m", [2], [0, 0]), ten("v", [2], [1, 1])]
one("bn_training.onnx", "node 'n' (BatchNormalization): training mode is not supported", "BatchNormalization",
    ["x", "s", "b", "m", "v"], [vi("x", [1, 2, 3])], bn, opset=14, training_mode=1)
one("bn_rank1.onnx", "node 'n' (BatchNormalization): the input must have rank 2 or more (N, C, ...)",
    "BatchNormalization", ["x", "s", "b", "m", "v"], [vi("x", [2])], bn)
one("conv_rank2.onnx", "node 'n' (Conv): the input must have rank 3 or more (N, C, spatial...), not 2", "Conv",
    ["x", "w"], x23, [ten("w", [1, 3, 1], [1, 1, 1])])
w33 = [ten("w", [1, 1, 3, 3], [1.0] * 9)]
one("conv_kernel_shape_count.onnx", "node 'n' (Conv): 'kernel_shape' has 1 values, but 2 spatial dims", "Conv",
    ["x", "w"], [vi("x", [1, 1, 4, 4])], w33, kernel_shape=[3])
one("conv_kernel_shape_extent.onnx", "node 'n' (Conv): kernel_shape[1] = 2, but the filter's extent is 3", "Conv",
    ["x", "w"], [vi("x", [1, 1, 4, 4])], w33, kernel_shape=[3, 2])
one("conv_negative_pads.onnx", "node 'n' (Conv): negative pads are not supported", "Conv", ["x", "w"],
    [vi("x", [1, 1, 4, 4])], w33, pads=[0, -1, 0, 0])
one("flatten_axis.onnx", "node 'n' (Flatten): axis 3 is out of range for rank 2", "Flatten", ["x"], x23, axis=3)
one("unsqueeze_axis_twice.onnx", "node 'n' (Unsqueeze): axis 1 is given twice", "Unsqueeze", ["x", "a"], x23,
    [ten("a", [2], [1, -3], I64)])
one("tile_repeats_long.onnx", "node 'n' (Tile): the input 'repeats' is too long", "Tile", ["x", "r"], x23,
    [ten("r", [4097], [1] * 4097, I64)])
one("conv_auto_pad_symbolic.onnx", "node 'n' (Conv): auto_pad needs static filter extents", "Conv", ["x", "w"],
    [vi("x", [1, 1, 4, 4]), vi("w", [1, 1, "K", 3])], auto_pad="SAME_UPPER")
one("gather_no_indices.onnx", "node 'n' (Gather): input 1 is required", "Gather", ["x"], x23)
# sizes [2^39, 1] of a [1, 2^39] input, not_smaller: the scale 2^39 of axis 0
# makes axis 1 2^78 long (a cast of that double to int64 was undefined)
save("resize_aspect_huge.onnx",
     "node 'up' (Resize): dim 1: keep_aspect_ratio_policy 'not_smaller' makes it 3.02231e+23 elements long, not below 2^40",
     [h.make_node("Resize", ["x", "", "", "sz"], ["y"], name="up", keep_aspect_ratio_policy="not_smaller")],
     [vi("x", [1, 2 ** 39])], [y], [ten("sz", [2], [2 ** 39, 1], T.INT64)], opset=18)
# antialiasing 2^35 elements down to 1 asks for 2^36 taps an output (an
# int cast of that count was undefined; the old build ran out of memory)
save("resize_antialias_taps_huge.onnx",
     "node 'down' (Resize): the interpolation needs 68719476736 taps per output; lgen supports up to 256",
     [h.make_node("Resize", ["x", "", "", "sz"], ["y"], name="down", mode="linear", antialias=1)],
     [vi("x", [1, 2 ** 35])], [y], [ten("sz", [2], [1, 1], T.INT64)], opset=18)
one("max_omitted.onnx", "node 'n' (Max): inputs may not be omitted", "Max", ["x", "", "x"], x23)
# a last empty name is not "one input fewer": Concat's and Sum's inputs are all required
one("concat_omitted_last.onnx", "node 'n' (Concat): inputs may not be omitted", "Concat", ["x", ""], x23, axis=0)
one("sum_omitted_last.onnx", "node 'n' (Sum): inputs may not be omitted", "Sum", ["x", "x", ""], x23)
one("range_two_starts.onnx", "node 'n' (Range): the input 'start' ('a') must hold one element, not 2", "Range",
    ["a", "b", "c"], [], [ten("a", [2], [0, 0], I64), ten("b", [], [3], I64), ten("c", [], [1], I64)])
one("range_zero_float_delta.onnx",
    "node 'n' (Range): Range needs a finite start and limit and a non-zero, finite delta", "Range", ["a", "b", "c"],
    [], [ten("a", [], [0.0]), ten("b", [], [3.0]), ten("c", [], [0.0])])
one("range_float_long.onnx", "node 'n' (Range): Range of 1e+07 elements is too long to fold", "Range",
    ["a", "b", "c"], [], [ten("a", [], [0.0]), ten("b", [], [1.0]), ten("c", [], [1e-7])])
one("convtranspose_symbolic_filter.onnx", "node 'n' (ConvTranspose): the filter's shape must be static",
    "ConvTranspose", ["x", "w"], [vi("x", [1, 2, 4, 4]), vi("w", [2, 1, "K", 3])])
one("resize_scales_long.onnx", "node 'n' (Resize): the input 'scales' is too long", "Resize", ["x", "", "sc"],
    rx, [ten("sc", [4097], [1.0] * 4097)])
one("softmax_rank0.onnx", "node 'n' (Softmax): the input must have rank 1 or more", "Softmax", ["x"], [vi("x", [])])
one("topk_no_k.onnx", "node 'n' (TopK): the attribute 'k' is required", "TopK", ["x"], x23, opset=1, outs=("v", "i"))
one("topk_k_two.onnx", "node 'n' (TopK): K must hold one element, not 2", "TopK", ["x", "k"], x23,
    [ten("k", [2], [1, 1], I64)], outs=("v", "i"))
one("scatter_reduction.onnx", "node 'n' (ScatterElements): reduction 'avg' is not none, add, mul, max or min",
    "ScatterElements", ["x", "i", "u"], x23 + [vi("i", [2, 3], I64), vi("u", [2, 3])], opset=18, reduction="avg")
one("depth_to_space_mode.onnx", "node 'n' (DepthToSpace): mode must be DCR or CRD, not 'XYZ'", "DepthToSpace", ["x"],
    [vi("x", [1, 4, 2, 2])], blocksize=2, mode="XYZ")
one("depth_to_space_block.onnx",
    "node 'n' (DepthToSpace): blocksize 3 does not divide the channels by its square", "DepthToSpace", ["x"],
    [vi("x", [1, 4, 2, 2])], blocksize=3)
one("depth_to_space_symbolic.onnx",
    "node 'n' (DepthToSpace): the input must be NCHW with static C, H and W; the symbolic dim 'C' can be fixed",
    "DepthToSpace", ["x"], [vi("x", [1, "C", 2, 2])], blocksize=2)
one("onehot_depth.onnx", "node 'n' (OneHot): depth must be positive, not 0", "OneHot", ["i", "d", "v"],
    [vi("i", [3], I64)], [ten("d", [], [0], I64), ten("v", [2], [0, 1])])
one("onehot_values.onnx", "node 'n' (OneHot): the values must be [off, on]", "OneHot", ["i", "d", "v"],
    [vi("i", [3], I64)], [ten("d", [], [4], I64), ten("v", [1, 2], [0, 1])])
one("nll_reduction.onnx", "node 'n' (NegativeLogLikelihoodLoss): reduction must be mean, sum or none, not 'max'",
    "NegativeLogLikelihoodLoss", ["x", "t"], [vi("x", [2, 3]), vi("t", [2], I64)], reduction="max")
one("nll_target.onnx", "node 'n' (NegativeLogLikelihoodLoss): the target must be i32 or i64 of the input's shape without its class dim",
    "NegativeLogLikelihoodLoss", ["x", "t"], [vi("x", [2, 3]), vi("t", [2], F)])
one("mod_zero.onnx", "node 'n' (Mod): Mod by zero", "Mod", ["a", "b"], [vi("a", [2], I64)], [ten("b", [2], [0, 1], I64)])
one("mod_float.onnx", "node 'n' (Mod): Mod of floats needs fmod = 1", "Mod", ["a", "b"], [vi("a", [2])],
    [ten("b", [2], [1, 1])])
one("eyelike_rank3.onnx", "node 'n' (EyeLike): the input must be 2-D, not of rank 3", "EyeLike", ["x"],
    [vi("x", [2, 2, 2])])
one("eyelike_symbolic.onnx", "node 'n' (EyeLike): the input needs two last dims of static length; the symbolic dim 'N'",
    "EyeLike", ["x"], [vi("x", [2, "N"])])
one("reverse_sequence_axes.onnx", "node 'n' (ReverseSequence): the time and batch axes must be 0 and 1, in either order, of a rank >= 2 input",
    "ReverseSequence", ["x", "l"], [vi("x", [2, 3, 4])], [ten("l", [3], [1, 1, 1], I64)],
    time_axis=2, batch_axis=0)
one("reverse_sequence_symbolic.onnx", "node 'n' (ReverseSequence): the time axis must have a static length; the "
    "symbolic dim 'T'", "ReverseSequence", ["x", "l"], [vi("x", ["T", 3])], [ten("l", [3], [1, 1, 1], I64)],
    time_axis=0, batch_axis=1)
qkv = ["q", "k", "v"]
one("attention_rank2.onnx", "node 'n' (Attention): Q must have rank 3 or 4, not 2", "Attention", qkv,
    [vi("q", [2, 4]), vi("k", [2, 4]), vi("v", [2, 4])], opset=23)
one("attention_ranks.onnx", "node 'n' (Attention): Q, K and V must have the same rank", "Attention", qkv,
    [vi("q", [1, 2, 4]), vi("k", [1, 1, 2, 4]), vi("v", [1, 1, 2, 4])], opset=23)
one("attention_3d_heads.onnx", "node 'n' (Attention): 3-D inputs need q_num_heads and kv_num_heads", "Attention", qkv,
    [vi("q", [1, 2, 4]), vi("k", [1, 2, 4]), vi("v", [1, 2, 4])], opset=23)
one("attention_past.onnx", "node 'n' (Attention): past_key and past_value come together", "Attention",
    qkv + ["", "pk"], [vi("q", [1, 1, 2, 4]), vi("k", [1, 1, 2, 4]), vi("v", [1, 1, 2, 4]), vi("pk", [1, 1, 2, 4])],
    opset=23)
one("attention_heads.onnx", "node 'n' (Attention): Q's last dim must be a number divisible by Q's 2 heads",
    "Attention", qkv, [vi("q", [1, 2, 5]), vi("k", [1, 2, 4]), vi("v", [1, 2, 4])], opset=23, q_num_heads=2,
    kv_num_heads=2)
one("resize_scales_count_2.onnx", "node 'n' (Resize): 2 scales for 4 axes", "Resize", ["x", "", "sc"],
    [vi("x", [1, 1, 4, 4])], [ten("sc", [2], [2, 2])])
q4 = [vi("q", [1, 1, 2, 4]), vi("k", [1, 1, 2, 4]), vi("v", [1, 1, 2, 4])]
one("attention_lens_opset23.onnx", "node 'n' (Attention): nonpad_kv_seqlen is an input of opset 24", "Attention",
    qkv + ["", "", "", "lens"], q4 + [vi("lens", [1], I64)], opset=23)
one("attention_past_symbolic.onnx", "node 'n' (Attention): past_key's sequence length must be a number (it places the causal diagonal)",
    "Attention", qkv + ["", "pk", "pv"], q4 + [vi("pk", [1, 1, "P", 4]), vi("pv", [1, 1, "P", 4])], opset=23)
one("attention_qk_mode.onnx", "node 'n' (Attention): qk_matmul_output_mode must be 0..3", "Attention", qkv, q4,
    opset=23, outs=("y", "", "", "qk"), qk_matmul_output_mode=4)
one("xor_float.onnx", "node 'n' (Xor): the input 'x' must be bool, not f32", "Xor", ["x", "x"], x23)
one("not_float.onnx", "node 'n' (Not): the input 'x' must be bool, not f32", "Not", ["x"], x23)
one("isinf_int.onnx", "node 'n' (IsInf): the input must be a float, not i64", "IsInf", ["i"], [vi("i", [3], I64)],
    opset=20)
one("isnan_int.onnx", "node 'n' (IsNaN): the input must be a float, not i64", "IsNaN", ["i"], [vi("i", [3], I64)],
    opset=20)
one("transpose_perm_long.onnx", "node 'n' (Transpose): attribute 'perm' is too long", "Transpose", ["x"], x23,
    perm=[0] * 4097)
one("upsample9_no_scales.onnx", "node 'n' (Upsample): the input 'scales' (input 1) is required", "Upsample", ["x"],
    x23, opset=9)
one("constantofshape_float.onnx", "node 'n' (ConstantOfShape): the shape must be a 1-D integer tensor",
    "ConstantOfShape", ["s"], [], [ten("s", [2], [2.0, 3.0])])
one("constantofshape_negative.onnx", "node 'n' (ConstantOfShape): negative dimension in the shape", "ConstantOfShape",
    ["s"], [], [ten("s", [2], [2, -3], I64)])
one("hardmax_symbolic_axis.onnx", "node 'n' (Hardmax): the axis must have a static length; the symbolic dim 'N' can be fixed with --dim N=VALUE",
    "Hardmax", ["x"], [vi("x", [2, "N"])])
one("convtranspose_7d_strided.onnx", "node 'n' (ConvTranspose): 7 spatial dims are too many for lgen's rank limit",
    "ConvTranspose", ["x", "w"], [vi("x", [1, 1] + [2] * 7)], [ten("w", [1, 1] + [1] * 7, [1.0])], strides=[2] * 7)
one("convtranspose_7d.onnx", "node 'n' (ConvTranspose): 7 spatial dims are too many for lgen's rank limit",
    "ConvTranspose", ["x", "w"], [vi("x", [1, 1] + [2] * 7)], [ten("w", [1, 1] + [1] * 7, [1.0])])
# an input read as a number that is a symbolic dim (Shape of x[2, N], from dim 1)
shape_n = h.make_node("Shape", ["x"], ["sh"], start=1)
save("topk_symbolic_k.onnx", "node 'n' (TopK): the input 'K' ('sh') depends on symbolic dims; it must be a number; the symbolic dim 'N' can be fixed with --dim N=VALUE",
     [shape_n, h.make_node("TopK", ["x", "sh"], ["y", "yi"], name="n")], [vi("x", [2, "N"])], [y], opset=15)
save("slice_symbolic_end_negative_start.onnx", "node 'n' (Slice): the end of axis 1 is symbolic (N); Slice supports it with a start from the front and a positive step (fix the dim with --dim)",
     [shape_n, h.make_node("Slice", ["x", "st", "sh", "ax"], ["y"], name="n")], [vi("x", [2, "N"])], [y],
     [ten("st", [1], [-1], I64), ten("ax", [1], [1], I64)], opset=15)
nd = h.make_node("LeakyRelu", ["x"], ["y"], name="n", alpha=0.1)
nd.attribute.append(h.make_attribute("alpha", 0.2))
save("attribute_twice.onnx", "node 'n' (LeakyRelu): attribute 'alpha' is given twice", [nd], x23, [y])
nd = h.make_node("LeakyRelu", ["x"], ["y"], name="n", alpha=0.1)
nd.attribute[0].name = ""
save("attribute_no_name.onnx", "node 'n' (LeakyRelu): an attribute without a name", [nd], x23, [y])
one("hardmax_rank0.onnx", "node 'n' (Hardmax): the input must have rank 1 or more", "Hardmax", ["x"], [vi("x", [])])
one("onehot_depth_two.onnx", "node 'n' (OneHot): the input 'depth' ('d') must hold one element, not 2", "OneHot",
    ["i", "d", "v"], [vi("i", [3], I64)], [ten("d", [2], [4, 4], I64), ten("v", [2], [0, 1])])
one("maxpool_kernel_shape_count.onnx", "node 'n' (MaxPool): 'kernel_shape' has 1 values, but 2 spatial dims",
    "MaxPool", ["x"], [vi("x", [1, 1, 4, 4])], kernel_shape=[2])
one("unsqueeze_rank.onnx", "node 'n' (Unsqueeze): the result's rank 17 exceeds lgen's limit of 16", "Unsqueeze",
    ["x", "a"], x23, [ten("a", [15], list(range(15)), I64)])

# --- If and Loop (onnx_control.inc): conditions, subgraph signatures,
# loop-carried values, unrolling limits
BOOL = T.BOOL


def sub(nodes, ins, outs, name="sub"):
    return h.make_graph(nodes, name, ins, outs)


then_ok = sub([h.make_node("Identity", ["a"], ["t"])], [], [vi("t", [2])])
else_ok = sub([h.make_node("Neg", ["a"], ["e"])], [], [vi("e", [2])])


def if_case(fname, want, cond, then_b=then_ok):
    save(fname, want, [h.make_node("If", ["c"], ["y"], name="n", then_branch=then_b, else_branch=else_ok)],
         [cond, vi("a", [2])], [y])


if_case("if_cond_float.onnx", "node 'n' (If): the condition must be a bool scalar (or one element), not f32 of rank 0",
        vi("c", []))
if_case("if_cond_two.onnx", "node 'n' (If): the condition must hold one element", vi("c", [2], BOOL))
if_case("if_branch_inputs.onnx", "node 'n' (If): the subgraph declares 1 inputs, but If gives it 0", vi("c", [], BOOL),
        sub([h.make_node("Identity", ["a"], ["t"])], [vi("q", [2])], [vi("t", [2])]))
if_case("if_branch_outputs.onnx", "node 'n' (If): the subgraph declares 2 outputs, but If needs 1", vi("c", [], BOOL),
        sub([h.make_node("Identity", ["a"], ["t"]), h.make_node("Identity", ["a"], ["u"])], [], [vi("t", [2]), vi("u", [2])]))
if_case("if_branch_output_missing.onnx", "node 'n' (If): the subgraph's output 'zz' is not computed by any of its nodes",
        vi("c", [], BOOL), sub([h.make_node("Identity", ["a"], ["t"])], [], [vi("zz", [2])]))
bi = [vi("i", [], I64), vi("ci", [], BOOL), vi("v", [2])]
bo = [vi("co", [], BOOL), vi("vo", [2])]
bn = [h.make_node("Identity", ["ci"], ["co"]), h.make_node("Neg", ["v"], ["vo"])]
three = ten("m", [], [3], I64)


def loop_case(fname, want, ins, body, outs=("y",), inits=(three,), xs=None):
    save(fname, want, [h.make_node("Loop", ins, list(outs), name="n", body=body)], xs or [vi("v0", [2])],
         [vi(o, None) for o in outs], list(inits))


loop_case("loop_body_inputs.onnx", "node 'n' (Loop): the body must take (iteration, condition, carried...) and give (condition, carried..., scans...)",
          ["m", "", "v0"], sub(bn, [vi("i", [], I64)], bo, "body"))
loop_case("loop_carried_count.onnx", "node 'n' (Loop): 0 loop-carried values given, but the body carries 1", ["m", ""],
          sub(bn, bi, bo, "body"))
loop_case("loop_outputs.onnx", "node 'n' (Loop): 3 outputs, but the body gives 1", ["m", "", "v0"],
          sub(bn, bi, bo, "body"), outs=("y", "y2", "y3"))
loop_case("loop_carried_missing.onnx", "node 'n' (Loop): loop-carried value 0 is missing", ["m", "", "", "v0"],
          sub(bn + [h.make_node("Neg", ["w"], ["wo"])], bi + [vi("w", [2])], bo + [vi("wo", [2])], "body"),
          outs=("y", "y2"))
loop_case("loop_too_long.onnx", "node 'n' (Loop): the loop runs more than 4096 iterations; lgen unrolls loops up to that",
          ["m", "", "v0"], sub(bn, bi, bo, "body"), inits=[ten("m", [], [100000000], I64)])
loop_case("loop_body_cond_runtime.onnx", "node 'n' (Loop): the body's condition ('n/iter0/co') is computed at run time; lgen unrolls loops whose iterations are known when generating code (a data-dependent trip count is not supported)",
          ["m", "", "v0"],
          sub([h.make_node("ReduceSum", ["v"], ["s"], keepdims=0), h.make_node("Greater", ["s", "zf"], ["co"]),
               h.make_node("Neg", ["v"], ["vo"])], bi, bo, "body"), inits=[three, ten("zf", [], [0.0])])
loop_case("loop_no_iteration_scan.onnx", "node 'n' (Loop): the loop runs no iteration, so its scan output 0 has no shape",
          ["m", "", "v0"], sub(bn + [h.make_node("Identity", ["v"], ["sc"])], bi, bo + [vi("sc", [2])], "body"),
          outs=("y", "s"), inits=[ten("m", [], [0], I64)])
loop_case("loop_body_input_no_name.onnx", "a subgraph input without a name", ["m", "", "v0"],
          sub([h.make_node("Identity", ["ci"], ["co"]), h.make_node("Neg", ["v0"], ["vo"])], bi[:2] + [vi("", [2])],
              bo, "body"))

# --- issue 14: diagnostics that no test triggered (scripts/diagnostics-allow.txt)
one("argmax_empty_axis.onnx", "node 'n' (ArgMax): the axis 1 of 'e' is empty: there is no extremum", "ArgMax", ["e"],
    [vi("x0", [3])], [ten("e", [3, 0], [])], axis=1)
one("onehot_depth_huge.onnx",
    "node 'n' (OneHot): the positions 0..depth-1 would have 2199023255552 elements, more than 2^40", "OneHot",
    ["i", "d", "v"], [vi("i", [3], I64)], [ten("d", [], [1 << 41], I64), ten("v", [2], [0, 1])])
# half_pixel_symmetric's source coordinate depends on the output's extent,
# so a symbolic dim's taps have no period
save("resize_symbolic_no_period.onnx",
     "node 'up' (Resize): dim 2 of 'x' is symbolic (H), and this interpolation's taps do not repeat with a period lgen can use (fix the dim with --dim)",
     [h.make_node("Resize", ["x", "", "sc"], ["y"], mode="nearest", coordinate_transformation_mode="half_pixel_symmetric",
                  name="up")],
     [vi("x", [1, 1, "H", 4])], [y], [ten("sc", [4], [1, 1, 0.5, 1])], opset=19)

# --- valid recurrent nodes, then an Add whose other operand has the wrong
# length: the error shows the shape lgen gave the node's output (ONNX: Y is
# [seq, num_directions, batch, hidden], with layout = 1 [batch, seq,
# num_directions, hidden]; Y_h [num_directions, batch, hidden])
b7 = vi("b7", [7])


def rnn_then_add(fname, shape, op, ins, inputs, inits, outs=("y",), **attrs):
    save(fname, "node 'bad' (Add): cannot broadcast %s and [7]" % shape,
         [h.make_node(op, ins, list(outs), name="r", **attrs), h.make_node("Add", [outs[-1], "b7"], ["z"], name="bad")],
         inputs + [b7], [vi("z", None)], inits)


def zeros(name, dims):
    n = 1
    for d in dims:
        n *= d
    return ten(name, dims, [0.1] * n)


# LSTM both ways with B, initial_h, initial_c and peepholes P; Y_h out
rnn_then_add("lstm_bidirectional_full.onnx", "[2, 1, 3]", "LSTM", ["x", "w", "r", "bb", "", "h0", "c0", "p"],
             [vi("x", [4, 1, 2])],
             [zeros("w", [2, 12, 2]), zeros("r", [2, 12, 3]), zeros("bb", [2, 24]), zeros("h0", [2, 1, 3]),
              zeros("c0", [2, 1, 3]), zeros("p", [2, 9])],
             outs=("y", "yh"), hidden_size=3, direction="bidirectional")
# LSTM batch-first (layout 1), input_forget and clip
rnn_then_add("lstm_layout1.onnx", "[2, 4, 1, 3]", "LSTM", ["x", "w", "r"], [vi("x", [2, 4, 2])],
             [zeros("w", [1, 12, 2]), zeros("r", [1, 12, 3])], hidden_size=3, layout=1, input_forget=1, clip=5.0)
# GRU reverse, linear_before_reset, with B
rnn_then_add("gru_reverse_lbr.onnx", "[3, 1, 2, 4]", "GRU", ["x", "w", "r", "bb"], [vi("x", [3, 2, 5])],
             [zeros("w", [1, 12, 5]), zeros("r", [1, 12, 4]), zeros("bb", [1, 24])], hidden_size=4,
             direction="reverse", linear_before_reset=1)
# RNN with Relu and a LeakyRelu-free activation list, clip, initial_h
rnn_then_add("rnn_relu_h0.onnx", "[1, 2, 3]", "RNN", ["x", "w", "r", "", "", "h0"], [vi("x", [5, 2, 1])],
             [zeros("w", [1, 3, 1]), zeros("r", [1, 3, 3]), zeros("h0", [1, 2, 3])], outs=("y", "yh"),
             hidden_size=3, activations=["Relu"], clip=2.0)
# GRU with explicit activations (HardSigmoid with alpha and beta, Tanh)
rnn_then_add("gru_hardsigmoid.onnx", "[2, 1, 1, 2]", "GRU", ["x", "w", "r"], [vi("x", [2, 1, 3])],
             [zeros("w", [1, 6, 3]), zeros("r", [1, 6, 2])], hidden_size=2, activations=["HardSigmoid", "Tanh"],
             activation_alpha=[0.3], activation_beta=[0.4])


# the composite importers (onnx_compose.inc), valid, then the same wrong Add
def op_then_add(fname, shape, op, ins, inputs, inits=(), opset=13, **attrs):
    save(fname, "node 'bad' (Add): cannot broadcast %s and [7]" % shape,
         [h.make_node(op, ins, ["y"], name="r", **attrs), h.make_node("Add", ["y", "b7"], ["z"], name="bad")],
         inputs + [b7], [vi("z", None)], list(inits), opset)


x23f = [vi("x", [2, 3])]
op_then_add("thresholded_relu_then_add.onnx", "[2, 3]", "ThresholdedRelu", ["x"], x23f, alpha=0.5)
op_then_add("softsign_then_add.onnx", "[2, 3]", "Softsign", ["x"], x23f)
op_then_add("shrink_then_add.onnx", "[2, 3]", "Shrink", ["x"], x23f, bias=0.1, lambd=0.3)
op_then_add("prelu_then_add.onnx", "[2, 3]", "PRelu", ["x", "s"], x23f, [ten("s", [3], [0.1, 0.2, 0.3])])
op_then_add("trilu_lower_k_then_add.onnx", "[3, 4]", "Trilu", ["x", "k"], [vi("x", [3, 4])],
            [ten("k", [], [1], I64)], opset=14, upper=0)
op_then_add("eyelike_then_add.onnx", "[3, 4]", "EyeLike", ["x"], [vi("x", [3, 4])], k=1)
op_then_add("space_to_depth_then_add.onnx", "[1, 8, 2, 2]", "SpaceToDepth", ["x"], [vi("x", [1, 2, 4, 4])],
            blocksize=2)
op_then_add("depth_to_space_crd_then_add.onnx", "[1, 2, 4, 4]", "DepthToSpace", ["x"], [vi("x", [1, 8, 2, 2])],
            blocksize=2, mode="CRD")
op_then_add("onehot_axis0_then_add.onnx", "[4, 3]", "OneHot", ["i", "d", "v"], [vi("i", [3], I64)],
            [ten("d", [], [4], I64), ten("v", [2], [0.0, 1.0])], opset=11, axis=0)
op_then_add("reverse_sequence_then_add.onnx", "[4, 2, 3]", "ReverseSequence", ["x", "l"], [vi("x", [4, 2, 3])],
            [ten("l", [2], [2, 4], I64)], opset=10, time_axis=0, batch_axis=1)
op_then_add("nll_weight_none_then_add.onnx", "[2]", "NegativeLogLikelihoodLoss", ["x", "t", "w"],
            [vi("x", [2, 3]), vi("t", [2], I64)], [ten("w", [3], [1.0, 2.0, 3.0])], reduction="none",
            ignore_index=1)
op_then_add("sce_none_then_add.onnx", "[2]", "SoftmaxCrossEntropyLoss", ["x", "t"],
            [vi("x", [2, 3]), vi("t", [2], I64)], reduction="none")


# Resize / Upsample variants (onnx_resize.inc), valid, then the wrong Add;
# output extents are floor(in * scale), or the sizes given
def resize_then_add(fname, shape, ins, x, inits, opset=18, **attrs):
    op_then_add(fname, shape, "Resize", ins, [vi("x", x)], inits, opset, **attrs)


sc = lambda *v: ten("sc", [len(v)], list(v))  # noqa: E731
resize_then_add("resize_linear_half_pixel.onnx", "[1, 1, 6, 10]", ["x", "", "sc"], [1, 1, 3, 5], [sc(1, 1, 2, 2)],
                mode="linear")
resize_then_add("resize_cubic_align_corners.onnx", "[1, 1, 7, 4]", ["x", "", "sc"], [1, 1, 4, 4],
                [sc(1, 1, 1.75, 1)], mode="cubic", coordinate_transformation_mode="align_corners",
                cubic_coeff_a=-0.5, exclude_outside=1)
resize_then_add("resize_linear_antialias_down.onnx", "[1, 1, 4, 3]", ["x", "", "sc"], [1, 1, 8, 6],
                [sc(1, 1, 0.5, 0.5)], mode="linear", antialias=1)
resize_then_add("resize_nearest_sizes.onnx", "[1, 2, 5, 6]", ["x", "", "", "sz"], [1, 2, 3, 4],
                [ten("sz", [4], [1, 2, 5, 6], I64)], mode="nearest", nearest_mode="ceil",
                coordinate_transformation_mode="asymmetric")
resize_then_add("resize_sizes_axes_keep_ratio.onnx", "[1, 1, 6, 9]", ["x", "", "", "sz"], [1, 1, 4, 6],
                [ten("sz", [2], [6, 12], I64)], mode="nearest", axes=[2, 3], keep_aspect_ratio_policy="not_larger")
resize_then_add("resize_tf_crop.onnx", "[1, 1, 3, 3]", ["x", "roi", "", "sz"], [1, 1, 4, 4],
                [ten("roi", [8], [0, 0, 0.25, 0.25, 1, 1, 0.75, 0.75]), ten("sz", [4], [1, 1, 3, 3], I64)],
                mode="linear", coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-1.0)
resize_then_add("resize_pytorch_half_pixel.onnx", "[1, 1, 2, 9]", ["x", "", "sc"], [1, 1, 4, 3],
                [sc(1, 1, 0.5, 3)], mode="linear", coordinate_transformation_mode="pytorch_half_pixel")
op_then_add("upsample_then_add.onnx", "[1, 1, 4, 6]", "Upsample", ["x", "sc"], [vi("x", [1, 1, 2, 3])],
            [sc(1, 1, 2, 2)], opset=9, mode="nearest")


# ConvTranspose variants (onnx_convtranspose.inc), valid, then the wrong Add:
# out = stride (in - 1) + output_padding + dilation (k - 1) + 1 - pads
def convt_then_add(fname, shape, x, w, **attrs):
    wn = 1
    for d in w:
        wn *= d
    op_then_add(fname, shape, "ConvTranspose", ["x", "w"], [vi("x", x)], [ten("w", w, [0.5] * wn)], **attrs)


convt_then_add("convt_strided_padded.onnx", "[1, 2, 11, 8]", [1, 3, 5, 4], [3, 2, 3, 3], strides=[2, 2],
               pads=[1, 0, 0, 1], output_padding=[1, 0])
convt_then_add("convt_dilated_group.onnx", "[1, 4, 9, 9]", [1, 4, 5, 5], [4, 2, 3, 3], dilations=[2, 2], group=2)
convt_then_add("convt_same_upper.onnx", "[1, 2, 8, 6]", [1, 3, 4, 3], [3, 2, 3, 3], strides=[2, 2],
               auto_pad="SAME_UPPER")
convt_then_add("convt_output_shape.onnx", "[1, 2, 9, 6]", [1, 3, 4, 3], [3, 2, 3, 3], strides=[2, 2],
               output_shape=[9, 6])
convt_then_add("convt_1d.onnx", "[1, 2, 9]", [1, 3, 4], [3, 2, 3], strides=[2])


# onnx_json.c's importers with their less common options, valid, then the
# wrong Add on their first output
def multi_then_add(fname, shape, op, ins, inputs, inits, outs, opset=13, **attrs):
    save(fname, "node 'bad' (Add): cannot broadcast %s and [7]" % shape,
         [h.make_node(op, ins, list(outs), name="r", **attrs), h.make_node("Add", [outs[0], "b7"], ["z"], name="bad")],
         inputs + [b7], [vi("z", None)] + [vi(o, None) for o in outs[1:]], list(inits), opset)


multi_then_add("dropout_mask_then_add.onnx", "[2, 3]", "Dropout", ["x"], x23f, [], ("y", "mask"))
multi_then_add("maxpool_indices_then_add.onnx", "[1, 1, 2, 2]", "MaxPool", ["x"], [vi("x", [1, 1, 4, 4])], [],
               ("y", "idx"), kernel_shape=[2, 2], strides=[2, 2])
op_then_add("reduce_sum_noop_then_add.onnx", "[2, 3]", "ReduceSum", ["x"], x23f, opset=18, noop_with_empty_axes=1)
op_then_add("reduce_l1_then_add.onnx", "[2]", "ReduceL1", ["x"], x23f, axes=[1], keepdims=0)
op_then_add("slice_negative_step_then_add.onnx", "[2, 3]", "Slice", ["x", "st", "en", "ax", "sp"],
            [vi("x", [2, 6])], [ten("st", [1], [-1], I64), ten("en", [1], [-1000], I64), ten("ax", [1], [1], I64),
                                ten("sp", [1], [-2], I64)])


# Range over a symbolic dim (torch.arange(x.shape[0]) and its kin,
# onnx_attention.inc's import_range_symbolic; the valid forms are
# tests/onnx-ops.test's, against ONNX Runtime): delta, and a constant start,
# must be integers there
def shape_dim(x, k, out):
    return [h.make_node("Shape", [x], [out + "_s"]), h.make_node("Gather", [out + "_s", out + "_k"], [out])], \
        ten(out + "_k", [], [k], I64)


save("range_sym_delta_fraction.onnx", "node 'r' (Range): a Range over a symbolic dim needs an integral delta, not 0.5",
     shape_dim("x", 0, "n")[0] + [h.make_node("Cast", ["n"], ["nf"], to=F),
                                  h.make_node("Range", ["fzero", "nf", "half"], ["y"], name="r")],
     [vi("x", ["N", 3])], [y], [shape_dim("x", 0, "n")[1], ten("fzero", [], [0.0]), ten("half", [], [0.5])])
save("range_sym_delta_zero.onnx", "node 'r' (Range): Range needs a non-zero delta",
     shape_dim("x", 0, "n")[0] + [h.make_node("Range", ["zero", "n", "zero"], ["y"], name="r")],
     [vi("x", ["N", 3])], [y], [shape_dim("x", 0, "n")[1], ten("zero", [], [0], I64)])
save("range_sym_start_float.onnx", "node 'r' (Range): a Range over a symbolic dim needs an integral start, not 0.25",
     shape_dim("x", 0, "n")[0] + [h.make_node("Cast", ["n"], ["nf"], to=F),
                                  h.make_node("Range", ["q", "nf", "fone"], ["y"], name="r")],
     [vi("x", ["N", 3])], [y], [shape_dim("x", 0, "n")[1], ten("q", [], [0.25]), ten("fone", [], [1.0])])

# Clip before opset 11: min and max are attributes
op_then_add("clip_opset6_attrs_then_add.onnx", "[2, 3]", "Clip", ["x"], x23f, opset=6, min=-1.0, max=1.0)

# onnx_json.c's common importers at their less trodden corners: errors
# named at the node, and valid forms checked through the later Add
save("softmax_axis_below.onnx", "node 'sm' (Softmax): axis -3 is out of range for rank 2",
     [h.make_node("Softmax", ["x"], ["y"], axis=-3, name="sm")], x23f, [y])
save("conv_pads_negative.onnx", "node 'c' (Conv): negative pads are not supported",
     [h.make_node("Conv", ["x", "w"], ["y"], pads=[-1, 0, 0, 0], name="c")], [vi("x", [1, 1, 5, 5])], [y],
     [ten("w", [1, 1, 3, 3], [0.5] * 9)])
op_then_add("conv_valid_then_add.onnx", "[1, 1, 3, 2]", "Conv", ["x", "w"], [vi("x", [1, 1, 5, 4])],
            [ten("w", [1, 1, 3, 3], [0.5] * 9)], auto_pad="VALID")
# SAME_UPPER with a stride past the kernel: the total padding (2 - 1) 3 + 1 - 5 < 0 is none
op_then_add("conv_same_stride_then_add.onnx", "[1, 1, 2, 2]", "Conv", ["x", "w"], [vi("x", [1, 1, 5, 5])],
            [ten("w", [1, 1, 1, 1], [0.5])], auto_pad="SAME_UPPER", strides=[3, 3])
save("unsqueeze_axis_below.onnx", "node 'u' (Unsqueeze): axis -4 is out of range for rank 3",
     [h.make_node("Unsqueeze", ["x", "ax"], ["y"], name="u")], x23f, [y], [ten("ax", [1], [-4], I64)])
save("squeeze_symbolic_dim.onnx", "node 'q' (Squeeze): dim 0 of 'x' is not 1 and cannot be squeezed",
     [h.make_node("Squeeze", ["x", "ax"], ["y"], name="q")], [vi("x", ["N", 3])], [y], [ten("ax", [1], [0], I64)])
save("split_uneven_opset13.onnx", "node 's' (Split): extent 5 does not split evenly into 2 parts",
     [h.make_node("Split", ["x"], ["a", "b"], axis=0, name="s")], [vi("x", [5])], [vi("a", None), vi("b", None)])
save("split_num_outputs_mismatch.onnx", "node 's' (Split): num_outputs does not match the 2 outputs",
     [h.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=3, name="s")], [vi("x", [6])],
     [vi("a", None), vi("b", None)], opset=18)
op_then_add("constant_value_floats_then_add.onnx", "[3]", "Constant", [], [], value_floats=[1.0, 2.0, 3.0])
save("constant_of_shape_float.onnx", "node 'cs' (ConstantOfShape): the shape must be a 1-D integer tensor",
     [h.make_node("ConstantOfShape", ["sh"], ["y"], name="cs")], [], [y], [ten("sh", [2], [2.0, 3.0])])
save("constant_of_shape_rank2.onnx", "node 'cs' (ConstantOfShape): the shape must be a 1-D integer tensor",
     [h.make_node("ConstantOfShape", ["sh"], ["y"], name="cs")], [], [y], [ten("sh", [1, 2], [2, 3], I64)])
# Gemm with C and beta 0: C is left out, [2, 4]
op_then_add("gemm_beta0_then_add.onnx", "[2, 4]", "Gemm", ["a", "b", "c"], [vi("a", [2, 3])],
            [ten("b", [3, 4], [0.5] * 12), ten("c", [4], [1.0] * 4)], beta=0.0)
op_then_add("pad_wrap_then_add.onnx", "[2, 6]", "Pad", ["x", "p"], x23f, [ten("p", [4], [0, 1, 0, 2], I64)],
            opset=19, mode="wrap")

# If and Loop, more: a rank-2 condition; valid forms checked through the
# later Add (a run-time condition of one element, unnamed outputs, a scan
# of 65 steps, past the 64 its list first holds)
if_case("if_cond_rank2.onnx", "node 'n' (If): the condition must be a bool scalar (or one element), not i1 of rank 2",
        vi("c", [1, 1], BOOL))
then_two = sub([h.make_node("Identity", ["a"], ["t"]), h.make_node("Neg", ["a"], ["u"])], [], [vi("t", [2]), vi("u", [2])])
else_two = sub([h.make_node("Neg", ["a"], ["e"]), h.make_node("Identity", ["a"], ["f"])], [], [vi("e", [2]), vi("f", [2])])
for fname, cond, inits in (("if_runtime_unnamed_then_add.onnx", vi("c", [1], BOOL), []),
                           ("if_folded_unnamed_then_add.onnx", None, [ten("c", [], [1], BOOL)])):
    save(fname, "node 'bad' (Add): cannot broadcast [2] and [7]",
         [h.make_node("If", ["c"], ["", "y"], name="n", then_branch=then_two, else_branch=else_two),
          h.make_node("Add", ["y", "b7"], ["z"], name="bad")],
         ([cond] if cond else []) + [vi("a", [2]), b7], [vi("z", None)], inits)
scan_body = sub(bn + [h.make_node("Identity", ["v"], ["sc"])], bi, bo + [vi("sc", [2])], "body")
save("loop_scan65_then_add.onnx", "node 'bad' (Add): cannot broadcast [65, 2] and [7]",
     [h.make_node("Loop", ["m", "", "v0"], ["", "s"], name="n", body=scan_body),
      h.make_node("Add", ["s", "b7"], ["z"], name="bad")],
     [vi("v0", [2]), b7], [vi("z", None)], [ten("m", [], [65], I64)])

# Attention (onnx_attention.inc), more: heads of 0 and a symbolic hidden
# size, a negative qk_matmul_output_mode; present_key/present_value
# without a past are K and V as they are ([1, 2, 5, 4] for 2 heads of 4
# over 5 keys), checked through the later Add
one("attention_heads_zero.onnx", "node 'n' (Attention): Q's last dim must be a number divisible by Q's 0 heads",
    "Attention", qkv, [vi("q", [1, 2, 4]), vi("k", [1, 2, 4]), vi("v", [1, 2, 4])], opset=23, q_num_heads=0,
    kv_num_heads=2)
one("attention_heads_symbolic.onnx", "node 'n' (Attention): K's last dim must be a number divisible by K's 2 heads",
    "Attention", qkv, [vi("q", [1, 2, 4]), vi("k", [1, 2, "E"]), vi("v", [1, 2, 4])], opset=23, q_num_heads=2,
    kv_num_heads=2)
one("attention_qk_mode_negative.onnx", "node 'n' (Attention): qk_matmul_output_mode must be 0..3", "Attention", qkv,
    q4, opset=23, outs=("y", "", "", "qk"), qk_matmul_output_mode=-1)
save("attention_present_then_add.onnx", "node 'bad' (Add): cannot broadcast [1, 2, 5, 4] and [7]",
     [h.make_node("Attention", qkv, ["y", "pk", "pv"], name="n"), h.make_node("Add", ["pv", "b7"], ["z"], name="bad")],
     [vi("q", [1, 2, 3, 4]), vi("k", [1, 2, 5, 4]), vi("v", [1, 2, 5, 4]), b7], [vi("z", None), vi("y", None),
                                                                                   vi("pk", None)], opset=23)

# Shape's start and end (opset 15), clamped to [0, rank] as ONNX says: the
# folded shape's length shows through the later Add with an i64 [7]
b7i = vi("b7", [7], I64)
for fname, shape, attrs in (("shape_start_below_rank_then_add.onnx", "[3]", {"start": -5}),
                            ("shape_end_past_then_add.onnx", "[2]", {"start": 1, "end": 10}),
                            ("shape_end_before_start_then_add.onnx", "[0]", {"start": 2, "end": 1})):
    save(fname, "node 'bad' (Add): cannot broadcast %s and [7]" % shape,
         [h.make_node("Shape", ["x"], ["s"], name="n", **attrs), h.make_node("Add", ["s", "b7"], ["z"], name="bad")],
         [vi("x", [2, 3, 4]), b7i], [vi("z", None)], opset=15)
# a constant input that must be a number but depends on two symbolic dims:
# the hint names both
save("tile_repeats_two_symbols.onnx", "node 'n' (Tile): the input 'repeats' ('r') depends on symbolic dims; it must be a number; the symbolic dims 'N', 'M' can be fixed with --dim N=VALUE --dim M=VALUE",
     [h.make_node("Shape", ["x"], ["s"]), h.make_node("ReduceProd", ["s"], ["p"], keepdims=1),
      h.make_node("Identity", ["p"], ["r"]), h.make_node("Tile", ["v", "r"], ["y"], name="n")],
     [vi("x", ["N", "M"]), vi("v", [3])], [y])


# Valid models whose shapes are checked in --dump=graph (tests/onnx-ops-bad.test
# runs them when the fragment starts with "=dump: "): the line of the output y.
def dump(fname, want, nodes, inputs, inits=(), opset=13, out_type=F):
    save(fname, "=dump: " + want, nodes, inputs, [vi("y", None, out_type)], inits, opset)


def rnn_act_then_add(act, **attrs):
    rnn_then_add("rnn_%s_then_add.onnx" % act.lower(), "[1, 2, 3]", "RNN", ["x", "w", "r"], [vi("x", [5, 2, 1])],
                 [zeros("w", [1, 3, 1]), zeros("r", [1, 3, 3])], outs=("y", "yh"), hidden_size=3, activations=[act],
                 **attrs)


# every RNN activation function lgen knows, with and without alpha and beta
rnn_act_then_add("Affine", activation_alpha=[0.5], activation_beta=[0.1])
rnn_act_then_add("Elu")
rnn_act_then_add("LeakyRelu")
rnn_act_then_add("ThresholdedRelu", activation_alpha=[0.2])
rnn_act_then_add("ScaledTanh", activation_alpha=[1.5], activation_beta=[0.5])
rnn_act_then_add("Softsign")
rnn_act_then_add("Softplus")
op_then_add("layernorm_opset13_then_add.onnx", "[2, 3]", "LayerNormalization", ["x", "s"], x23f,
            [ten("s", [3], [1.0, 2.0, 3.0])], opset=13)
dump("instancenorm_f16.onnx", "-> y: f16(1, 2, 7)", [h.make_node("InstanceNormalization", ["x", "s", "b"], ["y"],
     name="r")], [vi("x", [1, 2, 7], T.FLOAT16)],
     [ten("s", [2], [1.0, 2.0], T.FLOAT16), ten("b", [2], [0.0, 1.0], T.FLOAT16)], out_type=T.FLOAT16)
dump("reduce_mean18_axes_noop.onnx", "-> y: f32(2, 1)", [h.make_node("ReduceMean", ["x", "a"], ["y"], name="r",
     noop_with_empty_axes=1)], x23f, [ten("a", [1], [1], I64)], opset=18)
dump("reduce_mean13_all.onnx", "-> y: f32(1, 1)", [h.make_node("ReduceMean", ["x"], ["y"], name="r")], x23f)

# Range over a symbolic dim (torch.arange(x.shape[0])): up, down, from 2, by 2, in f32
xN3 = [vi("x", ["N", 3])]
dimN = [h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "zero"], ["n"], axis=0)]
zero_i = ten("zero", [], [0], I64)


def range_sym(fname, want, start, limit, delta, cast=False):
    nodes = dimN + ([h.make_node("Cast", ["n"], ["nf"], to=F)] if cast else [])
    vals = {"start": start, "limit": limit, "delta": delta}
    names = []
    inits = [zero_i]
    for k in ("start", "limit", "delta"):
        if vals[k] == "n":
            names.append("nf" if cast else "n")
        else:
            names.append("c_" + k)
            inits.append(ten("c_" + k, [], [vals[k]], F if cast else I64))
    dump(fname, want, nodes + [h.make_node("Range", names, ["y"], name="r")], xN3, inits,
         out_type=F if cast else I64)


range_sym("range_sym_up.onnx", "-> y: i64(N)", 0, "n", 1)
range_sym("range_sym_down.onnx", "-> y: i64(N)", "n", 0, -1)
range_sym("range_sym_from2.onnx", "-> y: i64(N - 2)", 2, "n", 1)
range_sym("range_sym_by2.onnx", "-> y: i64(N ceildiv 2)", 0, "n", 2)
range_sym("range_sym_f32.onnx", "-> y: f32(N)", 0.0, "n", 1.0, cast=True)

# Slice with an end from a symbolic dim (a position table cut to the
# sequence length), by 1 and by 2, and of a symbolic extent to its end
table = ten("t", [10, 4], [0.5] * 40)
endN = dimN + [h.make_node("Unsqueeze", ["n", "ax0"], ["e"])]
ax0 = ten("ax0", [1], [0], I64)
# (a start of 0 is folded away: N, not N - 0, in the dump, the header and the C)
dump("slice_sym_end.onnx", "-> y: f32(N, 4)", endN + [h.make_node("Slice", ["t", "st", "e", "ax0"], ["y"], name="r")],
     xN3, [zero_i, table, ax0, ten("st", [1], [0], I64)])
dump("slice_sym_end_from0_by2.onnx", "-> y: f32(N ceildiv 2, 4)",
     endN + [h.make_node("Slice", ["t", "st", "e", "ax0", "sp"], ["y"], name="r")],
     xN3, [zero_i, table, ax0, ten("st", [1], [0], I64), ten("sp", [1], [2], I64)])
dump("slice_sym_end_by2.onnx", "-> y: f32((N - 1) ceildiv 2, 4)",
     endN + [h.make_node("Slice", ["t", "st", "e", "ax0", "sp"], ["y"], name="r")],
     xN3, [zero_i, table, ax0, ten("st", [1], [1], I64), ten("sp", [1], [2], I64)])
dump("slice_sym_extent.onnx", "-> y: f32(N - 1, 3)", [h.make_node("Slice", ["x", "st", "en", "ax0"], ["y"], name="r")],
     xN3, [ax0, ten("st", [1], [1], I64), ten("en", [1], [2 ** 63 - 1], I64)])
for fname, st, en, sp in [("slice_sym_extent_back.onnx", -1, 2 ** 63 - 1, 1), ("slice_sym_extent_end.onnx", 0, 2, 1),
                          ("slice_sym_extent_step.onnx", 0, 2 ** 63 - 1, -1)]:
    one(fname, "node 'n' (Slice): dim 0 of 'x' is symbolic (N); Slice supports a start from the front", "Slice",
        ["x", "st", "en", "ax0", "sp"], xN3, [ax0, ten("st", [1], [st], I64), ten("en", [1], [en], I64),
                                              ten("sp", [1], [sp], I64)])

# ConvTranspose dilated and strided on one axis or both ((in - 1) s + (K - 1) d + 1),
# SAME_LOWER (in * s) and VALID
convt_then_add("convt_dilated_strided.onnx", "[1, 3, 11, 11]", [1, 2, 4, 4], [2, 3, 3, 3], strides=[2, 2],
               dilations=[2, 2])
convt_then_add("convt_dilated_strided_h.onnx", "[1, 3, 11, 8]", [1, 2, 4, 4], [2, 3, 3, 3], strides=[2, 1],
               dilations=[2, 2])
convt_then_add("convt_same_lower.onnx", "[1, 2, 8, 6]", [1, 3, 4, 3], [3, 2, 3, 3], strides=[2, 2],
               auto_pad="SAME_LOWER")
convt_then_add("convt_valid.onnx", "[1, 2, 9, 9]", [1, 3, 4, 4], [3, 2, 3, 3], strides=[2, 2], auto_pad="VALID")
