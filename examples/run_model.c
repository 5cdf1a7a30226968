/* run_model.c - run a model lgen generated, on data in files.
 *
 * Reads in_<i>.bin (raw little-endian, dense row-major) for every input,
 * calls the model's entry point (which allocates its own workspace) and
 * writes out_<i>.bin, in the current folder. The sizes and the call come
 * from a small glue file that examples/models.py writes per model ("shim"),
 * so this one driver serves every model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char *const lgen_model_name;
extern const int lgen_model_ninputs, lgen_model_noutputs;
extern const size_t lgen_model_input_bytes[], lgen_model_output_bytes[];
int lgen_model_call(void *const *in, void *const *out);

static void *read_file(const char *path, size_t n)
{
  unsigned char *p = malloc(n ? n : 1);
  FILE *f = fopen(path, "rb");
  if (!p || !f || fread(p, 1, n, f) != n) {
    fprintf(stderr, "%s: cannot read %zu bytes from %s\n", lgen_model_name, n, path);
    exit(1);
  }
  fclose(f);
  return p;
}

static void write_file(const char *path, const void *p, size_t n)
{
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "%s: cannot write %s\n", lgen_model_name, path);
    exit(1);
  }
}

int main(void)
{
  void *in[16], *out[16];
  char path[32];
  if (lgen_model_ninputs > 16 || lgen_model_noutputs > 16) {
    fprintf(stderr, "%s: too many inputs or outputs for this driver\n", lgen_model_name);
    return 1;
  }
  for (int i = 0; i < lgen_model_ninputs; i++) {
    snprintf(path, sizeof path, "in_%d.bin", i);
    in[i] = read_file(path, lgen_model_input_bytes[i]);
  }
  for (int i = 0; i < lgen_model_noutputs; i++) {
    /* not zeros: the model must write every element */
    out[i] = malloc(lgen_model_output_bytes[i] ? lgen_model_output_bytes[i] : 1);
    if (!out[i])
      return 1;
    memset(out[i], 0x5a, lgen_model_output_bytes[i]);
  }
  if (lgen_model_call(in, out) != 0) {
    fprintf(stderr, "%s: out of memory for the workspace\n", lgen_model_name);
    return 1;
  }
  for (int i = 0; i < lgen_model_noutputs; i++) {
    snprintf(path, sizeof path, "out_%d.bin", i);
    write_file(path, out[i], lgen_model_output_bytes[i]);
  }
  for (int i = 0; i < lgen_model_ninputs; i++)
    free(in[i]);
  for (int i = 0; i < lgen_model_noutputs; i++)
    free(out[i]);
  return 0;
}
