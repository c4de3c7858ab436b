"""Which patterns read as written in another language than English (``ranking/language``)."""

import pytest

from tool_selector.ranking.language import may_be_foreign, reads_foreign


@pytest.mark.parametrize(
    ("pattern", "foreign"),
    [
        ("查询文件元数据", True),
        ("用 GitHub 创建一个新的 issue", True),
        ("ファイルの中身を読んで", True),
        ("파일 내용을 읽어 줘", True),
        ("Прочитай файл", True),
        ("Busca las páginas de Confluence que mencionan el despliegue", True),
        ("Finde die Confluence-Seiten, in denen die SSO-Einführung erwähnt wird", True),
        ("Größe ändern für alle", True),
        ("Cherche les pages qui parlent de la migration avec Paul", True),
        ("find files with auth middleware", False),
        ("why did my pod die in the night", False),
        ("un-archive the la county dataset", False),
        ("Show me the résumé of the café owner", False),
        ("create_issue", False),
        ("summarise the attached file 报告.pdf for the team", False),
        ("", False),
        ("获取 https://example.com/pricing 的原始 HTML", True),
        ("ช่วยแปลงไฟล์report.pdfเป็นภาษาไทย", True),
        ("ค้นหาไฟล์ชื่อ_รายงาน", True),
        ("Mueve PROJ-482 a Finalizado en Jira", True),
        ("Starte die gestoppten EC2-Instanzen i-01 und i-02", True),
        ("resume the radio stream", False),
        ("Find a quote for auto transport", False),
        ("show the police radio channels", False),
        ("simple shop", False),
        ("scraping multimedia indices", False),
    ],
    ids=["zh", "zh-with-names", "ja", "ko", "ru", "es", "de", "de-keywords", "fr", "en",
         "en-die", "en-hyphens", "en-accents", "tool-name", "en-one-han-name", "empty",
         "zh-url", "th-file-name", "th-underscore", "es-glossary-words", "de-glossary-words",
         "en-glossary-words-1", "en-glossary-words-2", "en-glossary-words-3",
         "en-glossary-words-4", "en-glossary-words-5"],
)  # fmt: skip
def test_reads_foreign(pattern: str, foreign: bool) -> None:
    assert reads_foreign(pattern) is foreign


@pytest.mark.parametrize(
    ("pattern", "maybe"),
    [
        ("Quali incidenti sono aperti su PagerDuty?", True),
        ("streich das Standup am Donnerstag", True),
        ("Busca las páginas de Confluence que mencionan el despliegue", True),
        ("why did my pod die in the night", False),
        ("will I need an umbrella in Porto tomorrow", False),
        ("send a slack message", False),
        ("qqqzzz", False),
        ("", False),
        ("Pokémon stats", False),
        ("crème brûlée recipe", False),
    ],
    ids=[
        "it",
        "de-with-am",
        "es",
        "en-die",
        "en",
        "en-keywords",
        "nothing",
        "empty",
        "accents-1",
        "accents-2",
    ],
)
def test_may_be_foreign(pattern: str, maybe: bool) -> None:
    """A foreign function word that English ones do not outnumber is enough; what reads
    foreign may be foreign."""
    assert may_be_foreign(pattern) is maybe
    assert reads_foreign(pattern) <= may_be_foreign(pattern)
