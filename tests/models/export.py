#!/usr/bin/python3
"""Export the real-model suite's PyTorch networks to ONNX (tests/models/).

  export.py OUTDIR [NAME...]      export NAME (default: all) to OUTDIR/NAME.onnx
  export.py --list                the names, one a line

Each network comes from torchvision's or torch.nn's own definitions, with
random weights drawn after torch.manual_seed(0) (BatchNorm statistics and
affine parameters randomised too, so that folding them into the convs is
tested), in eval mode, exported by torch.onnx.export. The files are
deterministic: the same torch gives the same bytes. A model is exported
again only when its file is missing or this script or torch changed (a
stamp beside it, NAME.onnx.stamp, records both).

Needs Debian's python3-torch and python3-torchvision (hence /usr/bin/python3).
Exit status: 0 done, 1 an export failed, 2 bad command line, 77 torch or
torchvision cannot be imported (the suite reports the models as skipped).
"""
import hashlib
import os
import sys

sys.dont_write_bytecode = True


# ---------------------------------------------------------------------------
# Networks written with torch.nn (torchvision has none of these kinds)

def unet(torch, nn):
    """A small UNet: two down levels by stride-2 convs, up by ConvTranspose2d
    (kernel 2 stride 2, and kernel 3 stride 2 with output_padding), skips
    concatenated, 1x1 conv head."""
    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(),
                             nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU())

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.e1 = block(3, 16)
            self.d1 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
            self.e2 = block(32, 32)
            self.d2 = nn.Conv2d(32, 64, 3, stride=2, padding=1)
            self.mid = block(64, 64)
            self.u2 = nn.ConvTranspose2d(64, 32, 2, stride=2)
            self.c2 = block(64, 32)
            self.u1 = nn.ConvTranspose2d(32, 16, 3, stride=2, padding=1, output_padding=1)
            self.c1 = block(32, 16)
            self.head = nn.Conv2d(16, 2, 1)

        def forward(self, x):
            a = self.e1(x)
            b = self.e2(self.d1(a))
            m = self.mid(self.d2(b))
            y = self.c2(torch.cat([self.u2(m), b], 1))
            y = self.c1(torch.cat([self.u1(y), a], 1))
            return self.head(y)
    return UNet()


def speech_rnn(torch, nn):
    """A keyword-spotting style model over T frames of 40 features: a 1-D conv
    front end, a 2-layer bidirectional LSTM, a GRU, and per-frame logits."""
    class SpeechRNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(40, 64, 5, padding=2)
            self.lstm = nn.LSTM(64, 48, num_layers=2, bidirectional=True, batch_first=True)
            self.gru = nn.GRU(96, 32, batch_first=True)
            self.out = nn.Linear(32, 12)

        def forward(self, x):                      # x: [1, T, 40]
            h = torch.relu(self.conv(x.transpose(1, 2))).transpose(1, 2)
            h, _ = self.lstm(h)
            h, _ = self.gru(h)
            return torch.log_softmax(self.out(h), -1)
    return SpeechRNN()


def text_transformer(torch, nn):
    """A small text encoder: token embedding (Gather) plus learned positions
    sliced to the sequence length, 2 post-LN encoder layers (d = 128, 4
    heads), mean over the sequence, a classifier. The sequence length S is
    symbolic, so the export has PyTorch's Shape/Gather/Slice plumbing."""
    class TextTransformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(1000, 128)
            self.pos = nn.Parameter(torch.randn(512, 1, 128) * 0.1)
            layer = nn.TransformerEncoderLayer(128, 4, 256, dropout=0.0)  # batch_first=False: no fast path
            self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.cls = nn.Linear(128, 5)

        def forward(self, tokens):                 # tokens: [S, 1] int64
            h = self.emb(tokens) + self.pos[:tokens.shape[0]]
            h = self.enc(h)
            return self.cls(h.mean(0))
    return TextTransformer()


def bert_layer(torch, nn):
    """One BERT-base-sized encoder layer: d = 768, 12 heads, feed-forward
    3072, GELU, post-LN; sequence S symbolic (the bench runs 128 and 384)."""
    return nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0, activation="gelu")


def vit_tiny(torch, nn):
    """ViT-Ti/16 (hidden 192, 3 heads, 12 layers) from torchvision's
    VisionTransformer class, at 224 x 224."""
    from torchvision.models.vision_transformer import VisionTransformer
    return VisionTransformer(image_size=224, patch_size=16, num_layers=12, num_heads=3, hidden_dim=192,
                             mlp_dim=768, num_classes=1000)


def tv(name, **kw):
    def make(torch, nn):
        import torchvision
        return getattr(torchvision.models, name)(weights=None, **kw)
    return make


def tv_seg(name, **kw):
    def make(torch, nn):
        import torchvision

        class Out(nn.Module):  # the segmentation models return a dict
            def __init__(self):
                super().__init__()
                self.m = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None, **kw)

            def forward(self, x):
                return self.m(x)["out"]
        return Out()
    return make


# name: (constructor, inputs [(name, shape, dtype)], outputs, dynamic axes, opset)
# A shape entry that is a string is a symbolic dim (dynamic_axes); the
# example input uses the value after the '=' sign.
EXPORTS = {
    "resnet18": (tv("resnet18"), [("input", [1, 3, 224, 224], "f32")], ["logits"], 17),
    "resnet18_dynbatch": (tv("resnet18"), [("input", ["N=1", 3, 224, 224], "f32")], ["logits"], 17),
    # not in the suite: bench/scale.py builds its C (102 MB of weights)
    "resnet50": (tv("resnet50"), [("input", [1, 3, 224, 224], "f32")], ["logits"], 17),
    "mobilenet_v3_small": (tv("mobilenet_v3_small"), [("input", [1, 3, 224, 224], "f32")], ["logits"], 17),
    "efficientnet_b0": (tv("efficientnet_b0"), [("input", [1, 3, 224, 224], "f32")], ["logits"], 17),
    "shufflenet_v2": (tv("shufflenet_v2_x1_0"), [("input", [1, 3, 224, 224], "f32")], ["logits"], 17),
    "regnet_y_400mf": (tv("regnet_y_400mf"), [("input", [1, 3, 224, 224], "f32")], ["logits"], 17),
    "squeezenet1_1": (tv("squeezenet1_1"), [("input", [1, 3, 224, 224], "f32")], ["logits"], 13),
    "densenet121": (tv("densenet121"), [("input", [1, 3, 224, 224], "f32")], ["logits"], 17),
    "vit_tiny": (vit_tiny, [("input", [1, 3, 224, 224], "f32")], ["logits"], 17),
    "lraspp_mobilenet_v3": (tv_seg("lraspp_mobilenet_v3_large", num_classes=4),
                            [("input", [1, 3, 160, 160], "f32")], ["out"], 17),
    "unet": (unet, [("input", [1, 3, 64, 64], "f32")], ["out"], 17),
    "speech_rnn": (speech_rnn, [("input", [1, "T=50", 40], "f32")], ["logprobs"], 14),
    "text_transformer": (text_transformer, [("tokens", ["S=24", 1], "i64")], ["logits"], 17),
    "bert_layer": (bert_layer, [("input", ["S=128", 1, 768], "f32")], ["output"], 17),
}


def randomise(torch, model):
    """Seeded random BatchNorm statistics and affine parameters (torch
    initialises them to 0 mean, unit variance, weight 1, bias 0, which would
    leave BN folding untested), and seeded small values in every parameter
    that its initialiser leaves all zero (biases; ViT's class token and its
    head, which would make every logit 0 and the check prove nothing)."""
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            if p.is_floating_point() and not p.any():
                p.copy_((torch.rand(p.shape, generator=g) - 0.5) * 0.2)
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            n = m.num_features
            with torch.no_grad():
                m.running_mean.copy_((torch.rand(n, generator=g) - 0.5) * 0.2)
                m.running_var.copy_(torch.rand(n, generator=g) + 0.5)
                if m.affine:
                    m.weight.copy_(torch.rand(n, generator=g) + 0.5)
                    m.bias.copy_((torch.rand(n, generator=g) - 0.5) * 0.2)


def stamp_of(torch):
    with open(os.path.abspath(__file__), "rb") as f:
        return "%s torch=%s\n" % (hashlib.sha256(f.read()).hexdigest(), torch.__version__)


def export_one(torch, name, path):
    make, inputs, outputs, opset = EXPORTS[name]
    torch.manual_seed(0)
    model = make(torch, torch.nn)
    randomise(torch, model)
    model.eval()
    args, names, dyn = [], [], {}
    g = torch.Generator().manual_seed(2)
    for iname, shape, dtype in inputs:
        concrete = []
        for k, d in enumerate(shape):
            if isinstance(d, str):
                sym, val = d.split("=")
                dyn.setdefault(iname, {})[k] = sym
                concrete.append(int(val))
            else:
                concrete.append(d)
        if dtype == "i64":
            args.append(torch.randint(0, 1000, concrete, generator=g, dtype=torch.int64))
        else:
            args.append(torch.randn(concrete, generator=g))
        names.append(iname)
    if dyn:  # the outputs' dims follow from the inputs': let the exporter name them
        for o in outputs:
            dyn[o] = {}
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, tuple(args), tmp, input_names=names, output_names=outputs,
                          dynamic_axes=dyn or None, opset_version=opset, do_constant_folding=True)
    os.replace(tmp, path)


def main(argv):
    if argv[1:2] == ["--list"]:
        print("\n".join(EXPORTS))
        return 0
    if len(argv) < 2 or argv[1].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    out = argv[1]
    names = argv[2:] or list(EXPORTS)
    bad = [n for n in names if n not in EXPORTS]
    if bad:
        print("export.py: unknown model %s (see --list)" % ", ".join(bad), file=sys.stderr)
        return 2
    try:
        import torch
        import torchvision  # noqa: F401
    except ImportError as e:
        print("export.py: cannot import torch and torchvision (%s): install python3-torch and "
              "python3-torchvision" % e, file=sys.stderr)
        return 77
    torch.set_num_threads(1)
    os.makedirs(out, exist_ok=True)
    stamp = stamp_of(torch)
    status = 0
    for name in names:
        path = os.path.join(out, name + ".onnx")
        try:
            with open(path + ".stamp") as f:
                if f.read() == stamp and os.path.exists(path):
                    continue
        except OSError:
            pass
        try:
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                export_one(torch, name, path)
            with open(path + ".stamp", "w") as f:
                f.write(stamp)
            print("export.py: %s -> %s" % (name, path), flush=True)
        except Exception as e:  # one model's failure does not stop the others
            print("export.py: %s: export failed: %s: %s" % (name, type(e).__name__, e), file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
