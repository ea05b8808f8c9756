/*
 * imports_plug.c - libimports_plug.so for tests/shim's imports case: a
 * library the program loads with dlopen, which imports omp_x_not_in_shim
 * from libimports_x.so.
 */
int omp_x_not_in_shim(void);
int imports_plug(void);

int imports_plug(void)
{
    return omp_x_not_in_shim() + 1;
}
