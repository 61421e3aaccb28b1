"""``paseo run --output-schema``: reading the schema and judging a reply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paseo.cli.commands._structured import check, load_schema, retry_prompt
from paseo.cli.errors import CliError

SCHEMA = {
    "type": "object",
    "required": ["answer"],
    "properties": {"answer": {"type": "integer"}},
}


def test_a_schema_from_json_or_a_file(tmp_path: Path) -> None:
    assert load_schema(json.dumps(SCHEMA)) == SCHEMA
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(SCHEMA))
    assert load_schema(str(path)) == SCHEMA


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("missing.json", "neither a file nor a JSON object"),
        ("{not json", "is not JSON"),
        ('{"type": 5}', "not a valid JSON schema"),
    ],
)
def test_a_bad_schema_is_a_usage_error(value: str, says: str) -> None:
    with pytest.raises(CliError) as caught:
        load_schema(value)
    assert caught.value.exit_code == 2
    assert says in caught.value.message


def test_a_list_is_not_a_schema(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text("[1]")
    with pytest.raises(CliError, match="must be a JSON object"):
        load_schema(str(path))


def test_judging_replies() -> None:
    assert check('{"answer": 42}', SCHEMA) == ({"answer": 42}, None)
    assert check('```json\n{"answer": 1}\n```', SCHEMA) == ({"answer": 1}, None)
    assert check("", SCHEMA) == (None, "it was empty")
    document, problem = check("the answer is 42", SCHEMA)
    assert document is None
    assert problem is not None
    assert problem.startswith("it is not JSON")
    assert check('{"answer": "x"}', SCHEMA) == (None, "answer: 'x' is not of type 'integer'")
    assert check("{}", SCHEMA) == (None, "the document: 'answer' is a required property")
    assert "'x' is not of type" in retry_prompt("answer: 'x' is not of type 'integer'", SCHEMA)
