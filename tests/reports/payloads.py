"""Script payloads planted in a submission's written answers and outputs, for the tests that a reader's browser
runs none of them (test_feedback_reader_safe.py, test_formgrader.py). Not a test module."""

# Each payload marks the page's <body> when it runs; a page that stays unmarked ran none of them.
MARK = "document.body.setAttribute('data-pwned', '{n}')"
MARKDOWN_PAYLOADS = [
    "<script>{js}</script>",
    '<img src=x onerror="{js}">',
    '<svg onload="{js}"><circle r=5></circle></svg>',
    '<iframe srcdoc="<script>parent.{js}</script>"></iframe>',
    '<details open ontoggle="{js}">x</details>',
    '<a href="javascript:{js}" id=jslink>link</a>',
    "[md link](javascript:{js})",
    '<body onload="{js}">',
    "<style>@import 'x';</style><div style=\"background:url(javascript:{js})\">s</div>",
]
OUTPUT_PAYLOADS = [
    {"text/html": '<script>{js}</script><img src=x onerror="{js}">'},
    {"image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg' onload=\"{js}\"><circle r='4'/></svg>"},
    {"application/javascript": "{js}"},
    {"text/markdown": '<img src=x onerror="{js}">'},
]
