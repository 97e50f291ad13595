/* files.h - what the model tests (test_networks, test_zoo) share: reading raw float32 files
   and listing a directory's models. Include after <dirent.h>, <stdio.h>, <stdlib.h>,
   <string.h> and <stdint.h>, with _POSIX_C_SOURCE defined. */
#ifndef FUSE_TEST_FILES_H
#define FUSE_TEST_FILES_H

/* A whole file of little-endian float32 (*n of them), or NULL; free() it. */
static float *read_floats(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  long size;
  float *data = NULL;
  *n = 0;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && size % 4 == 0 &&
      fseek(f, 0, SEEK_SET) == 0) {
    data = (float *)malloc((size_t)size);
    if (data && fread(data, 1, (size_t)size, f) == (size_t)size) {
      const uint32_t one = 1;
      size_t i;
      *n = (size_t)size / 4;
      if (*(const unsigned char *)&one == 0) /* the files are little-endian float32 */
        for (i = 0; i < *n; i++) {
          unsigned char *b = (unsigned char *)&data[i], t;
          t = b[0], b[0] = b[3], b[3] = t;
          t = b[1], b[1] = b[2], b[2] = t;
        }
    } else {
      free(data);
      data = NULL;
    }
  }
  fclose(f);
  return data;
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.onnx files of dir whose names contain `only` (NULL or "": all), sorted; -1 when the
   directory cannot be opened. free_list releases them. */
static int list_onnx_matching(const char *dir, const char *only, char ***out) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char **names = NULL;
  int n = 0, cap = 0;
  *out = NULL;
  if (!d) return -1;
  while ((e = readdir(d)) != NULL) {
    if (!ends_with(e->d_name, ".onnx") || (only && *only && !strstr(e->d_name, only))) continue;
    if (n == cap) {
      char **grown;
      cap = cap ? cap * 2 : 16;
      grown = (char **)realloc(names, (size_t)cap * sizeof *names);
      if (!grown) break;
      names = grown;
    }
    names[n] = (char *)malloc(strlen(e->d_name) + 1);
    if (!names[n]) break;
    strcpy(names[n++], e->d_name);
  }
  closedir(d);
  if (n) qsort(names, (size_t)n, sizeof *names, cmp_str);
  *out = names;
  return n;
}

static void free_list(char **names, int n) {
  int i;
  for (i = 0; i < n; i++) free(names[i]);
  free(names);
}

#endif
