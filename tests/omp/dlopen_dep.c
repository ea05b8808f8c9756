/*
 * dlopen_dep.c - libdldep.so, a library that libdlplugin.so needs (for
 * tests/omp/dlopen_lib.c): so the program's one dlopen brings in two new
 * objects.  Plain C, no OpenMP: a global the plugin sets in sequential
 * code and reads in its parallel regions.
 */
static long dep_offset = 7;

void dldep_set_offset(long v)
{
    dep_offset = v;
}

long dldep_offset(void)
{
    return dep_offset;
}
