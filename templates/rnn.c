/* rnn: one direction of ONNX's RNN, GRU or LSTM (kind 0, 1, 2), a C loop
 * over time, for a sequence length known only at run time. xw [seq, batch,
 * G*H] is the input projection of the whole sequence with its biases (one
 * matmul before this call; GRU's Rbh apart, in rb), rt [H, G*H] is R
 * transposed, gates in ONNX's order (i o f c; z r h; one for RNN). Optional
 * (null when absent): rb [H], h0 and c0 [batch, H], p [3H] (peepholes i o
 * f), lens [batch]. Outputs y [seq, batch, H] (rows past a sequence's
 * length are 0), yh and yc [batch, H] (the state after the sequence's last
 * step, 0 after none; yc null but for LSTM). The batch rows are independent, so they are
 * the parallel loop and each runs its whole sequence; work holds a row's
 * state and gates, (G + 3) * H values of @C@ per row. reverse runs each
 * sequence's first len steps backwards (as ONNX Runtime does). Activations
 * are codes with their alpha and beta (lgen_rnn_act), clip > 0 clips every
 * gate's input. */
static @C@ lgen_rnn_act_@S@(int f, @C@ x, @C@ alpha, @C@ beta)
{
  switch (f) {
  case 0: return (@C@)1 / ((@C@)1 + @CEXP@(-x));            /* Sigmoid */
  case 1: return @CTANH@(x);                                /* Tanh */
  case 2: return x > 0 ? x : (@C@)0;                        /* Relu */
  case 3: return alpha * x + beta;                          /* Affine */
  case 4: return x >= 0 ? x : alpha * x;                    /* LeakyRelu */
  case 5: return x > alpha ? x : (@C@)0;                    /* ThresholdedRelu */
  case 6: return alpha * @CTANH@(beta * x);                 /* ScaledTanh */
  case 7: {                                                 /* HardSigmoid */
    @C@ v = alpha * x + beta;
    return v < 0 ? (@C@)0 : v > 1 ? (@C@)1 : v;
  }
  case 8: return x >= 0 ? x : alpha * (@CEXP@(x) - (@C@)1); /* Elu */
  case 9: return x / ((@C@)1 + (x < 0 ? -x : x));           /* Softsign */
  default: return (@C@)log1p((double)@CEXP@(x));            /* Softplus */
  }
}

static @C@ lgen_rnn_clip_@S@(@C@ x, @C@ clip)
{
  if (clip > 0)
    x = x < -clip ? -clip : x > clip ? clip : x;
  return x;
}

/* g[lo, hi) += v rt[:, lo, hi): a row of H values times columns of rt. */
static void lgen_rnn_gemv_@S@(@C@ *restrict g, const @C@ *restrict v,
                              const @T@ *restrict rt, int64_t hid, int64_t gh,
                              int64_t lo, int64_t hi)
{
  for (int64_t k = 0; k < hid; k++) {
    const @C@ vk = v[k];
    const @T@ *restrict row = rt + k * gh;
    for (int64_t q = lo; q < hi; q++)
      g[q] += vk * @TOC@(row[q]);
  }
}

static void lgen_rnn_@S@(const @T@ *restrict xw, const @T@ *restrict rt,
                         const @T@ *restrict rb, const @T@ *restrict h0,
                         const @T@ *restrict c0, const @T@ *restrict p,
                         const @I@ *restrict lens, @T@ *restrict y, @T@ *restrict yh,
                         @T@ *restrict yc, @C@ *restrict work, int64_t seq,
                         int64_t batch, int64_t hid, int kind, int reverse,
                         int af, @C@ alpha_f, @C@ beta_f, int ag, @C@ alpha_g,
                         @C@ beta_g, int ah, @C@ alpha_h, @C@ beta_h, @C@ clip,
                         int input_forget, int linear_before_reset)
{
  const int64_t G = kind == 0 ? 1 : kind == 1 ? 3 : 4, gh = G * hid;
  LGEN_OMP(omp for)
  for (int64_t b = 0; b < batch; b++) {
    @C@ *restrict h = work + b * (G + 3) * hid, *restrict c = h + hid, *restrict g = c + hid;
    @C@ *restrict tmp = g + gh;
    int64_t len = lens ? (int64_t)lens[b] : seq;
    len = len < 0 ? 0 : len > seq ? seq : len;
    for (int64_t j = 0; j < hid; j++) {
      h[j] = h0 ? @TOC@(h0[b * hid + j]) : (@C@)0;
      c[j] = c0 ? @TOC@(c0[b * hid + j]) : (@C@)0;
    }
    for (int64_t s = 0; s < len; s++) {
      const int64_t t = reverse ? len - 1 - s : s;
      const @T@ *restrict x = xw + (t * batch + b) * gh;
      @T@ *restrict out = y + (t * batch + b) * hid;
      for (int64_t q = 0; q < gh; q++)
        g[q] = @TOC@(x[q]);
      if (kind == 0) { /* RNN: h = f(x + h R^T) */
        lgen_rnn_gemv_@S@(g, h, rt, hid, gh, 0, gh);
        for (int64_t j = 0; j < hid; j++)
          h[j] = lgen_rnn_act_@S@(af, lgen_rnn_clip_@S@(g[j], clip), alpha_f, beta_f);
      } else if (kind == 1) { /* GRU: z, r, then h's gate with r applied */
        lgen_rnn_gemv_@S@(g, h, rt, hid, gh, 0, 2 * hid);
        for (int64_t j = 0; j < 2 * hid; j++)
          g[j] = lgen_rnn_act_@S@(af, lgen_rnn_clip_@S@(g[j], clip), alpha_f, beta_f);
        const @C@ *z = g, *r = g + hid;
        @C@ *hg = g + 2 * hid;
        if (linear_before_reset) { /* r (h Rh^T + Rbh) */
          for (int64_t j = 0; j < hid; j++)
            tmp[j] = rb ? @TOC@(rb[j]) : (@C@)0;
          lgen_rnn_gemv_@S@(tmp - 2 * hid, h, rt, hid, gh, 2 * hid, gh);
          for (int64_t j = 0; j < hid; j++)
            hg[j] += r[j] * tmp[j];
        } else { /* (r h) Rh^T + Rbh */
          for (int64_t j = 0; j < hid; j++)
            tmp[j] = r[j] * h[j];
          lgen_rnn_gemv_@S@(g, tmp, rt, hid, gh, 2 * hid, gh);
          for (int64_t j = 0; rb && j < hid; j++)
            hg[j] += @TOC@(rb[j]);
        }
        for (int64_t j = 0; j < hid; j++) {
          @C@ hc = lgen_rnn_act_@S@(ag, lgen_rnn_clip_@S@(hg[j], clip), alpha_g, beta_g);
          h[j] = hc + z[j] * (h[j] - hc); /* (1 - z) hc + z h */
        }
      } else { /* LSTM: gates i, o, f, c */
        lgen_rnn_gemv_@S@(g, h, rt, hid, gh, 0, gh);
        for (int64_t j = 0; j < hid; j++) {
          @C@ pi = g[j], po = g[hid + j], pf = g[2 * hid + j], pc = g[3 * hid + j], cp = c[j];
          if (p) {
            pi += @TOC@(p[j]) * cp;
            pf += @TOC@(p[2 * hid + j]) * cp;
          }
          @C@ i = lgen_rnn_act_@S@(af, lgen_rnn_clip_@S@(pi, clip), alpha_f, beta_f);
          @C@ f = input_forget ? (@C@)1 - i
                : lgen_rnn_act_@S@(af, lgen_rnn_clip_@S@(pf, clip), alpha_f, beta_f);
          @C@ cc = lgen_rnn_act_@S@(ag, lgen_rnn_clip_@S@(pc, clip), alpha_g, beta_g);
          @C@ cn = f * cp + i * cc;
          if (p)
            po += @TOC@(p[hid + j]) * cn;
          @C@ o = lgen_rnn_act_@S@(af, lgen_rnn_clip_@S@(po, clip), alpha_f, beta_f);
          c[j] = cn;
          h[j] = o * lgen_rnn_act_@S@(ah, cn, alpha_h, beta_h);
        }
      }
      for (int64_t j = 0; j < hid; j++)
        out[j] = @FROMC@(h[j]);
    }
    for (int64_t t = len; t < seq; t++) /* past the sequence's end */
      for (int64_t j = 0; j < hid; j++)
        y[(t * batch + b) * hid + j] = @FROMC@((@C@)0);
    for (int64_t j = 0; j < hid; j++) { /* a sequence of length 0 ends at 0, as ONNX Runtime's */
      yh[b * hid + j] = @FROMC@(len ? h[j] : (@C@)0);
      if (yc)
        yc[b * hid + j] = @FROMC@(len ? c[j] : (@C@)0);
    }
  }
}
