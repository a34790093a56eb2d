/* The environment, read in one place (env.c): a variable's value, and an
 * integer setting that a variable may give. */
#ifndef HALO_CORE_ENV_H
#define HALO_CORE_ENV_H

#include "halo_impl.h"

/** A variable's value from its first character that is not white space, or
 *  NULL when it is unset, empty or all white space. */
const char *halo_env_value(const char *name);

/** A variable's value without the white space around it, for a value kept as
 *  text (a name, a path): the variable's own text where nothing follows it,
 *  else a copy kept for the rest of the process (a few distinct values; past
 *  them, or past 1023 characters, the text as it is); NULL as
 *  halo_env_value. */
const char *halo_env_word(const char *name);

/** The length of text without its trailing white space (a value is read
 *  without the white space around it). */
size_t halo_env_length(const char *text);

/**
 * One integer setting: value -1 takes the variable env when it is set, else
 * deflt; any other value is the caller's and must lie in [lo, hi]. pow2: the
 * value must also be 0 or a power of 2. words: names the variable may hold
 * instead of numbers (words[i] stands for i). HALO_ERR_INVALID_ARG naming
 * what (option: "option autotune", "setting spmv.group") and the variable.
 */
halo_status halo_env_int(const char *option, int64_t value, const char *env, int64_t deflt,
                         int64_t lo, int64_t hi, int pow2, const char *const *words, int64_t *out);

/** What a setting may hold, for messages and listings: "0 to 32, a power of
 *  2 or 0", "host, device or auto". */
void halo_setting_describe(int64_t lo, int64_t hi, int pow2, const char *const *words, char *buf,
                           size_t len);

/** A setting's value given as text (len characters) by source ("settings",
 *  "HALO_SETTINGS"): a whole integer in [lo, hi] (a power of 2 or 0 where
 *  pow2) or one of words; HALO_ERR_INVALID_ARG "SOURCE: NAME=TEXT: expected
 *  ..." else. */
halo_status halo_setting_value(const char *source, const char *name, const char *text, size_t len,
                               int64_t lo, int64_t hi, int pow2, const char *const *words,
                               int64_t *out);

#endif
