/*
 * wire_oracle.h - what the message validator (libdsm/wire_check.c) must
 * guarantee, checked on one input: shared by the fuzzer (fuzz_wire.c) and
 * the unit test that replays the corpus in 'make check'
 * (tests/unit/test_wire_check.c).  Single-threaded.
 */
#ifndef WIRE_ORACLE_H
#define WIRE_ORACLE_H

#include <stddef.h>
#include <stdint.h>

/* Run one fuzz input through the validator under each job shape the oracle
 * knows, and decode whatever it accepts the way the handlers do, into
 * buffers exactly as large as a page.  The first input byte picks this
 * node's rank and the MPI source; the rest is the message.  Returns NULL, or
 * a description of the first broken guarantee (a static buffer).  Counts
 * accepted messages in *accepted when it is not NULL. */
const char *wire_oracle(const uint8_t *data, size_t size, unsigned long *accepted);

#endif
