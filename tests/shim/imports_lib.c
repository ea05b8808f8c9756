/*
 * imports_lib.c - libimports_x.so for tests/shim's imports case: a library
 * that defines a name with the OpenMP ABI's omp_ prefix which libompshim
 * does not export, as a newer libgomp's entry point would be.
 */
int omp_x_not_in_shim(void);

int omp_x_not_in_shim(void)
{
    return 42;
}
