"""Writes bombs/: zero bytes compressed the way fastavro compresses Avro blocks for the
`bzip2` and `xz` codecs (`bz2.compress(data)`, level 9; `lzma.compress(data)`, xz container,
preset 6, CRC-64), just at and one byte past lakecore's block limit
(`paimon::compression::MAX_BLOCK_BYTES`, 64 MiB):

    bombs/zeros-67108864.bz2   bombs/zeros-67108865.bz2
    bombs/zeros-67108864.xz    bombs/zeros-67108865.xz

Run with any Python 3: python tests/data/paimon/make_bombs.py
"""

import bz2
import lzma
import os

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_BLOCK_BYTES = 64 << 20


def main():
    out = os.path.join(HERE, "bombs")
    os.makedirs(out, exist_ok=True)
    for n in (MAX_BLOCK_BYTES, MAX_BLOCK_BYTES + 1):
        zeros = bytes(n)
        for ext, compress in (("bz2", bz2.compress), ("xz", lzma.compress)):
            path = os.path.join(out, f"zeros-{n}.{ext}")
            with open(path, "wb") as fo:
                fo.write(compress(zeros))
            print(path, os.path.getsize(path))


if __name__ == "__main__":
    main()
