"""What people read after grading: feedback pages, the grade report, LMS exports and formgrader for TAs."""
