"""Reading and writing the training settings (:mod:`.settings`, :mod:`.recipe_settings`) as YAML.

Files are read strictly (:func:`load_yaml_text`): a duplicate key or a YAML alias is an error. A
user's file may leave fields to their defaults but may not be empty; a run's saved
``config.yaml`` must be complete (``complete=True``, ``--resume``). The mapping is built into the
frozen dataclasses by ``dacite`` (strict), with type hooks whose messages name the dotted key
(``ppo.learning_rate: must be a number, got 'abc'``).
"""

from __future__ import annotations

import dataclasses
import math
import re
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

import dacite
import yaml

from ..files import FileReadError, read_bounded
from ..records import write_bytes_atomic
from ..rules import ConfigError, GameConfig

MAX_CONFIG_BYTES = 1 << 20
"""Largest configuration file read (1 MiB; the shipped ones are a few hundred bytes)."""

_Config = TypeVar("_Config", bound="YamlConfig")


class YamlConfig:
    """Reading and writing a configuration dataclass as YAML: the methods the training recipes'
    top-level configurations (:class:`~.settings.TrainConfig` and the recipes') share."""

    def to_dict(self) -> dict[str, Any]:
        return to_plain(self)

    @classmethod
    def from_dict(cls: type[_Config], data: Mapping[str, Any]) -> _Config:
        return build(cls, data)

    @classmethod
    def from_yaml(cls: type[_Config], path: str | Path, overrides: Mapping[str, Any] | None = None,
                  complete: bool = False) -> _Config:
        """Load a YAML file, apply dotted-path ``overrides``, validate.

        The file must hold a mapping (an empty file is an error, never the defaults). With
        ``complete`` (a run's saved ``config.yaml``), every field must be present: the
        message names the file and the missing keys.
        """
        path = Path(path)
        data = load_yaml_text(read_config_text(path), str(path))
        if data is None:
            raise ConfigError("config", f"{path} is empty; a configuration file must set at least one field")
        if not isinstance(data, dict):
            raise ConfigError("config", f"{path} must hold a mapping at the top level")
        if complete:
            missing = missing_fields(cls, data)
            if missing:
                shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
                raise ConfigError("config", f"{path} is incomplete: a run's configuration holds every field, "
                                            f"this one misses {shown}")
        for key, value in (overrides or {}).items():
            set_dotted(data, key, value)
        return cls.from_dict(data)

    def save_yaml(self, path: str | Path) -> Path:
        """Write every field to ``path`` atomically (a temporary file, fsynced, then a rename)."""
        text = yaml.dump(self.to_dict(), Dumper=_NoAliasDumper, sort_keys=False)
        return write_bytes_atomic(path, text.encode("utf-8"))


def recipe_of(path: str | Path) -> str | None:
    """The ``recipe`` key at the top of the YAML file ``path`` (``"turnnet"``, ``"value"``): a recipe
    file rather than a PPO configuration; ``None`` for anything else, including files that cannot be
    read (the PPO loader reports those)."""
    try:
        data = load_yaml_text(read_config_text(Path(path)), str(path))
    except ConfigError:
        return None
    recipe = data.get("recipe") if isinstance(data, dict) else None
    return recipe if isinstance(recipe, str) else None


# ====================================================================== YAML text
class StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses duplicate keys and aliases (see the module docstring)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None,
                None,
                f"YAML aliases (*{show_text(str(event.anchor), 40)}) are not allowed in a configuration file",
                event.start_mark,
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                except TypeError:  # an unhashable key: SafeConstructor explains it
                    continue
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        "while reading a mapping", node.start_mark, f"found duplicate key {show(key, 60)}",
                        key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


class _NoAliasDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def read_config_text(path: Path) -> str:
    """The text of a configuration file, read bounded (:func:`~skipbo_env.files.read_bounded`: a
    regular file of at most :data:`MAX_CONFIG_BYTES`); a missing, unreadable, oversized, non-regular
    (a pipe, a device) or binary file is a :class:`ConfigError` naming it."""
    try:
        raw = read_bounded(path, MAX_CONFIG_BYTES, "configuration file")
    except FileReadError as exc:
        raise ConfigError("config", str(exc)) from None
    if b"\0" in raw:
        raise ConfigError("config", f"{path} is a binary file (NUL bytes), not YAML")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError("config", f"{path} is not UTF-8 text (byte {exc.start}); not a YAML file") from None


def load_yaml_text(text: str, where: str) -> Any:
    """Parse configuration YAML strictly (:class:`StrictLoader`); errors name ``where`` and stay short."""
    try:
        return yaml.load(text, Loader=StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = " ".join(str(exc.problem or exc.context).split())
        raise ConfigError("config", f"{where} is not valid YAML{at}: {show_text(problem, 200)}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(
            "config", f"{where} is not valid YAML: {show_text(' '.join(str(exc).split()), 200)}"
        ) from None
    except RecursionError:
        raise ConfigError("config", f"{where} is nested too deeply") from None


# ====================================================================== mappings
def set_dotted(data: dict[str, Any], dotted: str, value: Any) -> None:
    """``set_dotted(d, "ppo.learning_rate", 1e-4)`` sets ``d["ppo"]["learning_rate"]``."""
    keys = dotted.split(".")
    node = data
    for key in keys[:-1]:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise ConfigError(dotted, f"{key} is not a section")
        node = child
    node[keys[-1]] = value


def to_plain(value: Any) -> Any:
    """A configuration as plain YAML data: dataclasses as mappings, tuples as lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    return value


def missing_fields(cls: type, data: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Dotted names of the fields of dataclass ``cls`` absent from ``data`` (recursively)."""
    missing = []
    hints = typing.get_type_hints(cls) if cls is not GameConfig else {}
    for f in dataclasses.fields(cls):
        name = f"{prefix}{f.name}"
        if f.name not in data:
            missing.append(name)
            continue
        tp = hints.get(f.name)
        value = data[f.name]
        if isinstance(tp, type) and dataclasses.is_dataclass(tp) and isinstance(value, Mapping):
            missing.extend(missing_fields(tp, value, f"{name}."))
        elif typing.get_origin(tp) is tuple and isinstance(value, list):
            item = typing.get_args(tp)[0]
            if isinstance(item, type) and dataclasses.is_dataclass(item):
                for i, v in enumerate(value):
                    if isinstance(v, Mapping):
                        missing.extend(missing_fields(item, v, f"{name}[{i}]."))
    return missing


# ====================================================================== building the dataclasses
class _Refused(dacite.DaciteFieldError):
    """A value refused by a type hook; dacite prefixes the dotted key as the error unwinds."""

    def __init__(self, message: str, field_path: str | None = None) -> None:
        super().__init__(field_path)
        self.message = message


def build(cls: type[_Config], data: Any) -> _Config:
    """Build the configuration dataclass ``cls`` from ``data`` (a mapping, as YAML reads it): every
    key, type and value checked, an error naming the dotted key (:class:`ConfigError`)."""
    config = _dacite_config(cls)
    try:
        return dacite.from_dict(cls, config.type_hooks[cls](data), config)
    except _Refused as exc:
        raise ConfigError(_key(exc), exc.message) from None
    except dacite.MissingValueError as exc:
        raise ConfigError(_key(exc), "missing (this setting has no default)") from None
    except dacite.WrongTypeError as exc:
        raise ConfigError(_key(exc), _wrong_type(exc.field_type, exc.value)) from None


def _key(exc: dacite.DaciteFieldError) -> str:
    """The dotted key of a refused value (``opponents.curriculum[0].promote_at``)."""
    return (exc.field_path or "config").replace(".[", "[")


def _wrong_type(tp: Any, value: Any) -> str:
    if typing.get_origin(tp) is Literal:
        return f"must be one of {list(typing.get_args(tp))}, got {show(value)}"
    shown = str(tp).replace("typing.", "")
    return f"must be {shown}, got {show(value)}"


def _dacite_config(cls: type) -> dacite.Config:
    """dacite's settings for ``cls``: strict, lists to tuples, and a type hook for every type that
    ``cls``'s fields use (see the module docstring)."""
    hooks: dict[Any, Callable[[Any], Any]] = {int: _int, float: _float, bool: _bool, str: _str, GameConfig: _game}
    config = dacite.Config(type_hooks=hooks, cast=[tuple], strict=True)
    todo: list[Any] = [cls]
    while todo:
        tp = todo.pop()
        args = typing.get_args(tp)
        if tp in hooks:
            continue
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            hooks[tp] = _keys_hook(tp)
            todo.extend(typing.get_type_hints(tp).values())
        elif typing.get_origin(tp) is tuple:
            hooks[tp] = _items_hook(args[0], config)
            todo.append(args[0])
        elif typing.get_origin(tp) is dict:
            hooks[tp] = _entries_hook(args[0], args[1], config)
            todo.extend(args)
        else:  # a union (X | None) or a Literal
            todo.extend(args)
    return config


def _item(tp: Any, value: Any, config: dacite.Config) -> Any:
    """``value`` built as a ``tp``: a dataclass by dacite, anything else by its hook (if any)."""
    if isinstance(tp, type) and dataclasses.is_dataclass(tp) and tp is not GameConfig:
        return value if isinstance(value, tp) else dacite.from_dict(tp, config.type_hooks[tp](value), config)
    hook = config.type_hooks.get(tp)
    return hook(value) if hook is not None else value


def _at(where: str, tp: Any, value: Any, config: dacite.Config) -> Any:
    """:func:`_item`, with ``where`` (``[3]``, a mapping's key) in the path of a refusal."""
    try:
        return _item(tp, value, config)
    except dacite.DaciteFieldError as exc:
        exc.field_path = where + (f".{exc.field_path}" if exc.field_path else "")
        raise


def _items_hook(tp: Any, config: dacite.Config) -> Callable[[Any], Any]:
    """A hook that builds each item of a list as a ``tp``, a refusal naming its index."""

    def build(value: Any) -> tuple[Any, ...]:
        _list(value)
        return tuple(_at(f"[{i}]", tp, item, config) for i, item in enumerate(value))

    return build


def _entries_hook(key_tp: Any, value_tp: Any, config: dacite.Config) -> Callable[[Any], Any]:
    """A hook that builds each entry of a mapping, a refusal naming its key."""

    def build(value: Any) -> dict[Any, Any]:
        _mapping(value)
        return {_item(key_tp, k, config): _at(show_text(str(k), 60), value_tp, v, config) for k, v in value.items()}

    return build


_SETTING_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,59}")
"""What an unknown key must look like to be named in an error."""


def _keys_hook(cls: type) -> Callable[[Any], Any]:
    """A hook that lets through a mapping of ``cls``'s field names only."""
    fields = {f.name for f in dataclasses.fields(cls)}

    def check(value: Any) -> Any:
        if isinstance(value, cls):  # built already (an item of a list, see _items_hook)
            return value
        _mapping(value)
        for key in value:
            if key not in fields:
                if isinstance(key, str) and _SETTING_NAME.fullmatch(key):
                    raise _Refused(f"unknown key; allowed: {', '.join(sorted(fields))}", key)
                # not shown: a file that is no configuration (a password file) must not be echoed
                raise _Refused(f"a key that is not a setting name (not shown; is this a training "
                               f"configuration?); allowed: {', '.join(sorted(fields))}", "(key)")
        return value

    return check


def _game(value: Any) -> GameConfig:
    _mapping(value)
    try:
        return GameConfig.from_dict(value)
    except ConfigError as exc:
        raise _Refused(str(exc).split(": ", 1)[1], exc.field) from None


def _mapping(value: Any) -> Any:
    if not isinstance(value, Mapping):
        raise _Refused(f"must be a mapping, got {type(value).__name__}")
    return value


def _list(value: Any) -> Any:
    if not isinstance(value, list | tuple):
        raise _Refused(f"must be a list, got {show(value)}")
    return value


def _bool(value: Any) -> bool:
    if type(value) is not bool:
        raise _Refused(f"must be true or false, got {show(value)}")
    return value


def _int(value: Any) -> int:
    if type(value) is not int:
        raise _Refused(f"must be an int, got {show(value)}")
    return value


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise _Refused(f"must be a string, got {show(value)}")
    return value


def _float(value: Any) -> float:
    if isinstance(value, str):  # YAML 1.1 reads "1e-4" (no dot) as a string
        try:
            value = float(value)
        except ValueError:
            raise _Refused(f"must be a number, got {show(value)}") from None
    if type(value) not in (int, float):
        raise _Refused(f"must be a number, got {show(value)}")
    try:
        number = float(value)
    except OverflowError:
        raise _Refused(f"must be a finite number, got {show(value)}") from None
    if not math.isfinite(number):
        raise _Refused(f"must be a finite number, got {number}")
    return number


# ====================================================================== messages
def show(value: Any, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters: error messages never echo a huge value."""
    return show_text(repr(value), limit)


def show_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was."""
    return text if len(text) <= limit else text[: limit - 15] + f"... ({len(text):,} chars)"


__all__ = ["MAX_CONFIG_BYTES", "StrictLoader", "YamlConfig", "build", "load_yaml_text", "missing_fields",
           "read_config_text", "recipe_of", "set_dotted", "show", "show_text", "to_plain"]
