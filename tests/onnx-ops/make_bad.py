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
resize("resize_scale_negative.onnx", "node 'rs' (Resize): scale -2 of dim 2 is not a positive scale lgen can apply",
       ["x", "", "sc"], [ten("sc", [4], [1, 1, -2, 2])])
resize("resize_symbolic_sizes.onnx", "is symbolic (H) and resized to 7, not an integer multiple",
       ["x", "", "", "sz"], [ten("sz", [4], [1, 1, 7, 8], T.INT64)], x=[vi("x", [1, 1, "H", 4])])
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
