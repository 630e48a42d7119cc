"""The course content the instructor side makes and compares against: the release build, the data and
image generators, the reference implementations, the sample wrong answers and the model helpers."""
