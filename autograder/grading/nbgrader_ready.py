"""Imported by the nbgrader fork server alone, last of `runner.FORKSERVER_PRELOAD`: nbgrader prepared once there
(`runner.prepare_nbgrader`), so that every `nbgrader autograde` process forked from it starts prepared."""

from autograder.grading import runner

runner.prepare_nbgrader()
