"""SAS .sas7bdat files through pyreadstat (`readstat`): variable labels only: SAS keeps value
formats in a separate catalog (.sas7bcat), which is not read.
"""

from dprelease.data.formats.readstat import ReadstatFormat

_FORMAT = ReadstatFormat("read_sas7bdat", "a SAS .sas7bdat data set")

read_table = _FORMAT.read_table
describe = _FORMAT.describe
batches = _FORMAT.batches
declared = _FORMAT.declared
