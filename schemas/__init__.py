"""The Avro contract of memstream (``*.avsc``, namespace ``memstream.v1``).

The ``.avsc`` files are the language-neutral product; this module only tells Python code
where they are, installed or not. ``baseline/<version>/`` holds the released versions that
every change must stay BACKWARD-compatible with.
"""

from pathlib import Path

SCHEMAS_DIR = Path(__file__).resolve().parent
