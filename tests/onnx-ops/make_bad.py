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
