/* attention, flash-style (ops.md: attention, online_attention,
 * attention_scores): O = softmax(scale * Q K^T + bias) V over
 * q [B, H, Lq, D], k [B, Hkv, Lk, D], v [B, Hkv, Lk, Dv] (query head h reads
 * key/value head h / (H / Hkv)), computed in float whatever @T@ is.
 *
 * The work items are (b, h, query tile of QT rows), shared by the threads
 * (an orphaned omp for, dynamic: causal tiles differ in cost). Each walks
 * the keys in tiles of KT with a running max m and a running sum l per
 * query row (the online-softmax recurrence): a tile's scores S = Qs Kt go
 * through softcap, the mask and the causal and length cuts, then m' =
 * max(m, max S), P = exp(S - m'), l = l exp(m - m') + sum P, Oacc = Oacc
 * exp(m - m') + P V. The Lq x Lk score matrix never exists: a thread's
 * scratch is one slot of the workspace (slot_floats floats: the scaled
 * query tile, the transposed key tile, a value tile for f16, S/P, Oacc, m
 * and l; lower_ext.c sizes it with the same QT and KT), so memory is
 * O(tile). Key tiles that the causal diagonal, kv_lens or a short mask cut
 * off entirely are skipped; a row whose every key is masked gives zeros
 * (l = 0), as ONNX's reference does.
 *
 * Both contractions run in 8 x 32 register blocks (8 query rows, 32 keys or
 * value columns in `omp simd` loops) over packed panels: the query tile as
 * [QT / 8][D][8], the key tile transposed as [KT / 32][D][32], so that every
 * inner loop is contiguous and the compiler keeps the block in registers;
 * exp is lgen's vectorisable lgen_exp_f32. The sum of a row's exps is taken
 * in 16 fixed lanes, so results do not depend on OpenMP or the threads.
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

/* s[r][c] (rows KT apart) = sum_d qp[r / 8][d][r % 8] kp[c / 32][d][c % 32]
 * for rb blocks of 8 rows and cb panels of 32 columns: 8 x 32 register
 * blocks */
static void lgen_attn_qk_@S@(const float *restrict qp, const float *restrict kp, float *restrict s, int64_t rb,
                             int64_t cbs, int64_t D)
{
  enum { KT = lgen_attn_kt_@S@ };
  for (int64_t r = 0; r < rb; r++)
    for (int64_t cb = 0; cb < cbs; cb++) {
      const float *restrict a = qp + r * D * 8, *restrict b = kp + cb * D * 32;
      float acc[8][32];
      for (int i = 0; i < 8; i++)
        for (int j = 0; j < 32; j++)
          acc[i][j] = 0.0f;
      for (int64_t d = 0; d < D; d++)
        for (int i = 0; i < 8; i++) {
          LGEN_OMP_SIMD(omp simd)
          for (int j = 0; j < 32; j++)
            acc[i][j] = LGEN_FMAF(a[d * 8 + i], b[d * 32 + j], acc[i][j]);
        }
      for (int i = 0; i < 8; i++)
        for (int j = 0; j < 32; j++)
          s[(r * 8 + i) * KT + cb * 32 + j] = acc[i][j];
    }
}

/* oa[r][x] += sum_c p[r][c] v[c][x] for rb blocks of 8 rows, c < nk, x < Dv
 * (p's rows KT apart, v's Dv apart): 8 x 32 register blocks */
static void lgen_attn_pv_@S@(const float *restrict p, const float *restrict v, float *restrict oa, int64_t rb,
                             int64_t nk, int64_t Dv)
{
  enum { KT = lgen_attn_kt_@S@ };
  for (int64_t r = 0; r < rb; r++) {
    const float *restrict pr = p + r * 8 * KT;
    float *restrict o = oa + r * 8 * Dv;
    int64_t x0 = 0;
    for (; x0 + 32 <= Dv; x0 += 32) {
      float acc[8][32];
      for (int i = 0; i < 8; i++)
        for (int j = 0; j < 32; j++)
          acc[i][j] = o[i * Dv + x0 + j];
      for (int64_t c = 0; c < nk; c++)
        for (int i = 0; i < 8; i++) {
          LGEN_OMP_SIMD(omp simd)
          for (int j = 0; j < 32; j++)
            acc[i][j] = LGEN_FMAF(pr[i * KT + c], v[c * Dv + x0 + j], acc[i][j]);
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
            o[i * Dv + x0 + j] = LGEN_FMAF(pr[i * KT + c], v[c * Dv + x0 + j], o[i * Dv + x0 + j]);
    }
  }
}

static void lgen_attention_@S@(const @T@ *restrict q, const @T@ *restrict k, const @T@ *restrict v,
                               const @T@ *restrict fmask, const unsigned char *restrict bmask,
                               const @I@ *restrict kv_lens, @T@ *restrict o, @T@ *restrict mx, @T@ *restrict sm,
                               @T@ *restrict scores, float *restrict ws, int64_t slot_floats, int64_t nslots,
                               int64_t B, int64_t H, int64_t Hkv, int64_t Lq, int64_t Lk, int64_t D, int64_t Dv,
                               int64_t msb, int64_t msh, int64_t msi, int64_t msj, int64_t mask_lk, float scale,
                               float softcap, int causal, int64_t causal_off, int causal_lens, int qk_mode)
{
  enum { QT = lgen_attn_qt_@S@, KT = lgen_attn_kt_@S@ };
  const float ninf = -1.0f / 0.0f;
  int64_t nqt = (Lq + QT - 1) / QT, group = H / Hkv;
  int direct_v = sizeof(@T@) == sizeof(float); /* f32 values are read in place */
  LGEN_OMP(omp for schedule(dynamic))
  for (int64_t item = 0; item < B * H * nqt; item++) {
    int64_t b = item / (H * nqt), h = item / nqt % H, i0 = item % nqt * QT;
    int64_t nq = Lq - i0 < QT ? Lq - i0 : QT, rows = (nq + 7) / 8 * 8;
    int64_t slot = LGEN_THREAD_NUM() % nslots;
    float *restrict qs = ws + slot * slot_floats; /* [QT / 8][D][8] */
    float *restrict kt = qs + QT * D;             /* [KT / 32][D][32] */
    float *restrict vs = kt + D * KT;             /* [KT][Dv] */
    float *restrict s = vs + KT * Dv;             /* [QT][KT] */
    float *restrict oa = s + QT * KT;             /* [QT][Dv] */
    float *restrict m = oa + QT * Dv, *restrict l = m + QT;
    const @T@ *qh = q + ((b * H + h) * Lq + i0) * D;
    const @T@ *kh = k + (b * Hkv + h / group) * Lk * D, *vh = v + (b * Hkv + h / group) * Lk * Dv;
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
    for (int64_t r = 0; r < rows; r++) /* the scaled query tile, in panels of 8 rows */
      for (int64_t d = 0; d < D; d++)
        qs[(r / 8 * D + d) * 8 + r % 8] = r < nq ? scale * @TOF32@(qh[r * D + d]) : 0.0f;
    for (int64_t r = 0; r < QT; r++) {
      for (int64_t x = 0; x < Dv; x++)
        oa[r * Dv + x] = 0.0f;
      m[r] = ninf;
      l[r] = 0.0f;
    }
    for (int64_t j0 = 0; j0 < kend; j0 += KT) {
      int64_t nk = kend - j0 < KT ? kend - j0 : KT;
      const float *vt;
      int plain;
      for (int64_t c = 0; c < (nk + 31) / 32 * 32; c++) /* the key tile, transposed, in panels of 32 keys */
        for (int64_t d = 0; d < D; d++)
          kt[(c / 32 * D + d) * 32 + c % 32] = c < nk ? @TOF32@(kh[(j0 + c) * D + d]) : 0.0f;
      if (direct_v) {
        vt = (const float *)(const void *)(vh + j0 * Dv);
      } else {
        for (int64_t c = 0; c < nk * Dv; c++)
          vs[c] = @TOF32@(vh[j0 * Dv + c]);
        vt = vs;
      }
      lgen_attn_qk_@S@(qs, kt, s, rows / 8, (nk + 31) / 32, D);
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
          float x = s[r * KT + c];
          if (softcap > 0.0f)
            x = softcap * lgen_tanh_f32(x / softcap);
          if (scores && qk_mode < 2)
            scores[srow + j] = @FROMF32@(x);
          if (j >= mask_lk && (fmask || bmask))
            x = ninf;
          else if (fmask)
            x += @TOF32@(fmask[mrow + j * msj]);
          else if (bmask && !bmask[mrow + j * msj])
            x = ninf;
          if ((causal && j > i + off) || (kv_lens && j >= (int64_t)kv_lens[b]))
            x = ninf;
          if (scores && qk_mode >= 2)
            scores[srow + j] = @FROMF32@(x);
          s[r * KT + c] = x;
        }
      }
      /* the online softmax, row by row */
      for (int64_t r = 0; r < nq; r++) {
        float *restrict sr = s + r * KT;
        float part[16], mt = ninf, mnew, sum = 0.0f;
        int64_t c;
        for (int x = 0; x < 16; x++) /* the max in 16 lanes too */
          part[x] = ninf;
        for (c = 0; c + 16 <= nk; c += 16)
          for (int x = 0; x < 16; x++)
            part[x] = sr[c + x] > part[x] ? sr[c + x] : part[x];
        for (; c < nk; c++)
          mt = sr[c] > mt ? sr[c] : mt;
        for (int x = 0; x < 16; x++)
          mt = part[x] > mt ? part[x] : mt;
        mnew = mt > m[r] ? mt : m[r];
        if (mnew == ninf) { /* every key so far masked: P = 0 */
          for (c = 0; c < nk; c++)
            sr[c] = 0.0f;
          continue;
        }
        LGEN_OMP_SIMD(omp simd)
        for (c = 0; c < nk; c++)
          sr[c] = lgen_exp_f32(sr[c] - mnew);
        /* the sum in 16 lanes: the same order with and without OpenMP */
        for (int x = 0; x < 16; x++)
          part[x] = 0.0f;
        for (c = 0; c + 16 <= nk; c += 16)
          for (int x = 0; x < 16; x++)
            part[x] += sr[c + x];
        for (; c < nk; c++)
          sum += sr[c];
        for (int x = 0; x < 16; x++)
          sum += part[x];
        if (mnew != m[r]) {
          float alpha = lgen_exp_f32(m[r] - mnew); /* 0 when m was -inf */
          for (int64_t x = 0; x < Dv; x++)
            oa[r * Dv + x] *= alpha;
          l[r] *= alpha;
          m[r] = mnew;
        }
        l[r] += sum;
      }
      for (int64_t r = nq; r < rows; r++)
        for (int64_t c = 0; c < nk; c++)
          s[r * KT + c] = 0.0f;
      lgen_attn_pv_@S@(s, vt, oa, rows / 8, nk, Dv);
    }
    for (int64_t r = 0; r < nq; r++) {
      int64_t row = (b * H + h) * Lq + i0 + r;
      float inv = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
      if (o)
        for (int64_t x = 0; x < Dv; x++)
          o[row * Dv + x] = @FROMF32@(oa[r * Dv + x] * inv);
      if (mx)
        mx[row] = @FROMF32@(m[r]);
      if (sm)
        sm[row] = @FROMF32@(l[r]);
      if (scores && qk_mode == 3)
        for (int64_t j = 0; j < Lk; j++) {
          float x = @TOF32@(scores[row * Lk + j]);
          scores[row * Lk + j] = @FROMF32@(l[r] > 0.0f ? lgen_exp_f32(x - m[r]) * inv : 0.0f);
        }
    }
  }
}
