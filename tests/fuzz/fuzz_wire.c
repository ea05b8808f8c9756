/*
 * fuzz_wire.c - libFuzzer entry point for the message validator
 * (libdsm/wire_check.c): every input goes through wire_oracle, which aborts
 * the run (a crash libFuzzer saves) when the validator accepted a message
 * that would make a handler step outside the region.  Built and run by
 * 'make fuzz' with clang -fsanitize=fuzzer,address,undefined.
 */
#include <stdio.h>
#include <stdlib.h>

#include "wire_oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *err = wire_oracle(data, size, NULL);
    if (err) {
        fprintf(stderr, "wire oracle: %s\n", err);
        abort();
    }
    return 0;
}
