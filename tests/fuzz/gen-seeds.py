#!/usr/bin/env python3
"""gen-seeds.py - write the seed corpus of the message fuzzer (tests/fuzz/corpus).

One well-formed message of each type, as wire_oracle.c reads an input: a
selector byte (this node's rank = b % 3, MPI source = (b >> 2) % 4) then the
message (struct dsm_wire_hdr of libdsm/wire.h, little-endian, then the
payload).  The job shape is the oracle's: 3 nodes, 16 pages, 9 locks, page
size 256 or 16384.  Run from the tree's top: python3 tests/fuzz/gen-seeds.py
"""
import os
import struct

T = dict(PAGE_REQ=1, PAGE_REPLY=2, DIFF=3, DIFF_ACK=4, BARRIER_ENTER=5, BARRIER_RELEASE=6,
         LOCK_REQ=7, LOCK_GRANT=8, LOCK_REL=9, LOCK_REL_ACK=10, ATOMIC_REQ=11, ATOMIC_REPLY=12,
         PREFETCH_REQ=13, CALL_REQ=14, CALL_REPLY=15, FLUSH_NOTICE=16)
LAST, MANY, DIFF_MASKED = 1, -2, 0x80000000


def sel(rank, src):
    return next(b for b in range(256) if b % 3 == rank and (b >> 2) % 4 == src)


def msg(rank, src, typ, payload=b"", flags=0, id_=0, waiter=0, epoch=1, arg=0, arg2=0):
    hdr = struct.pack("<HHiIIIIQQ", T[typ], flags, src, epoch, id_, waiter, len(payload),
                      arg, arg2)
    return bytes([sel(rank, src)]) + hdr + payload


def diff(page, runs):
    """runs: (byte offset, data of whole 8-byte chunks, mask bytes or None)."""
    body = b""
    for off, data, mask in runs:
        n = len(data) // 8
        body += struct.pack("<II", off, n | (DIFF_MASKED if mask else 0)) + data + bytes(mask or [])
    return struct.pack("<II", page, len(body)) + body


seeds = {
    "page_req": msg(0, 1, "PAGE_REQ", id_=3, waiter=2),
    "diff_two": msg(0, 2, "DIFF", diff(3, [(0, bytes(range(1, 17)), None),
                                           (80, bytes([7] * 8), [0x0f])]) +
                    diff(15, [(248, bytes([9] * 8), [0x81])]), flags=LAST, waiter=1),
    "diff_empty_last": msg(1, 0, "DIFF", flags=LAST, waiter=4),
    "diff_ack": msg(2, 0, "DIFF_ACK", waiter=1),
    # Barrier messages: a count per node (3), then (page, writer) notices.
    "barrier_enter": msg(0, 2, "BARRIER_ENTER", struct.pack("<3I3Ii", 0, 1, 0, 0, 2, 5, MANY)
                         + struct.pack("<Ii", 15, 2), flags=LAST | (1 << 8), id_=1, arg=77),
    "barrier_release": msg(1, 0, "BARRIER_RELEASE", struct.pack("<3IIiIiIi", 1, 0, 2, 0, MANY,
                                                                7, 1, 15, 2),
                           flags=LAST, waiter=3),
    "lock_req": msg(1, 0, "LOCK_REQ", id_=4, waiter=5),
    "lock_grant": msg(2, 1, "LOCK_GRANT", struct.pack("<2I", 2, 9), flags=LAST, id_=7, waiter=5),
    "lock_rel": msg(2, 0, "LOCK_REL", struct.pack("<I", 11), flags=LAST, id_=8, waiter=6,
                    arg=1),
    "lock_rel_ack": msg(0, 1, "LOCK_REL_ACK", id_=1, waiter=6),
    "atomic_req": msg(0, 1, "ATOMIC_REQ", struct.pack("<IBBHQQQQ", 248, 4, 8, 0, 1, 0, 0, 0),
                      id_=6, waiter=7),
    "atomic_ws": msg(0, 1, "ATOMIC_REQ", struct.pack("<IBBHQQQQ", 240, 10, 16, 0, 1, 2, 3, 4),
                     id_=6, waiter=7),
    "atomic_reply": msg(1, 0, "ATOMIC_REPLY", waiter=7, arg=5),
    "prefetch_req": msg(0, 1, "PREFETCH_REQ", struct.pack("<3I", 4, 5, 9), id_=4, waiter=8),
    "call_req": msg(0, 2, "CALL_REQ", struct.pack("<iQ", 5, 7) + b"hello", id_=1, waiter=9),
    "call_reply": msg(2, 0, "CALL_REPLY", b"world", id_=1, waiter=9, arg=5),
    "flush_notice": msg(1, 2, "FLUSH_NOTICE", struct.pack("<3I", 3, 8, 15), flags=LAST, waiter=10),
}

here = os.path.dirname(os.path.abspath(__file__))
for name, data in seeds.items():
    with open(os.path.join(here, "corpus", name), "wb") as f:
        f.write(data)

# Regression inputs (tests/fuzz/regress): messages an earlier decoder took.
# Each must now be rejected; test_wire_check replays them in 'make check'.
regress = {
    # A notice's writer was used unchecked: as a shift count for the
    # copyset bit (undefined for 64 and more) and as the page's new home.
    "barrier_release_writer_64": msg(1, 0, "BARRIER_RELEASE",
                                     struct.pack("<3IIi", 0, 0, 0, 7, 64), flags=LAST, waiter=3),
    "barrier_release_writer_3": msg(1, 0, "BARRIER_RELEASE",
                                    struct.pack("<3IIi", 0, 0, 0, 7, 3), flags=LAST, waiter=3),
    # A PAGE_REPLY never travels on DSM_TAG; it was taken and ignored.
    "page_reply": msg(1, 0, "PAGE_REPLY"),
}
for name, data in regress.items():
    with open(os.path.join(here, "regress", name), "wb") as f:
        f.write(data)
