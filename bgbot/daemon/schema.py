"""A small validator for the subset of JSON Schema that ``protocol/schema.json`` uses.

Why not the ``jsonschema`` package: the protocol needs a dozen keywords, the daemon validates
every message on the hot path (thousands a second), and the failure must name the field in the
protocol's own terms. Keywords outside the subset make `Validator` refuse the schema at load
time, so the schema can never silently rely on something this module does not check.

Supported: ``type`` (one name or a list; ``integer`` excludes floats and booleans, ``number``
excludes booleans), ``enum``, ``const``, ``properties``, ``required``, ``additionalProperties``
(true, false or a schema), ``propertyNames``, ``minProperties``, ``maxProperties``, ``items``,
``minItems``, ``maxItems``, ``minLength``, ``maxLength``, ``pattern`` (searched, as JSON Schema
says; our patterns are anchored), ``minimum``, ``maximum`` and local ``$ref`` (``#/$defs/NAME``).
Annotations (``description``, ``default``, ``title``, ``$comment``, ``x-*``) are ignored.
"""

from __future__ import annotations

import json
import re
import reprlib
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Mapping

__all__ = ["SchemaViolation", "Validator", "load_schema", "schema_path"]

_CHECKED = {
    "type", "enum", "const", "properties", "required", "additionalProperties", "propertyNames",
    "minProperties", "maxProperties", "items", "minItems", "maxItems", "minLength", "maxLength",
    "pattern", "minimum", "maximum", "$ref",
}
_ANNOTATIONS = {"description", "default", "title", "$comment", "examples"}
_TOP_LEVEL = {"$schema", "$id", "title", "description", "$defs", "messages"}

_SHORT = reprlib.Repr()
_SHORT.maxlevel = 3
_SHORT.maxstring = 50
_SHORT.maxother = 50
_SHORT.maxlong = 50

_TYPE_NAMES = {
    dict: "object", list: "array", str: "string", bool: "boolean", int: "integer",
    float: "number", type(None): "null",
}


class SchemaViolation(ValueError):
    """A value does not match its schema; ``field`` is the dotted path (``context.cube_value``)."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field or 'content'}: {reason}")


def schema_path() -> Path:
    """Where ``schema.json`` is: shipped in the package, else the repository's ``protocol/``."""
    packaged = resources.files(__package__ or "bgbot.daemon").joinpath("schema.json")
    if packaged.is_file():
        return Path(str(packaged))
    repo = Path(__file__).resolve().parents[2] / "protocol" / "schema.json"
    if repo.is_file():
        return repo
    raise FileNotFoundError(
        "protocol schema not found: neither bgbot/daemon/schema.json nor protocol/schema.json"
    )


def load_schema(path: str | Path | None = None) -> dict[str, Any]:
    """Read the protocol schema document."""
    with open(path or schema_path(), encoding="utf-8") as handle:
        document: dict[str, Any] = json.load(handle)
    return document


def ecma_pattern(pattern: str) -> str:
    """A JSON Schema (ECMA-262) ``pattern`` as a Python regular expression: an unescaped ``$``
    outside a character class becomes ``\\Z``, since Python's ``$`` also matches before a final
    newline (``"1.2\\n"`` would match ``^[0-9.]+$``), ECMA's only at the end of the text."""
    out: list[str] = []
    escaped = in_class = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "$":
            out.append("\\Z")
            continue
        out.append(char)
    return "".join(out)


def _shown(value: object) -> str:
    """A short repr, safe for values nested thousands deep (``repr`` would recurse)."""
    return _SHORT.repr(value)


def _type_name(value: object) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _type_test(names: list[str]) -> tuple[tuple[type, ...], bool]:
    """(the Python types any of the JSON type ``names`` admits, whether a bool is admitted):
    `_matches_type` as one isinstance call (a bool is an int to Python, not to JSON)."""
    kinds: dict[str, tuple[type, ...]] = {
        "integer": (int,), "number": (int, float), "string": (str,), "boolean": (),
        "object": (dict,), "array": (list,), "null": (type(None),)}
    allowed: tuple[type, ...] = ()
    for name in names:
        if name not in kinds:
            raise ValueError(f"unknown JSON Schema type {name!r}")
        allowed += kinds[name]
    return allowed, "boolean" in names


def _matches_type(value: object, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "null":
        return value is None
    raise ValueError(f"unknown JSON Schema type {name!r}")


class Validator:
    """Validates message contents against the ``messages`` section of a protocol schema."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document
        self.defs: Mapping[str, Any] = document.get("$defs", {})
        self.messages: dict[str, Any] = {}
        self._patterns: dict[str, re.Pattern[str]] = {}
        for key in document:
            if key not in _TOP_LEVEL and not key.startswith("x-"):
                raise ValueError(f"schema: unsupported top-level keyword {key!r}")
        for name, schema in self.defs.items():
            self._check_schema(schema, f"$defs/{name}")
        self._fast: dict[int, Callable[[Any], bool]] = {}
        self._fast_messages: dict[str, Callable[[Any], bool]] = {}
        self.add_messages(document["messages"])

    def add_messages(self, messages: Mapping[str, Any]) -> None:
        """Know these message types too (their schemas may use the document's ``$defs``);
        ValueError for a type already known or a schema this validator cannot check."""
        for name, schema in messages.items():
            if name in self.messages:
                raise ValueError(f"schema: message {name!r} is defined already")
            self._check_schema(schema, f"messages/{name}")
            if schema.get("x-kind") not in ("request", "reply", "event"):
                raise ValueError(f"schema messages/{name}: x-kind must be request, reply or event")
        for name, schema in messages.items():
            self.messages[name] = schema
            self._fast_messages[name] = self._compile(schema)

    # ------------------------------------------------------------------ schema checking

    def _check_schema(self, schema: Any, where: str) -> None:
        if not isinstance(schema, dict):
            raise ValueError(f"schema {where}: expected an object")
        for key, value in schema.items():
            if key in _ANNOTATIONS or key.startswith("x-"):
                continue
            if key not in _CHECKED:
                raise ValueError(f"schema {where}: keyword {key!r} is not supported by bgbot's validator")
            if key == "$ref":
                self._resolve(value, where)
            elif key == "properties":
                for prop, sub in value.items():
                    self._check_schema(sub, f"{where}/properties/{prop}")
            elif key in ("items", "propertyNames") or (key == "additionalProperties" and isinstance(value, dict)):
                self._check_schema(value, f"{where}/{key}")
            elif key == "pattern":
                self._patterns[value] = re.compile(ecma_pattern(value))
            elif key == "type":
                for name in [value] if isinstance(value, str) else value:
                    _matches_type(None, name)  # raises on an unknown type name

    def _resolve(self, ref: str, where: str = "") -> Any:
        prefix = "#/$defs/"
        if not isinstance(ref, str) or not ref.startswith(prefix) or ref[len(prefix):] not in self.defs:
            raise ValueError(f"schema {where}: unresolvable $ref {ref!r}")
        return self.defs[ref[len(prefix):]]

    # ------------------------------------------------------------------ validation

    def knows(self, msg_type: str) -> bool:
        return msg_type in self.messages

    def kind(self, msg_type: str) -> str:
        """``request``, ``reply`` or ``event``."""
        kind: str = self.messages[msg_type]["x-kind"]
        return kind

    def validate(self, msg_type: str, content: Any) -> None:
        """Raise `SchemaViolation` naming the first field that does not match.

        A compiled check (`_compile`) answers valid / invalid; only an invalid message walks
        the schema again to name its first bad field (no path strings on the hot path)."""
        if not self._fast_messages[msg_type](content):
            self._validate(content, self.messages[msg_type], "")
            raise SchemaViolation("", "refused by the compiled check but not by the schema walk "
                                  "(a bug in bgbot.daemon.schema; please report it)")

    # ------------------------------------------------------------------ compiled checks

    def _compile(self, schema: Mapping[str, Any]) -> Callable[[Any], bool]:
        """A predicate equal to "`_validate` raises nothing" for ``schema``, built once, with
        every keyword looked up in advance (memoised per schema object; $ref cycles resolved
        lazily)."""
        key = id(schema)
        found = self._fast.get(key)
        if found is not None:
            return found
        slot: list[Callable[[Any], bool]] = []
        self._fast[key] = lambda value: slot[0](value)  # a $ref back to this schema
        checks: list[Callable[[Any], bool]] = []
        ref = schema.get("$ref")
        if ref is not None:
            checks.append(self._compile(self._resolve(ref)))
        kind = schema.get("type")
        if kind is not None:
            allowed, bool_ok = _type_test([kind] if isinstance(kind, str) else list(kind))

            def typed(value: Any) -> bool:
                if type(value) is bool:
                    return bool_ok
                return isinstance(value, allowed)

            checks.append(typed)
        if "enum" in schema:
            options = list(schema["enum"])
            checks.append(lambda v: any(v == o and type(v) is type(o) for o in options))
        if "const" in schema:
            constant = schema["const"]
            checks.append(lambda v: v == constant)
        lowest, highest = schema.get("minimum"), schema.get("maximum")

        def number(v: Any) -> bool:
            if lowest is not None and v < lowest or highest is not None and v > highest:
                return False
            return not (isinstance(v, float) and v != v)

        by_type: dict[type, Callable[[Any], bool]] = {
            dict: self._compile_object(schema), list: self._compile_array(schema),
            str: self._compile_string(schema), int: number, float: number,
        }
        first = checks[0] if len(checks) == 1 else None

        def check(value: Any) -> bool:
            if first is not None:
                if not first(value):
                    return False
            else:
                for part in checks:
                    if not part(value):
                        return False
            exact = by_type.get(type(value))
            if exact is not None:
                return exact(value)
            if type(value) is bool or value is None:
                return True
            for base, inherited in by_type.items():  # subclasses of the JSON types
                if isinstance(value, base):
                    return inherited(value)
            return True

        slot.append(check)
        self._fast[key] = check
        return check

    def _compile_object(self, schema: Mapping[str, Any]) -> Callable[[Any], bool]:
        required = tuple(schema.get("required", ()))
        fewest, most = schema.get("minProperties"), schema.get("maxProperties")
        properties = {k: self._compile(v) for k, v in schema.get("properties", {}).items()}
        extra = schema.get("additionalProperties", True)
        extra_check = self._compile(extra) if isinstance(extra, dict) else None
        names = schema.get("propertyNames")
        names_check = self._compile(names) if names is not None else None

        def check(value: dict[Any, Any]) -> bool:
            for field in required:
                if field not in value:
                    return False
            if fewest is not None and len(value) < fewest or most is not None and len(value) > most:
                return False
            for field, item in value.items():
                if type(field) is not str and not isinstance(field, str):
                    return False
                if names_check is not None and not names_check(field):
                    return False
                sub = properties.get(field)
                if sub is not None:
                    if not sub(item):
                        return False
                elif extra is False:
                    return False
                elif extra_check is not None and not extra_check(item):
                    return False
            return True

        return check

    def _compile_array(self, schema: Mapping[str, Any]) -> Callable[[Any], bool]:
        fewest, most = schema.get("minItems"), schema.get("maxItems")
        items = schema.get("items")
        item_check = self._compile(items) if items is not None else None

        def check(value: list[Any]) -> bool:
            if fewest is not None and len(value) < fewest or most is not None and len(value) > most:
                return False
            return item_check is None or all(item_check(item) for item in value)

        return check

    def _compile_string(self, schema: Mapping[str, Any]) -> Callable[[Any], bool]:
        shortest, longest = schema.get("minLength"), schema.get("maxLength")
        pattern = schema.get("pattern")
        search = self._patterns[pattern].search if pattern is not None else None

        def check(value: str) -> bool:
            if shortest is not None and len(value) < shortest:
                return False
            if longest is not None and len(value) > longest:
                return False
            return search is None or search(value) is not None

        return check

    def validate_value(self, schema: Mapping[str, Any], value: Any, path: str = "") -> None:
        self._validate(value, schema, path)

    def _validate(self, value: Any, schema: Mapping[str, Any], path: str) -> None:
        ref = schema.get("$ref")
        if ref is not None:
            self._validate(value, self._resolve(ref), path)
        kind = schema.get("type")
        if kind is not None:
            names = [kind] if isinstance(kind, str) else kind
            if not any(_matches_type(value, name) for name in names):
                raise SchemaViolation(
                    path, f"expected {' or '.join(names)}, got {_type_name(value)} {_shown(value)}"
                )
        if "enum" in schema and not any(
            value == option and type(value) is type(option) for option in schema["enum"]
        ):
            options = ", ".join(json.dumps(option) for option in schema["enum"])
            raise SchemaViolation(path, f"must be one of {options}, got {_shown(value)}")
        if "const" in schema and value != schema["const"]:
            raise SchemaViolation(path, f"must be {json.dumps(schema['const'])}, got {_shown(value)}")
        if isinstance(value, dict):
            self._validate_object(value, schema, path)
        elif isinstance(value, list):
            self._validate_array(value, schema, path)
        elif isinstance(value, str):
            self._validate_string(value, schema, path)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if "minimum" in schema and value < schema["minimum"]:
                raise SchemaViolation(path, f"must be at least {schema['minimum']}, got {value}")
            if "maximum" in schema and value > schema["maximum"]:
                raise SchemaViolation(path, f"must be at most {schema['maximum']}, got {value}")
            if isinstance(value, float) and value != value:
                raise SchemaViolation(path, "must be a number, got NaN")

    def _validate_object(self, value: dict[Any, Any], schema: Mapping[str, Any], path: str) -> None:
        for key in value:
            if not isinstance(key, str):
                raise SchemaViolation(path, f"keys must be strings, got {_shown(key)}")
        for key in schema.get("required", ()):
            if key not in value:
                raise SchemaViolation(_join(path, key), "required field missing")
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            raise SchemaViolation(path, f"needs at least {schema['minProperties']} fields")
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            raise SchemaViolation(path, f"allows at most {schema['maxProperties']} fields")
        properties: Mapping[str, Any] = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        names = schema.get("propertyNames")
        for key, item in value.items():
            where = _join(path, key)
            if names is not None:
                self._validate(key, names, where)
            sub = properties.get(key)
            if sub is not None:
                self._validate(item, sub, where)
            elif extra is False:
                known = ", ".join(properties) or "none"
                raise SchemaViolation(where, f"unknown field (known fields: {known})")
            elif isinstance(extra, dict):
                self._validate(item, extra, where)

    def _validate_array(self, value: list[Any], schema: Mapping[str, Any], path: str) -> None:
        if "minItems" in schema and len(value) < schema["minItems"]:
            raise SchemaViolation(path, f"needs at least {schema['minItems']} items, got {len(value)}")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise SchemaViolation(path, f"allows at most {schema['maxItems']} items, got {len(value)}")
        items = schema.get("items")
        if items is not None:
            for index, item in enumerate(value):
                self._validate(item, items, f"{path}[{index}]")

    def _validate_string(self, value: str, schema: Mapping[str, Any], path: str) -> None:
        if "minLength" in schema and len(value) < schema["minLength"]:
            raise SchemaViolation(path, f"must have at least {schema['minLength']} characters, got {_shown(value)}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise SchemaViolation(path, f"must have at most {schema['maxLength']} characters, got {len(value)}")
        pattern = schema.get("pattern")
        if pattern is not None and not self._patterns[pattern].search(value):
            raise SchemaViolation(path, f"does not match {pattern}, got {_shown(value)}")
