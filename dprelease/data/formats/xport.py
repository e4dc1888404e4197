"""SAS transport (.xpt) files through pyreadstat (`readstat`): variable labels only; a version 5
file does not announce its rows, so the row limit is checked while reading.
"""

from dprelease.data.formats.readstat import ReadstatFormat

_FORMAT = ReadstatFormat("read_xport", "a SAS transport .xpt file")

read_table = _FORMAT.read_table
describe = _FORMAT.describe
batches = _FORMAT.batches
declared = _FORMAT.declared
