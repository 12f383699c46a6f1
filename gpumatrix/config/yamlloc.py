"""YAML loading that remembers where every value came from.

PyYAML's ``safe_load`` forgets line numbers and silently keeps the last of two
duplicate keys. Validation needs both: each problem is reported as
``file:line``. :func:`load_located` returns plain ``dict``/``list`` subclasses
that carry the line of each key and item, so the rest of the code can treat
them as ordinary containers.
"""

from __future__ import annotations

from typing import Any

import yaml


class LocDict(dict):
    """A dict that knows its own line and the line of each key (1-based)."""

    line: int = 0
    key_lines: dict

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)


class LocList(list):
    """A list that knows its own line and the line of each item (1-based)."""

    line: int = 0
    item_lines: list

    def line_of(self, index: int) -> int:
        return self.item_lines[index] if 0 <= index < len(self.item_lines) else self.line


class DuplicateKey(Exception):
    def __init__(self, key: Any, line: int, first_line: int):
        self.key, self.line, self.first_line = key, line, first_line
        super().__init__(f"duplicate key {key!r} (first defined at line {first_line})")


class _LocatedLoader(yaml.SafeLoader):
    """SafeLoader whose mappings and sequences remember their source lines."""

    duplicates: list


def _construct_mapping(loader: _LocatedLoader, node: yaml.MappingNode) -> LocDict:
    loader.flatten_mapping(node)
    result = LocDict()
    result.line = node.start_mark.line + 1
    result.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            key = repr(key)
        line = key_node.start_mark.line + 1
        if key in result.key_lines:
            loader.duplicates.append(DuplicateKey(key, line, result.key_lines[key]))
        result.key_lines[key] = line
        result[key] = loader.construct_object(value_node, deep=True)
    return result


def _construct_sequence(loader: _LocatedLoader, node: yaml.SequenceNode) -> LocList:
    result = LocList(loader.construct_object(child, deep=True) for child in node.value)
    result.line = node.start_mark.line + 1
    result.item_lines = [child.start_mark.line + 1 for child in node.value]
    return result


class SourceFloat(float):
    """A YAML float that remembers how it was written: ``python: 3.10`` is the float 3.1, but a message
    asking the user to quote it must say ``"3.10"``."""

    source: str


def _construct_float(loader: _LocatedLoader, node: yaml.ScalarNode) -> float:
    value = SourceFloat(loader.construct_yaml_float(node))
    value.source = str(node.value)
    return value


_LocatedLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)
_LocatedLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_LocatedLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def load_located(text: str) -> tuple[Any, list[DuplicateKey]]:
    """Parse one YAML document; return the data and any duplicate keys found.

    Raises ``yaml.YAMLError`` (with ``problem_mark``) on a syntax error.
    """
    loader = _LocatedLoader(text)
    loader.duplicates = []
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    return data, loader.duplicates
