"""Grading written answers by question: the marks log (log), deriving grades from it and the rubrics (mark), answer
groups (groups) and the page a TA grades on (server, with its templates/ and static/)."""
