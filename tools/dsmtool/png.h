/*
 * png.h - a small RGB raster with rectangles, lines and a 5x7 text font,
 * written as PNG through zlib (dsmtool timeline and sweep).  Single-threaded.
 */
#ifndef DSMTOOL_PNG_H
#define DSMTOOL_PNG_H

#include <stdint.h>

struct img { int w, h; uint8_t *px; };

int  img_new(struct img *im, int w, int h, uint32_t rgb);
void img_free(struct img *im);
void img_rect(struct img *im, int x, int y, int w, int h, uint32_t rgb);
void img_line(struct img *im, int x0, int y0, int x1, int y1, uint32_t rgb);
/* Text in the 5x7 font (digits, letters as capitals, a few signs) at scale. */
void img_text(struct img *im, int x, int y, const char *s, uint32_t rgb, int scale);
/* 0, or -1 with errno set. */
int  img_write_png(const struct img *im, const char *path);

#endif
