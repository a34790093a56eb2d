/* The environment: the one file of the library that reads it (getenv). The
 * settings (settings.c) map variables to plan options through it; the
 * allocator's failure injection, the readers' limit and the largest count of
 * one message outside plans are read here directly, so that the allocator
 * and the utilities below everything need no settings. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "settings.h"

/* A variable's value from its first character that is not white space, or
 * NULL when it is unset, empty or all white space. */
const char *halo_env_value(const char *name) {
  const char *v = getenv(name);
  while (v && isspace((unsigned char)*v)) v++;
  return v && *v ? v : NULL;
}

const char *halo_env_word(const char *name) {
  enum { SLOTS = 8, LEN = 1024 };
  static char slots[SLOTS][LEN];
  static int used;
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  const char *v = halo_env_value(name);
  if (!v) return NULL;
  const size_t n = halo_env_length(v);
  if (v[n] == '\0' || n >= LEN) return v; /* nothing after it (or too long to copy) */
  const char *w = v;
  pthread_mutex_lock(&lock);
  int i = 0;
  while (i < used && !(strlen(slots[i]) == n && strncmp(slots[i], v, n) == 0)) i++;
  if (i == used && used < SLOTS) {
    memcpy(slots[used], v, n);
    slots[used][n] = '\0';
    used++;
  }
  if (i < used) w = slots[i];
  pthread_mutex_unlock(&lock);
  return w;
}

size_t halo_env_length(const char *text) {
  size_t n = strlen(text);
  while (n > 0 && isspace((unsigned char)text[n - 1])) n--;
  return n;
}

/* Parse a whole integer, or one of words (words[i] stands for i); white space
 * after it is ignored, as before it (halo_env_value). */
static int parse_value(const char *text, const char *const *words, int64_t *v) {
  const size_t n = halo_env_length(text);
  for (int i = 0; words && words[i]; i++)
    if (strlen(words[i]) == n && strncmp(text, words[i], n) == 0) {
      *v = i;
      return 1;
    }
  char *end;
  errno = 0;
  long long x = strtoll(text, &end, 10);
  if (errno || end == text || (size_t)(end - text) != n) return 0;
  *v = x;
  return 1;
}

/* What an option may hold, for messages: "1 to 32", "halo or cusparse". */
static void describe_range(int64_t lo, int64_t hi, const char *const *words, char *buf,
                           size_t len) {
  if (words) {
    size_t n = 0;
    int k = 0;
    buf[0] = '\0';
    for (; words[k]; k++) {
      int w = snprintf(buf + n, len - n, "%s%s", k ? (words[k + 1] ? ", " : " or ") : "", words[k]);
      if (w > 0) n = n + (size_t)w < len ? n + (size_t)w : len - 1;
    }
    if (hi >= k) /* numbers beyond the words' */
      snprintf(buf + n, len - n, " or a number, %lld to %lld", (long long)lo, (long long)hi);
    return;
  }
  if (hi == INT64_MAX || hi == INT_MAX || hi == INT32_MAX)
    snprintf(buf, len, "%lld or more", (long long)lo);
  else if (hi == lo + 1)
    snprintf(buf, len, "%lld or %lld", (long long)lo, (long long)hi);
  else
    snprintf(buf, len, "%lld to %lld", (long long)lo, (long long)hi);
}

/*
 * One integer setting: value -1 takes the variable env when it is set, else
 * deflt; any other value is the caller's and must lie in [lo, hi]. pow2: the
 * value must also be 0 or a power of 2. words: names the variable may hold
 * instead of numbers.
 */
halo_status halo_env_int(const char *option, int64_t value, const char *env, int64_t deflt,
                         int64_t lo, int64_t hi, int pow2, const char *const *words, int64_t *out) {
  char range[128];
  const char *text = NULL;
  if (value == -1) {
    text = env ? halo_env_value(env) : NULL;
    if (!text) {
      *out = deflt;
      return HALO_SUCCESS;
    }
    if (!parse_value(text, words, &value)) {
      describe_range(lo, hi, words, range, sizeof range);
      return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s='%s' (%s): expected %s", env, text, option,
                        range);
    }
  }
  int ok = value >= lo && value <= hi;
  if (ok && pow2 && value > 0) ok = (value & (value - 1)) == 0;
  if (!ok) {
    describe_range(lo, hi, words, range, sizeof range);
    if (text)
      return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s='%s' (%s): expected %s%s", env, text,
                        option, range,
                        !pow2     ? ""
                        : lo == 0 ? ", a power of 2 or 0"
                                  : ", a power of 2");
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s = %lld: expected %s%s%s", option,
                      (long long)value, range,
                      !pow2     ? ""
                      : lo == 0 ? ", a power of 2 or 0"
                                : ", a power of 2",
                      env ? " (or -1: the environment variable, else the default)" : "");
  }
  *out = value;
  return HALO_SUCCESS;
}

void halo_setting_describe(int64_t lo, int64_t hi, int pow2, const char *const *words, char *buf,
                           size_t len) {
  describe_range(lo, hi, words, buf, len);
  if (pow2) {
    const size_t n = strlen(buf);
    snprintf(buf + n, len - n, "%s", lo == 0 ? ", a power of 2 or 0" : ", a power of 2");
  }
}

halo_status halo_setting_value(const char *source, const char *name, const char *text, size_t len,
                               int64_t lo, int64_t hi, int pow2, const char *const *words,
                               int64_t *out) {
  char value[64], range[160];
  int64_t v = 0;
  int ok = len < sizeof value;
  if (ok) {
    memcpy(value, text, len);
    value[len] = '\0';
    ok = len > 0 && parse_value(value, words, &v) && v >= lo && v <= hi &&
         (!pow2 || v <= 0 || (v & (v - 1)) == 0);
  }
  if (!ok) {
    halo_setting_describe(lo, hi, pow2, words, range, sizeof range);
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s: %s=%.*s: expected %s", source, name,
                      (int)(len < 64 ? len : 64), text, range);
  }
  *out = v;
  return HALO_SUCCESS;
}

halo_status halo_settings_max_count(int *count_p) {
  int64_t v = 0;
  HALO_CHECK(halo_env_int("setting exec.max_message_count", -1, "HALO_DEBUG_MAX_COUNT", INT_MAX, 1,
                          INT_MAX, 0, NULL, &v));
  *count_p = (int)v;
  return HALO_SUCCESS;
}

int64_t halo_settings_fail_alloc(void) {
  const char *text = halo_env_word("HALO_DEBUG_FAIL_ALLOC");
  if (!text) return 0;
  char *end;
  errno = 0;
  const long long k = strtoll(text, &end, 10);
  return errno || end == text || *end != '\0' || k < 1 ? 0 : (int64_t)k;
}

halo_status halo_settings_input_limit(int64_t *bytes_p) {
  static const struct {
    char suffix;
    int64_t scale;
  } units[] = {{'k', INT64_C(1000)},
               {'K', INT64_C(1000)},
               {'M', INT64_C(1000000)},
               {'G', INT64_C(1000000000)},
               {'T', INT64_C(1000000000000)}};
  const char *text = halo_env_word("HALO_INPUT_LIMIT"); /* without its white space */
  *bytes_p = HALO_INPUT_LIMIT_DEFAULT;
  if (!text) return HALO_SUCCESS;
  if (strcmp(text, "none") == 0) {
    *bytes_p = INT64_MAX;
    return HALO_SUCCESS;
  }
  char *end;
  errno = 0;
  long long x = strtoll(text, &end, 10);
  const int digits = end != text; /* "M" alone is no number (found by fuzz_env) */
  int64_t scale = 1;
  for (size_t k = 0; digits && *end && k < sizeof units / sizeof units[0]; k++)
    if (*end == units[k].suffix && end[1] == '\0') scale = units[k].scale, end++;
  if (errno || !digits || *end != '\0' || x < 0 || x > INT64_MAX / scale)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "HALO_INPUT_LIMIT='%s': expected bytes, 0 or more, with an optional k, M, G "
                      "or T (10^3, 10^6, 10^9, 10^12), or none",
                      text);
  *bytes_p = (int64_t)x * scale;
  return HALO_SUCCESS;
}
