/* A small JSON writer: keys are NULL inside arrays. */
#include "json.h"

#include <math.h>

void json_init(json_writer *w, FILE *f) {
  w->f = f;
  w->depth = 0;
  w->first[0] = 1;
}

static void indent(json_writer *w) {
  for (int i = 0; i < w->depth; i++) fputs("  ", w->f);
}

static void put_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c == '\n')
      fputs("\\n", f);
    else if (c == '\t')
      fputs("\\t", f);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static void member(json_writer *w, const char *key) {
  if (w->depth > 0) {
    fputs(w->first[w->depth] ? "\n" : ",\n", w->f);
    w->first[w->depth] = 0;
    indent(w);
  }
  if (key) {
    put_string(w->f, key);
    fputs(": ", w->f);
  }
}

static void open_(json_writer *w, const char *key, char c) {
  member(w, key);
  fputc(c, w->f);
  w->depth++;
  w->first[w->depth] = 1;
}

static void close_(json_writer *w, char c) {
  int empty = w->first[w->depth];
  w->depth--;
  if (!empty) {
    fputc('\n', w->f);
    indent(w);
  }
  fputc(c, w->f);
  if (w->depth == 0) fputc('\n', w->f);
}

void json_begin_object(json_writer *w, const char *key) { open_(w, key, '{'); }
void json_end_object(json_writer *w) { close_(w, '}'); }
void json_begin_array(json_writer *w, const char *key) { open_(w, key, '['); }
void json_end_array(json_writer *w) { close_(w, ']'); }

void json_int(json_writer *w, const char *key, int64_t v) {
  member(w, key);
  fprintf(w->f, "%lld", (long long)v);
}

void json_double(json_writer *w, const char *key, double v) {
  member(w, key);
  if (isfinite(v))
    fprintf(w->f, "%.9g", v);
  else
    fputs("null", w->f);
}

void json_string(json_writer *w, const char *key, const char *v) {
  member(w, key);
  put_string(w->f, v);
}

void json_bool(json_writer *w, const char *key, int v) {
  member(w, key);
  fputs(v ? "true" : "false", w->f);
}

void json_null(json_writer *w, const char *key) {
  member(w, key);
  fputs("null", w->f);
}
