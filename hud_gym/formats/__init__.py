"""Task sets in other formats: HUD SDK task JSON, WebVoyager, GAIA and OSWorld examples.

Each converter returns ``(TaskSet, ConversionReport)``: hud-gym tasks whose setup/evaluate calls
all resolve in the function registry (checked on conversion), each keeping its original row in
``task.metadata["source"] = {"format", "row", ...}``, and a report of what did not map.
:func:`~hud_gym.tasksets.load_taskset` reads these formats too (``format=`` or detected).

The evaluators the formats use are registered whether or not this package is imported:
``gaia_match``, ``ungraded``, ``webvoyager_answer`` by :mod:`hud_gym.evaluation.benchmarks`, the
desktop ``command_output_check``, ``file_content_check``, ``download_file``
(:mod:`hud_gym.controllers.ubuntu.osworld_functions`) by the desktop gym's descriptor. Importing this package makes it
:func:`~hud_gym.tasksets.load_taskset`'s file reader (``import hud_gym`` imports it on the first
file read, not before).

Example:
    >>> from hud_gym.formats import convert_gaia
    >>> taskset, report = convert_gaia("2023/validation/metadata.jsonl")  # doctest: +SKIP
    >>> taskset[0].evaluate[0].function  # doctest: +SKIP
    'gaia_match'
"""

from hud_gym.formats.common import ConversionReport, ConversionWarning, TaskConversion
from hud_gym.formats.detect import FORMATS, TaskFormat, convert, detect_format, read_taskset
from hud_gym.formats.gaia import convert_gaia
from hud_gym.formats.hud import convert_hud
from hud_gym.formats.osworld import convert_osworld
from hud_gym.formats.webvoyager import convert_webvoyager, read_reference_answers
from hud_gym.tasksets import set_file_reader

set_file_reader(read_taskset)

__all__ = [
    "FORMATS",
    "ConversionReport",
    "ConversionWarning",
    "TaskConversion",
    "TaskFormat",
    "convert",
    "convert_gaia",
    "convert_hud",
    "convert_osworld",
    "convert_webvoyager",
    "detect_format",
    "read_reference_answers",
    "read_taskset",
]
