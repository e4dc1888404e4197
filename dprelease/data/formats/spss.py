"""SPSS .sav files through pyreadstat (`readstat`): SPSS's value labels and variable labels; user-
defined missing values are read as missing.
"""

from dprelease.data.formats.readstat import ReadstatFormat

_FORMAT = ReadstatFormat("read_sav", "an SPSS .sav/.zsav file")

read_table = _FORMAT.read_table
describe = _FORMAT.describe
batches = _FORMAT.batches
declared = _FORMAT.declared
