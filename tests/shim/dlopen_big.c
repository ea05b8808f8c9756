/*
 * dlopen_big.c - libdlbig.so, a library with 40 MiB of global variables,
 * more than the shim keeps room for in the DSM for the libraries a
 * program loads with dlopen (tests/shim/dlopen.c, "big").
 */
char dlbig_data[40 << 20];

char *dlbig(void)
{
    return dlbig_data;
}
