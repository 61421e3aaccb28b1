"""The shared base of every durable record model, and :func:`dump_record`.

Three rules make a record written by the TypeScript daemon survive a Python read and rewrite:

* **Unknown fields are kept** (``extra="allow"``). A newer writer may add fields this version does
  not know; dropping them on read would erase that writer's data at the next rewrite, and a reader
  that only ignores them has no way to put them back. Kept fields ride along untouched and are
  written back after the declared ones.
* **Only what was read (or set) is written** (``exclude_unset``). An optional field that was
  absent stays absent, one that was ``null`` stays ``null``, so ``dump_record(load(x)) == x``.
* **Fields the TypeScript writer always writes are always written**
  (:attr:`RecordModel.ALWAYS_EMIT`). Its schemas fill some absent fields with a default (``null``,
  ``false``, ``{}``) and write them back; a Python writer must do the same so its files stay
  readable by a TypeScript daemon whose schema requires the key.

Scalars validate strictly, as Zod does: ``"1"`` is not a number and ``1`` is not a string.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = ["ROOT_CONFIG", "RecordModel", "dump_record"]


class RecordModel(BaseModel):
    """Base of every durable JSON record (one JSON object).

    Subclasses declare their fields in camelCase, exactly as stored, in the order the TypeScript
    schema lists them, and may set two class-level sets of field names:

    ``ALWAYS_EMIT``
        Fields written even when they were absent on read (they then carry their default). Used
        for keys the TypeScript schema defaults and always writes back.
    ``NOT_NULL``
        Optional fields that may be omitted but never be ``null`` (Zod ``.optional()`` without
        ``.nullable()``); an explicit ``null`` is a validation error.
    """

    # Built on first use: an empty home never pays for the schemas of records it lacks.
    model_config = ConfigDict(extra="allow", strict=True, defer_build=True)

    ALWAYS_EMIT: ClassVar[frozenset[str]] = frozenset()
    NOT_NULL: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        unknown = (cls.ALWAYS_EMIT | cls.NOT_NULL) - set(cls.model_fields)
        if unknown:
            msg = f"{cls.__name__} names undeclared fields: {sorted(unknown)}"
            raise TypeError(msg)
        both = cls.ALWAYS_EMIT & cls.NOT_NULL
        if both:
            msg = f"{cls.__name__}: fields cannot be both ALWAYS_EMIT and NOT_NULL: {sorted(both)}"
            raise TypeError(msg)

    @model_validator(mode="after")
    def _apply_field_rules(self) -> Self:
        # An "after" validator keeps pydantic's JSON fast path (a "before" one forces every
        # record through an intermediate dict, ~3x slower to load). A field given in the input
        # is in model_fields_set; NOT_NULL and ALWAYS_EMIT never overlap (checked at class
        # creation), so a set NOT_NULL field holding None was an explicit null.
        if self.NOT_NULL:
            nulls = sorted(
                name
                for name in self.NOT_NULL
                if name in self.__pydantic_fields_set__ and getattr(self, name) is None
            )
            if nulls:
                msg = f"may be omitted but not null: {', '.join(nulls)}"
                raise ValueError(msg)
        if self.ALWAYS_EMIT:
            # Mark the always-written fields as set, so dump_record writes them. (Done here
            # rather than in model_post_init: one Python call per record instead of two.)
            self.__pydantic_fields_set__.update(self.ALWAYS_EMIT)
        return self


ROOT_CONFIG = ConfigDict(strict=True)
"""Configuration of whole-file models whose top level is a JSON array or map (``RootModel``).

Their items are :class:`RecordModel` instances and carry the round-trip rules themselves."""


def dump_record(model: BaseModel) -> Any:
    """The JSON-ready form of ``model``, as it should be written to disk.

    Field names are the stored camelCase names; fields that were absent on read stay absent
    (except the model's ``ALWAYS_EMIT`` fields) and unknown fields read from disk are written
    back, so for every record TypeScript Paseo writes, ``dump_record(Model.model_validate(x)) ==
    x``. Returns a ``dict`` for object records and a ``list``/``dict`` for whole-file root models.
    """
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)
