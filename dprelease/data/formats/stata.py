"""Stata .dta files through pyreadstat (`readstat`): Stata's value labels (a label set per
variable) and variable labels.
"""

from dprelease.data.formats.readstat import ReadstatFormat

_FORMAT = ReadstatFormat("read_dta", "a Stata .dta file")

read_table = _FORMAT.read_table
describe = _FORMAT.describe
batches = _FORMAT.batches
declared = _FORMAT.declared
