/* uses: config/options.c util/log.c cl/target.c */
/* Standalone test of the option parser's handling of hostile strings
 * (delegate_c/config/options.c): huge values are echoed cut short with their
 * length, control bytes escaped, and a path that is a Python bytes repr
 * refused with a message saying so. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config/options.h"

/* Parses one key=value; returns the parser's result, message in err. */
static int parse1(const char* key, const char* value, char* err, size_t errlen) {
  GpuConfig cfg;
  const char* k[1] = {key};
  const char* v[1] = {value};
  err[0] = '\0';
  int rc = gpu_config_from_strings(&cfg, k, v, 1, err, errlen);
  if (rc == 0) gpu_config_free(&cfg);
  return rc;
}

static void test_huge_values_are_cut_short(void) {
  size_t n = 1 << 20;
  char* big = malloc(n + 1);
  memset(big, 'x', n);
  big[n] = '\0';
  char err[512];
  CHECK(parse1("log_level", big, err, sizeof err) == -1, "1 MiB log_level accepted");
  CHECK(strstr(err, "... (1048576 bytes)") != NULL && strlen(err) < 300, "log_level message: %s", err);
  CHECK(parse1(big, "1", err, sizeof err) == -1, "1 MiB key accepted");
  CHECK(strstr(err, "unknown option 'xxxx") && strstr(err, "... (1048576 bytes)"), "key message: %s", err);
  CHECK(parse1("device", big, err, sizeof err) == -1 && strlen(err) < 300, "1 MiB device: %s", err);
  CHECK(parse1("serialization_dir", big, err, sizeof err) == -1 && strstr(err, "a path holds at most"),
        "1 MiB path: %s", err);
  /* Exactly 80 characters are shown whole, without a length. */
  big[80] = '\0';
  CHECK(parse1("log_level", big, err, sizeof err) == -1 && !strstr(err, "bytes)") && strstr(err, big),
        "80-char value: %s", err);
  free(big);
}

static void test_control_bytes_are_escaped(void) {
  char err[512];
  CHECK(parse1("log_level", "info\nsilent\x1b[2J", err, sizeof err) == -1, "newline value accepted");
  CHECK(strchr(err, '\n') == NULL && strchr(err, '\x1b') == NULL && strstr(err, "info\\x0asilent\\x1b[2J"),
        "escaped: %s", err);
}

static void test_bytes_repr_paths(void) {
  char err[512];
  const char* bad[] = {"b'/tmp'", "b\"/tmp\"", "b''"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    CHECK(parse1("serialization_dir", bad[i], err, sizeof err) == -1, "%s accepted", bad[i]);
    CHECK(strstr(err, "looks like a Python bytes object") && strstr(err, "os.fsdecode"), "%s: %s", bad[i], err);
  }
  CHECK(parse1("delegate_serialize_dir", "b'/tmp'", err, sizeof err) == -1, "alias accepted b'/tmp'");
  /* Real paths that merely contain such characters are fine. */
  const char* good[] = {"/tmp/b'x'", "b'", "bx'/tmp'", "/tmp"};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i)
    CHECK(parse1("serialization_dir", good[i], err, sizeof err) == 0, "%s refused: %s", good[i], err);
}

int main(void) {
  test_huge_values_are_cut_short();
  test_control_bytes_are_escaped();
  test_bytes_repr_paths();
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
