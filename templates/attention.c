/* attention, flash-style (ops.md: attention, online_attention,
 * attention_scores): O = softmax(scale * Q K^T + bias) V over
 * q [B, H, Lq, D], k [B, Hkv, Lk, D], v [B, Hkv, Lk, Dv] (query head h reads
 * key/value head h / (H / Hkv)), computed in @C@ (float for f16 and f32, double for f64).
 *
 * The work items are (b, h, query tile of QT rows), shared by the threads
 * (an orphaned omp for, dynamic: causal tiles differ in cost). Each walks
 * the keys in tiles of KT with a running max m and a running sum l per
 * query row (the online-softmax recurrence): a tile's scores S = Qs Kt go
 * through softcap, the mask and the causal and length cuts, then m' =
 * max(m, max S), P = exp(S - m'), l = l exp(m - m') + sum P, Oacc = Oacc
 * exp(m - m') + P V. The Lq x Lk score matrix never exists: a thread's
 * scratch is one slot of the workspace (slot_floats values of @C@: the scaled
 * query tile, the transposed key tile, a value tile for f16, S/P, Oacc, m
 * and l; lower_ext.c sizes it with the same QT and KT), so memory is
 * O(tile). Key tiles that the causal diagonal, kv_lens or a short mask cut
 * off entirely are skipped; a row whose every key is masked gives zeros
 * (l = 0), as ONNX's reference does.
 *
 * The scores are held transposed, S^T [KT][QT] (keys by rows, queries in
 * the vector lanes), so that no key tile is transposed: S^T = K Qs^T runs
 * in 8 x 32 register blocks (8 keys broadcast straight from K's rows, 32
 * queries of the query tile, packed once per work item as [QT / 32][D][32]);
 * the online softmax walks S^T's rows with each query's max, sum and
 * rescale in the lanes; P V broadcasts 8 queries of a P^T row against 32
 * value columns. Every inner loop is contiguous and the compiler keeps the
 * blocks in registers; exp is lgen's vectorisable lgen_expneg_f32 (its
 * arguments are <= 0; libm's exp for f64). A query's sum is taken key by key in order, so the
 * results do not depend on OpenMP or the threads.
 *
 * k_t: k is stored [B, Hkv, D, Lk] (attention's k_map), its key tiles read
 * in place through the map; v_t: v is stored [B, Hkv, Dv, Lk] (v_map), each
 * value tile gathered into the scratch as [KT][Dv] (as f16 values are);
 * q_t: q is stored [B, H, D, Lq] (q_map), read through the map as its tile
 * is copied into the scratch; o_t: the output is stored [B, H, Dv, Lq]
 * (o_map), written through the map.
 *
 * Optional pointers (NULL when absent): fmask (float bias, @T@) or bmask
 * (bool, keep where true), strided by msb/msh/msi/msj (0: broadcast) with
 * mask_lk key columns (keys at or past it are masked); kv_lens[b] (keys at
 * or past it are masked); o (the output [B, H, Lq, Dv]); mx, sm (the running
 * max and sum per row, online_attention); scores ([B, H, Lq, Lk], the
 * materialised QK product of attention_scores: qk_mode 0/1 after softcap, 2
 * after the mask, 3 the softmax). causal: key j is masked for query i when
 * j > i + off, off = causal_off, or kv_lens[b] - Lq with causal_lens. */
enum { lgen_attn_qt_@S@ = 128, lgen_attn_kt_@S@ = 128 };

/* st[c][r] (rows QT apart) = sum_d k[c][d] qp[r / 32][d][r % 32] for the
 * keys c < kb * 8 (k[c][d] at k[c * sc + d * sd]: rows D apart, or a key
 * tile read in place from k stored transposed) and the queries r < qb * 32:
 * 8 x 32 register blocks */
static void lgen_attn_qk_@S@(const @C@ *restrict k, const @C@ *restrict qp,
                             @C@ *restrict st, int64_t kb, int64_t qb, int64_t D,
                             int64_t sc, int64_t sd)
{
  enum { QT = lgen_attn_qt_@S@ };
  for (int64_t r = 0; r < qb; r++)
    for (int64_t c = 0; c < kb; c++) {
      const @C@ *restrict a = k + c * 8 * sc, *restrict b = qp + r * D * 32;
      @C@ acc[8][32];
      for (int i = 0; i < 8; i++)
        for (int j = 0; j < 32; j++)
          acc[i][j] = 0.0f;
      for (int64_t d = 0; d < D; d++)
        for (int i = 0; i < 8; i++) {
          LGEN_OMP_SIMD(omp simd)
          for (int j = 0; j < 32; j++)
            acc[i][j] = @CFMA@(a[i * sc + d * sd], b[d * 32 + j], acc[i][j]);
        }
      for (int i = 0; i < 8; i++)
        for (int j = 0; j < 32; j++)
          st[(c * 8 + i) * QT + r * 32 + j] = acc[i][j];
    }
}

/* oa[r][x] += sum_c pt[c][r] v[c][x] for rb blocks of 8 queries, c < nk,
 * x < Dv (pt's rows QT apart, v's Dv apart): 8 x 32 register blocks */
static void lgen_attn_pv_@S@(const @C@ *restrict pt, const @C@ *restrict v,
                             @C@ *restrict oa, int64_t rb, int64_t nk, int64_t Dv)
{
  enum { QT = lgen_attn_qt_@S@ };
  for (int64_t r = 0; r < rb; r++) {
    const @C@ *restrict pr = pt + r * 8;
    @C@ *restrict o = oa + r * 8 * Dv;
    int64_t x0 = 0;
    for (; x0 + 32 <= Dv; x0 += 32) {
      @C@ acc[8][32];
      for (int i = 0; i < 8; i++)
        for (int j = 0; j < 32; j++)
          acc[i][j] = o[i * Dv + x0 + j];
      for (int64_t c = 0; c < nk; c++)
        for (int i = 0; i < 8; i++) {
          LGEN_OMP_SIMD(omp simd)
          for (int j = 0; j < 32; j++)
            acc[i][j] = @CFMA@(pr[c * QT + i], v[c * Dv + x0 + j], acc[i][j]);
        }
      for (int i = 0; i < 8; i++)
        for (int j = 0; j < 32; j++)
          o[i * Dv + x0 + j] = acc[i][j];
    }
    if (x0 < Dv) { /* the last Dv % 32 columns */
      int64_t w = Dv - x0;
      for (int64_t c = 0; c < nk; c++)
        for (int i = 0; i < 8; i++)
          for (int64_t j = 0; j < w; j++)
            o[i * Dv + x0 + j] = @CFMA@(pr[c * QT + i], v[c * Dv + x0 + j], o[i * Dv + x0 + j]);
    }
  }
}

static void lgen_attention_@S@(const @T@ *restrict q, const @T@ *restrict k,
                               const @T@ *restrict v, const @T@ *restrict fmask,
                               const unsigned char *restrict bmask, const @I@ *restrict kv_lens,
                               @T@ *restrict o, @T@ *restrict mx, @T@ *restrict sm,
                               @T@ *restrict scores, @C@ *restrict ws, int64_t slot_floats,
                               int64_t nslots, int64_t B, int64_t H, int64_t Hkv, int64_t Lq,
                               int64_t Lk, int64_t D, int64_t Dv, int64_t msb, int64_t msh,
                               int64_t msi, int64_t msj, int64_t mask_lk, @C@ scale,
                               @C@ softcap, int causal, int64_t causal_off, int causal_lens,
                               int qk_mode, int k_t, int v_t, int q_t, int o_t)
{
  enum { QT = lgen_attn_qt_@S@, KT = lgen_attn_kt_@S@ };
  const @C@ ninf = -1.0f / 0.0f;
  int64_t nqt = (Lq + QT - 1) / QT, group = H / Hkv;
  int direct = sizeof(@T@) == sizeof(@C@); /* f32 keys and values are read in place */
  int64_t ksj = k_t ? 1 : D, ksd = k_t ? Lk : 1; /* key j, dim d at kh[j * ksj + d * ksd] */
  int64_t qsi = q_t ? 1 : D, qsd = q_t ? Lq : 1;  /* query i, dim d at qh[i * qsi + d * qsd] */
  int64_t osi = o_t ? 1 : Dv, osx = o_t ? Lq : 1; /* output row i, column x likewise */
  LGEN_OMP(omp for schedule(dynamic))
  for (int64_t item = 0; item < B * H * nqt; item++) {
    int64_t b = item / (H * nqt), h = item / nqt % H, i0 = item % nqt * QT;
    int64_t nq = Lq - i0 < QT ? Lq - i0 : QT, rows = (nq + 31) / 32 * 32;
    int64_t slot = LGEN_THREAD_NUM() % nslots;
    @C@ *restrict qs = ws + slot * slot_floats; /* [QT / 32][D][32] */
    @C@ *restrict ks = qs + QT * D;             /* [KT][D], f16 or a last partial tile */
    @C@ *restrict vs = ks + KT * D;             /* [KT][Dv], f16 */
    @C@ *restrict st = vs + KT * Dv;            /* [KT][QT] */
    @C@ *restrict oa = st + KT * QT;            /* [QT][Dv] */
    @C@ *restrict m = oa + QT * Dv, *restrict l = m + QT;
    @C@ mnew[QT], msub[QT], sum[QT];
    const @T@ *qh = q + (b * H + h) * Lq * D + i0 * qsi;
    const @T@ *kh = k + (b * Hkv + h / group) * Lk * D;
    const @T@ *vh = v + (b * Hkv + h / group) * Lk * Dv;
    int64_t off = causal_lens && kv_lens ? (int64_t)kv_lens[b] - Lq : causal_off;
    int64_t kend = Lk; /* keys past it are masked for every row of the tile */
    if (causal && i0 + nq - 1 + off + 1 < kend)
      kend = i0 + nq - 1 + off + 1;
    if (kv_lens && (int64_t)kv_lens[b] < kend)
      kend = (int64_t)kv_lens[b];
    if ((fmask || bmask) && mask_lk < kend)
      kend = mask_lk;
    if (scores || kend < 0)
      kend = scores ? Lk : 0; /* attention_scores writes every score */
    for (int64_t r = 0; r < rows; r++) /* the scaled query tile, in panels of 32 queries */
      for (int64_t d = 0; d < D; d++)
        qs[(r / 32 * D + d) * 32 + r % 32] =
            r < nq ? scale * @TOC@(qh[r * qsi + d * qsd]) : 0.0f;
    for (int64_t r = 0; r < QT; r++) {
      for (int64_t x = 0; x < Dv; x++)
        oa[r * Dv + x] = 0.0f;
      m[r] = ninf;
      l[r] = 0.0f;
    }
    for (int64_t j0 = 0; j0 < kend; j0 += KT) {
      int64_t nk = kend - j0 < KT ? kend - j0 : KT, nk8 = (nk + 7) / 8 * 8;
      const @C@ *kt, *vt;
      int plain;
      int64_t sc = D, sd = 1;
      if (direct && nk8 == nk) { /* in place, through k's map */
        kt = (const @C@ *)(const void *)(kh + j0 * ksj);
        sc = ksj, sd = ksd;
      } else { /* converted, and zero keys up to a multiple of 8 */
        for (int64_t c = 0; c < nk8; c++)
          for (int64_t d = 0; d < D; d++)
            ks[c * D + d] = c < nk ? @TOC@(kh[(j0 + c) * ksj + d * ksd]) : 0.0f;
        kt = ks;
      }
      if (direct && !v_t) {
        vt = (const @C@ *)(const void *)(vh + j0 * Dv);
      } else if (!v_t) {
        for (int64_t c = 0; c < nk * Dv; c++)
          vs[c] = @TOC@(vh[j0 * Dv + c]);
        vt = vs;
      } else { /* v stored [Dv][Lk]: the tile's rows gathered, Dv runs of nk keys */
        for (int64_t x = 0; x < Dv; x++)
          for (int64_t c = 0; c < nk; c++)
            vs[c * Dv + x] = @TOC@(vh[x * Lk + j0 + c]);
        vt = vs;
      }
      lgen_attn_qk_@S@(kt, qs, st, nk8 / 8, rows / 32, D, sc, sd);
      /* softcap, the mask and the cuts; none of them inside the causal
       * region of an unmasked tile */
      plain = softcap <= 0.0f && !fmask && !bmask && !scores && !kv_lens &&
              (!causal || j0 + nk - 1 <= i0 + off);
      for (int64_t r = 0; r < nq && !plain; r++) {
        int64_t i = i0 + r;
        int64_t mrow = b * msb + h * msh + i * msi;
        int64_t srow = ((b * H + h) * Lq + i) * Lk;
        for (int64_t c = 0; c < nk; c++) {
          int64_t j = j0 + c;
          @C@ x = st[c * QT + r];
          if (softcap > 0.0f)
            x = softcap * @CTANH@(x / softcap);
          if (scores && qk_mode < 2)
            scores[srow + j] = @FROMC@(x);
          if (j >= mask_lk && (fmask || bmask))
            x = ninf;
          else if (fmask)
            x += @TOC@(fmask[mrow + j * msj]);
          else if (bmask && !bmask[mrow + j * msj])
            x = ninf;
          if ((causal && j > i + off) || (kv_lens && j >= (int64_t)kv_lens[b]))
            x = ninf;
          if (scores && qk_mode >= 2)
            scores[srow + j] = @FROMC@(x);
          st[c * QT + r] = x;
        }
      }
      /* the online softmax, every query of the tile in the lanes: the new
       * max, P = exp(S - max) (0 for masked scores, and for every key of a
       * query whose keys so far are all masked: msub = 0 keeps -inf - -inf
       * out), the sum of P, and the rescale of the earlier tiles' l and
       * Oacc by exp(m - mnew) */
      LGEN_OMP_SIMD(omp simd)
      for (int64_t r = 0; r < rows; r++)
        mnew[r] = m[r];
      for (int64_t c = 0; c < nk; c++) {
        LGEN_OMP_SIMD(omp simd)
        for (int64_t r = 0; r < rows; r++)
          mnew[r] = st[c * QT + r] > mnew[r] ? st[c * QT + r] : mnew[r];
      }
      LGEN_OMP_SIMD(omp simd)
      for (int64_t r = 0; r < rows; r++) {
        msub[r] = mnew[r] == ninf ? 0.0f : mnew[r];
        sum[r] = 0.0f;
      }
      for (int64_t c = 0; c < nk; c++) {
        @CSIMD@
        for (int64_t r = 0; r < rows; r++) {
          @C@ e = @CEXPNEG@(st[c * QT + r] - msub[r]);
          st[c * QT + r] = e;
          sum[r] += e;
        }
      }
      for (int64_t r = 0; r < rows; r++) {
        if (mnew[r] != m[r]) {
          @C@ alpha = @CEXPNEG@(m[r] - msub[r]); /* 0 when m was -inf */
          for (int64_t x = 0; x < Dv; x++)
            oa[r * Dv + x] *= alpha;
          l[r] *= alpha;
          m[r] = mnew[r];
        }
        l[r] += sum[r];
      }
      lgen_attn_pv_@S@(st, vt, oa, rows / 8, nk, Dv);
    }
    for (int64_t r = 0; r < nq; r++) {
      int64_t row = (b * H + h) * Lq + i0 + r;
      @C@ inv = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
      if (o)
        for (int64_t x = 0; x < Dv; x++)
          o[(b * H + h) * Lq * Dv + (i0 + r) * osi + x * osx] =
              @FROMC@(oa[r * Dv + x] * inv);
      if (mx)
        mx[row] = @FROMC@(m[r]);
      if (sm)
        sm[row] = @FROMC@(l[r]);
      if (scores && qk_mode == 3)
        for (int64_t j = 0; j < Lk; j++) {
          @C@ x = @TOC@(scores[row * Lk + j]);
          scores[row * Lk + j] = @FROMC@(l[r] > 0.0f ? @CEXP@(x - m[r]) * inv : 0.0f);
        }
    }
  }
}
