"""Every sentence of AWS's that a notebook quotes is in docs/sources.md, word for word.

The convention: in a notebook's markdown, a quotation of AWS (the Developer Guide, the API reference, botocore,
an AWS library's README, a message DynamoDB answers) is written in curly quotes, “like this”, and nothing else is.
docs/sources.md holds, for each quoted page, the page and its current wording, as quoted blocks (lines starting
with "> "). A quotation matches when its words appear, in order, inside one such block: line breaks, runs of
spaces, markdown's `code` and *emphasis* marks and a blockquote's list markers do not count; every word, letter
case and punctuation mark does.

A second check keeps the convention honest: a passage in straight quotes that reads like a quotation of AWS (its
paragraph names the Developer Guide, the API reference or AWS's documentation, or its words are in
docs/sources.md) fails, so that it is put in curly quotes and checked.
"""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
SOURCES = ROOT / "docs" / "sources.md"
CURLY = re.compile(r"“([^”]+)”")
STRAIGHT = re.compile(r'"([^"\n]*(?:\n[^"\n]*){0,3})"')
FENCED = re.compile(r"```.*?```", re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
ATTRIBUTION = re.compile(r"Developer Guide|API reference|API documentation|AWS documentation|DynamoDB documentation"
                         r"|the guide\b|botocore's doc", re.I)
# Straight-quoted passages near an attribution that are not quotations of AWS (an error's name, a persona's words).
NOT_QUOTATIONS = {
    "because it is cheaper and also takes many items",  # 25: the colleague's words in interview question 2
    "alice: BatchWriteItem makes {PK: 'PAIR', SK: 'x'} visible",  # 33: a step of the replay panel, as it reads
}


def normal(text):
    """The words of `text` as compared: markup and layout dropped, every word and punctuation mark kept."""
    text = re.sub(r"^\s*>\s?", " ", text, flags=re.M)     # blockquote markers
    text = re.sub(r"^\s*[*+-]\s+", " ", text, flags=re.M)  # list markers inside a block
    text = text.replace("`", "").replace("*", "").replace("\\", "")
    return " ".join(text.split())


def source_blocks(markdown):
    """The quoted wording of docs/sources.md: each run of consecutive '> ' lines, normalised."""
    blocks, current = [], []
    for line in markdown.splitlines() + [""]:
        if line.startswith(">"):
            current.append(line)
        elif current:
            blocks.append(normal("\n".join(current)))
            current = []
    return blocks


def quotations(markdown):
    """The curly-quoted passages of a notebook's markdown, normalised."""
    return [normal(found) for found in CURLY.findall(markdown)]


def unsourced(quotes, blocks):
    """The quotations that no block of docs/sources.md contains word for word."""
    return [quote for quote in quotes if not any(quote in block for block in blocks)]


def markdown_cells(path):
    """(index, source) of each markdown cell of a notebook."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(i, "".join(cell["source"])) for i, cell in enumerate(cells) if cell["cell_type"] == "markdown"]


def straight_quotations(markdown, blocks):
    """Passages in straight quotes (outside code) that read like quotations of AWS: their paragraph names an AWS
    document, or their words are in docs/sources.md."""
    found = []
    text = INLINE_CODE.sub(lambda code: code.group(0).replace('"', ""), FENCED.sub("", markdown))
    for paragraph in re.split(r"\n\s*\n|\n(?=[*+-] )", text):
        attributed = ATTRIBUTION.search(paragraph)
        for quoted in STRAIGHT.findall(paragraph):
            words = normal(quoted)
            if len(words.split()) < 3 or words in NOT_QUOTATIONS:
                continue
            if attributed or (len(words.split()) >= 5 and any(words in block for block in blocks)):
                found.append(words)
    return found


@pytest.fixture(scope="module")
def blocks():
    return source_blocks(SOURCES.read_text(encoding="utf-8"))


def test_every_quotation_in_a_notebook_is_in_the_sources_word_for_word(blocks):
    missing = [f"{path.name} cell {i}: “{quote}”" for path in NOTEBOOKS for i, markdown in markdown_cells(path)
               for quote in unsourced(quotations(markdown), blocks)]
    assert not missing, ("quoted in a notebook but not found word for word in docs/sources.md (add the page and "
                         "its current wording there, or correct the quotation):\n" + "\n".join(missing))


def test_the_notebooks_quote_aws_and_the_sources_cover_every_notebook_that_does(blocks):
    quoted = {path.name for path in NOTEBOOKS for _, markdown in markdown_cells(path) if quotations(markdown)}
    assert {"25-transactions.ipynb", "28-gsi-eventual-consistency.ipynb", "33-isolation-atlas.ipynb"} <= quoted
    assert len(blocks) >= 20


def test_no_quotation_of_aws_is_left_in_straight_quotes(blocks):
    loose = [f"{path.name} cell {i}: \"{words}\"" for path in NOTEBOOKS for i, markdown in markdown_cells(path)
             for words in straight_quotations(markdown, blocks)]
    assert not loose, ("these read like quotations of AWS but are in straight quotes; write them “in curly "
                       "quotes” and add them to docs/sources.md (or, if they quote nobody, rephrase):\n"
                       + "\n".join(loose))


def test_a_misquote_is_caught_even_when_one_word_differs(blocks):
    right = "“Eventually consistent is the default read consistent model for all read operations.”"
    wrong = "“Eventually consistent is the default read consistency model for all read operations.”"
    older = "“DynamoDB uses eventually consistent reads, unless you specify otherwise”"
    assert unsourced(quotations(right), blocks) == []
    assert unsourced(quotations(wrong), blocks) == [normal(wrong.strip("“”"))]
    assert unsourced(quotations(older), blocks) == [normal(older.strip("“”"))]


def test_a_quotation_cut_short_still_matches_but_one_extended_past_the_source_does_not(blocks):
    cut = "“the subsequent part of the read operation returns the newly committed value”"
    run_on = "“the subsequent part of the read operation returns the newly committed value, always.”"
    assert unsourced(quotations(cut), blocks) == []
    assert unsourced(quotations(run_on), blocks)


def test_layout_and_code_marks_do_not_count_but_letter_case_does():
    blocks = source_blocks("> “A conflicting operation is in the process of updating\n> an item to be read.”\n")
    assert unsourced(quotations("“A conflicting `operation` is in the\nprocess of updating an item to be read.”"),
                     blocks) == []
    assert unsourced(quotations("“a conflicting operation is in the process of updating an item to be read”"),
                     blocks)


def test_a_quotation_must_fit_in_one_block_not_span_two():
    blocks = source_blocks("> The first sentence.\n\nNotes in between.\n\n> The second sentence.\n")
    assert unsourced(quotations("“The first sentence. The second sentence.”"), blocks)


def test_straight_quotes_next_to_an_aws_document_are_flagged():
    blocks = source_blocks("> DynamoDB typically deletes expired items within two days of expiration.\n")
    assert straight_quotations('The API reference says "typically within two days".', blocks) == [
        "typically within two days"]
    assert straight_quotations('As a user says, "this key is unique" is the point.', blocks) == []
    assert straight_quotations('Then "typically deletes expired items within two days" again.', blocks) == [
        "typically deletes expired items within two days"]
    assert straight_quotations('The Developer Guide: `ConditionExpression="version = :v"`.', blocks) == []
