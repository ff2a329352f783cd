/* libFuzzer harness for the option parser (gpu_config_from_strings): the
 * input is "key=value" pairs separated by newlines (the shape of
 * --external_delegate_options and load_delegate's dict). Any input must
 * give 0 or -1 with a message, never a crash, leak or overflow.
 * Build: tests/fuzz/build.sh; run: tests/fuzz/run.sh (see README). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/options.h"

#define MAX_PAIRS 32

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  char* text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  const char* keys[MAX_PAIRS];
  const char* values[MAX_PAIRS];
  int n = 0;
  char* save = NULL;
  for (char* line = strtok_r(text, "\n", &save); line && n < MAX_PAIRS; line = strtok_r(NULL, "\n", &save)) {
    char* eq = strchr(line, '=');
    if (eq) *eq = '\0';
    keys[n] = line;
    values[n] = eq ? eq + 1 : "";
    ++n;
  }
  GpuConfig cfg;
  char err[512];
  if (gpu_config_from_strings(&cfg, keys, values, n, err, sizeof(err)) == 0) {
    gpu_config_free(&cfg);
  } else if (!memchr(err, '\0', sizeof(err)) || err[0] == '\0') {
    abort(); /* every refusal must explain itself */
  }
  free(text);
  return 0;
}
