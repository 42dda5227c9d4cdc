"""The manual's reference is generated from the code (infra/docs/reference.py); these tests fail when something is
added without the documentation the generated pages are made of: a CLI command or option without help, an API
operation without a description, a setting without a Field description, a plan field without a description, or an
environment variable the code reads that no reference table names."""

from __future__ import annotations

import re

from infra.docs import reference
from infra.localstack import REPO

# Set by our own scripts for the processes they start (never by a user), so not part of the reference.
INTERNAL_VARIABLES = {
    "BENCHTRAIL_BENCH_RUN": "set by `stack.py ephemeral --seed` for `make bench-ui`",
    "BENCHTRAIL_E2E_URL": "set by `stack.py ephemeral` for the end-to-end tests",
    "BENCHTRAIL_E2E_ADMIN_TOKEN": "set by `stack.py ephemeral` for the end-to-end tests",
}


def test_every_cli_command_and_option_has_help() -> None:
    assert reference.undocumented_cli() == []


def test_the_cli_walk_finds_every_command() -> None:
    names = set(reference.cli_commands())
    # Independent of the walk: the command names the client's parser and the admin app register, read from the source.
    client = (REPO / "backend/benchtrail/cli/client.py").read_text()
    expected = {f"benchtrail {n}" for n in re.findall(r"\bsub\.add_parser\(\s*\"([a-z-]+)\"", client)}
    expected |= {f"benchtrail runs {n}" for n in re.findall(r"\bruns_sub\.add_parser\(\s*\"([a-z-]+)\"", client)}
    admin = (REPO / "backend/benchtrail/cli/admin.py").read_text()
    expected |= {f"benchtrail admin {n}" for n in re.findall(r"@admin_app\.command\(\"([a-z-]+)\"\)", admin)}
    assert len(expected) >= 10 and expected <= names


def test_every_api_operation_has_a_summary_and_a_description() -> None:
    assert reference.undocumented_api() == []


def test_an_operation_without_a_description_is_found() -> None:
    doc = {"paths": {"/api/v1/x": {"get": {"summary": "X"}, "post": {"summary": "Y", "description": "does Y"}}}}
    assert reference.undocumented_api(doc) == [
        "GET /api/v1/x has no description (the endpoint function's docstring)"]


def test_every_setting_has_a_description() -> None:
    assert reference.undocumented_settings() == []


def test_every_plan_field_has_a_description() -> None:
    assert reference.undocumented_plan_fields() == []


def test_a_plan_field_without_a_description_is_found() -> None:
    schema = {"properties": {"a": {"type": "string", "description": "A"}},
              "$defs": {"thing": {"properties": {"b": {"type": "integer"}}}}}
    assert reference.undocumented_plan_fields(schema) == ["thing.b"]


def _variables_read_by_the_code() -> set[str]:
    names: set[str] = set()
    for folder, pattern in (("backend/benchtrail", "*.py"), ("worker", "*.py"), ("infra", "*.py"), ("infra", "*.sh")):
        for path in (REPO / folder).rglob(pattern):
            if "node_modules" in path.parts or path.parts[-2:] == ("docs", "reference.py"):
                continue
            names |= set(re.findall(r"\bBENCHTRAIL_[A-Z0-9_]*[A-Z0-9]\b", path.read_text()))
    return names


def test_every_environment_variable_the_code_reads_is_in_the_reference() -> None:
    read = _variables_read_by_the_code()
    assert "BENCHTRAIL_DATABASE_URL" in read and "BENCHTRAIL_RUNNER_TOKEN" in read   # the scan sees the code
    missing = sorted(read - reference.documented_variables() - set(INTERNAL_VARIABLES))
    assert missing == [], f"add these to a settings model (with a description) or to OTHER_VARIABLES: {missing}"


def test_the_configuration_page_names_every_variable_with_its_meaning() -> None:
    page = reference.configuration_page()
    rows = dict(re.findall(r"^\| `(BENCHTRAIL_[A-Z0-9_]+)` \| [^|]*\| (.+) \|$", page, flags=re.M))
    assert set(rows) == reference.documented_variables()
    assert all(len(meaning.strip()) > 10 for meaning in rows.values())
    assert "Chunk size" in rows["BENCHTRAIL_RUNNER_UPLOAD_CHUNK_BYTES"]   # the runner's table, from its VARIABLES


def test_the_generated_pages_are_markdown_with_one_title() -> None:
    for path, text in reference.pages().items():
        if not path.endswith(".md"):
            continue
        titles = [line for line in text.splitlines() if line.startswith("# ")]
        assert len(titles) == 1, (path, titles)


def test_the_domain_picture_draws_every_layer_and_import() -> None:
    """The picture follows the contract and the code: a box per domain of the layers, an arc per import between
    two domains (counted here from the sources, independently of the drawing's own scan)."""
    import re as _re

    svg = reference.pages()["reference/domains.svg"]
    domains = {d.strip() for layer in reference.domain_layers() for d in layer}
    assert set(_re.findall(r">([a-z]+)</text>", svg)) == domains
    imports = set()
    for path in (REPO / "backend" / "benchtrail").rglob("*.py"):
        owner = path.relative_to(REPO / "backend" / "benchtrail").parts[0]
        for other in _re.findall(r"^\s*(?:from|import) benchtrail\.([a-z_]+)", path.read_text(), flags=_re.M):
            if owner in domains and other in domains and other != owner:
                imports.add((owner, other))
    drawn = set(_re.findall(r"<title>([a-z]+) imports ([a-z]+)</title>", svg))
    assert drawn == imports and len(drawn) > 20
