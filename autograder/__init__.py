"""The A3 course kit's engine: content, grading, sandbox, reports (docs/ARCHITECTURE.md)."""

import sys

# jsonschema (imported by nbformat and nbgrader) imports rfc3987_syntax whenever it is installed (jupyter_events'
# extras bring it), only to check the "iri" string formats, which no schema the kit validates uses
# (tests/test_imports.py). Importing it builds a grammar: about 1.2 s in every process that reads a notebook (each
# command, the nbgrader fork server, every helper process). None here makes that optional import fail at once, as
# if the package were not installed; a process that imported it already keeps it.
sys.modules.setdefault("rfc3987_syntax", None)
