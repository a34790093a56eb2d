/* A small JSON writer for the driver's reports. */
#ifndef HALO_TOOLS_JSON_H
#define HALO_TOOLS_JSON_H

#include <stdint.h>
#include <stdio.h>

typedef struct {
  FILE *f;
  int depth;
  int first[32]; /* no member written yet at this depth */
} json_writer;

void json_init(json_writer *w, FILE *f);
void json_begin_object(json_writer *w, const char *key);
void json_end_object(json_writer *w);
void json_begin_array(json_writer *w, const char *key);
void json_end_array(json_writer *w);
void json_int(json_writer *w, const char *key, int64_t v);
void json_double(json_writer *w, const char *key, double v);
void json_string(json_writer *w, const char *key, const char *v);
void json_bool(json_writer *w, const char *key, int v);
void json_null(json_writer *w, const char *key);

#endif
