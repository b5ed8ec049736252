"""A DNS responder on 127.0.0.1:53 that answers every query NXDOMAIN.

Used by tools/collect_corpus.py inside an isolated network namespace (`unshare -n`), so that name lookups
fail as they do for a name that does not exist, without any query leaving the machine.
"""

import socket

HEADER = 12


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 53))
    while True:
        query, peer = sock.recvfrom(512)
        if len(query) < HEADER:
            continue
        end = HEADER
        while end < len(query) and query[end] != 0:  # walk the question's labels
            end += query[end] + 1
        question = query[HEADER : end + 5]  # the name, its zero byte, QTYPE and QCLASS
        # Same id; QR, RD, RA set; RCODE 3 (NXDOMAIN); one question, no records.
        sock.sendto(query[:2] + b"\x81\x83\x00\x01\x00\x00\x00\x00\x00\x00" + question, peer)


if __name__ == "__main__":
    main()
