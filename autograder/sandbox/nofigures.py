"""Matplotlib backend of the grading kernel: figures are closed without being drawn.

Selected with MPLBACKEND=module://autograder.sandbox.nofigures by the worker. Autograding runs the notebooks in
quick mode, whose plots mean nothing, and drawing them (then base64-embedding them in the feedback
page) cost several seconds per student. Each cell that made figures gets one line of text instead, at
`plt.show()` or at the end of the cell, just where the inline backend would have shown them.
"""

from matplotlib.backend_bases import FigureManagerBase
from matplotlib.backends.backend_agg import FigureCanvasAgg

FigureCanvas = FigureCanvasAgg
FigureManager = FigureManagerBase
NOTE = "[{} not drawn: the autograder skips figures]"


def show(*args, **kwargs) -> None:
    """Close every open figure unrendered and print one line saying how many there were."""
    from matplotlib import pyplot as plt

    count = len(plt.get_fignums())
    if count:
        plt.close("all")
        print(NOTE.format("1 figure" if count == 1 else f"{count} figures"))


def _register():
    """Also close figures a cell leaves open without show(), as the inline backend would show them."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        shell.events.register("post_execute", show)  # registering twice is a no-op


_register()
