"""The data a release reads, however they are held (CONFIDENTIAL): `FileData`, a file, a
folder of parts or a URI counted by an engine (the CLI's); `UploadData`, bytes in memory (the
dashboard's). Both count a plan's tables, read its statistics' rows and fingerprint the
records for the ledger's key (`dprelease.release.service` uses them through `ReleaseData`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from dprelease.data.engines.registry import EngineChoice
from dprelease.data.engines.result import CountResult
from dprelease.data.fingerprint import Fingerprinting, RecordFingerprint
from dprelease.data.read import SizeLimits
from dprelease.errors import DPReleaseError, InternalError
from dprelease.plan.model import Plan
from dprelease.stats.source import StatSource, read_stat_source


class ReleaseData(Protocol):
    """CONFIDENTIAL: the data of a release, however they are held."""

    @property
    def name(self) -> str:
        """The data's file name (public: it labels the ledger's entry)."""
        ...

    def count(self, plan: Plan, *, fingerprint: Fingerprinting | None = None) -> CountResult:
        """The true counts of the plan's tables and the data report; with `fingerprint`, the
        same pass may fingerprint every record (`CountResult.accumulator`)."""
        ...

    def statistics(self, plan: Plan) -> StatSource:
        """The rows the plan's statistics and discoveries read."""
        ...

    def fingerprint(
        self, counted: CountResult | None = None, settings: Fingerprinting | None = None
    ) -> RecordFingerprint:
        """The records' fingerprint (the ledger's key), from `counted`'s pass if it made one."""
        ...

    def legacy_key(self) -> str | None:
        """The SHA-256 of the data file's bytes (a format-1 ledger's key), None for a folder."""
        ...


@dataclass(frozen=True)
class FileData:
    """Data where they live: a file, a folder of parts, or a URI an engine reads where it
    lives, counted by the engine the user chose (the CLI's `--engine` and its options)."""

    location: Path | str
    engine: EngineChoice = field(default_factory=EngineChoice)
    limits: SizeLimits = field(default_factory=SizeLimits)

    @property
    def name(self) -> str:
        return Path(str(self.location)).name

    def count(self, plan: Plan, *, fingerprint: Fingerprinting | None = None) -> CountResult:
        from dprelease.data.engines.counting import count_data

        return count_data(
            self.location,
            plan,
            engine=self.engine,
            limits=self.limits,
            new_accumulator=None if fingerprint is None else fingerprint.accumulator,
        )

    def statistics(self, plan: Plan) -> StatSource:
        return read_stat_source(self.location, plan, self.limits)

    def fingerprint(
        self, counted: CountResult | None = None, settings: Fingerprinting | None = None
    ) -> RecordFingerprint:
        from dprelease.data.engines.counting import locate, scan_records
        from dprelease.data.fingerprint import FingerprintAccumulator

        if counted is not None:
            if not isinstance(counted.accumulator, FingerprintAccumulator):
                raise InternalError("the counting pass made no fingerprint for the ledger")
            return counted.accumulator.fingerprint
        accumulator = (settings or Fingerprinting()).accumulator()  # a pass over every column
        scan_records(locate(self.location, self.limits), self.limits, accumulator, self.engine)
        return accumulator.fingerprint

    def legacy_key(self) -> str | None:
        from dprelease.ledger.files import dataset_key_of_file

        local = isinstance(self.location, Path) and self.location.is_file()
        return dataset_key_of_file(self.location) if local else None


@dataclass(frozen=True)
class UploadData:
    """A data file held in memory (the dashboard's upload); `records`, its fingerprint when
    already made (the dashboard makes it once per upload)."""

    data: bytes = field(repr=False)
    filename: str
    records: RecordFingerprint | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.filename

    def count(self, plan: Plan, *, fingerprint: Fingerprinting | None = None) -> CountResult:
        del fingerprint  # made from the parsed table (`fingerprint`), not the counting
        from dprelease.data.count import count, load_data

        encoded = load_data(self.data, plan, filename=self.filename)
        return CountResult(count(encoded, plan), encoded.report, engine="memory")

    def statistics(self, plan: Plan) -> StatSource:
        return read_stat_source(self.data, plan, filename=self.filename)

    def fingerprint(
        self, counted: CountResult | None = None, settings: Fingerprinting | None = None
    ) -> RecordFingerprint:
        del counted
        from dprelease.data.fingerprint import fingerprint_table, with_read_columns
        from dprelease.data.read import read_data

        settings = settings or Fingerprinting()
        if self.records is not None and not settings.legacy:
            if settings.read_columns is None or self.records.read_total is not None:
                return self.records
            try:
                table = read_data(self.data, filename=self.filename, columns=settings.read_columns)
            except DPReleaseError:  # the plan's columns are not all there: no read key
                return self.records
            return with_read_columns(self.records, table, settings.read_columns)
        table = read_data(self.data, filename=self.filename)
        return fingerprint_table(table, read_columns=settings.read_columns, legacy=settings.legacy)

    def legacy_key(self) -> str | None:
        import hashlib

        return hashlib.sha256(self.data).hexdigest()
