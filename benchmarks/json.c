/*
 * json.c - JSON result pieces and small statistics (see json.h).
 */
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

void json_number(double v, int exact)
{
    if (!isfinite(v))
        fputs("null", stdout);
    else if (v == floor(v) && fabs(v) < 9007199254740992.0)
        printf("%.0f", v);
    else
        printf(exact ? "%.17g" : "%.6g", v);
}

double stats_mean(const double *v, size_t n)
{
    double s = 0.0;
    size_t i;

    if (n == 0)
        return NAN;
    for (i = 0; i < n; i++)
        s += v[i];
    return s / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

double stats_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
