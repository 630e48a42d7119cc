"""Tests of autograder.reports: test_<module>.py, or test_<module>_<part>.py for one part of a big module."""
