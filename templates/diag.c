/* diag: a vector of n as the diagonal of an n x n matrix, zeros elsewhere. */
static void lgen_diag_@S@(const @T@ *restrict v, @T@ *restrict out, int64_t n)
{
  LGEN_OMP(omp for)
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++)
      out[i * n + j] = i == j ? v[i] : 0;
}
